package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** bench --verify against the last acknowledged write of each block (write generations, saved and loaded). */
@Timeout(120)
class BlockVerifyStateTest {
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 8 << 20);
    }

    static JobSpec spec(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of("v", m);
    }

    BenchRun.Outcome run(Supplier<BlockDevice> devs, JobSpec s) throws Exception {
        return BenchRun.run(new ArrayList<>(List.of(s)), null, devs, null, BenchRun.Progress.none(), dir);
    }

    Supplier<BlockDevice> faulty(FaultyDevice.Fault f, int nth, FaultyDevice[] made) {
        return () -> made[0] = new FaultyDevice(new FileBlockDevice(file, 512, false, 8), f, nth, 0);
    }

    @Test
    void shouldPassWhenEveryWriteLands() throws Exception {
        FaultyDevice[] d = new FaultyDevice[1];
        BenchRun.Outcome o = run(faulty(FaultyDevice.Fault.NONE, 0, d), spec("rw", "randwrite", "size", "1m",
                "loops", "2", "verify", "crc32c", "iodepth", "4"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(0, e.error(), e.messages().toString());
        assertEquals(256 - e.neverWritten(), e.verifiedBlocks());
    }

    @Test
    void shouldFailWhenOneAcknowledgedWriteIsDropped() throws Exception {
        // the second pass rewrites every block; write 300 (of the second pass) is acknowledged but never written,
        // so its block still holds the valid, older block of the first pass
        FaultyDevice[] d = new FaultyDevice[1];
        BenchRun.Outcome o = run(faulty(FaultyDevice.Fault.DROP, 300, d), spec("rw", "write", "size", "1m",
                "loops", "2", "verify", "crc32c", "iodepth", "4"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(84, e.error());
        assertEquals(1, o.jobs().getFirst().verifyErrors.get(), e.messages().toString());
        String m = e.messages().getFirst();
        assertTrue(m.contains("lost write at offset " + d[0].faultedOffset), m);
        java.util.regex.Matcher g = java.util.regex.Pattern.compile("holds generation (\\d+), the last acknowledged"
                + " write was generation (\\d+)").matcher(m);
        assertTrue(g.find(), m);
        assertTrue(Integer.parseInt(g.group(1)) <= 256 && Integer.parseInt(g.group(2)) > 256, m); // pass 1 vs pass 2
    }

    @Test
    void shouldCatchALostWriteAcrossARestartFromTheSavedState() throws Exception {
        FaultyDevice[] d = new FaultyDevice[1];
        JobSpec first = spec("rw", "randwrite", "size", "1m", "verify", "md5", "do_verify", "0",
                "verify_state_save", "1", "randseed", "1");
        assertEquals(0, run(faulty(FaultyDevice.Fault.NONE, 0, d), first).entries().getFirst().error());
        Path state = dir.resolve("local-v-0-verify.state");
        assertTrue(Files.size(state) > BlockVerifyState.HEADER_BYTES);
        // "after a restart": a second writer (same offsets: same randseed) continues the generations from the state
        // and loses one acknowledged rewrite
        JobSpec second = spec("rw", "randwrite", "size", "1m", "verify", "md5", "do_verify", "0",
                "verify_state_load", "1", "verify_state_save", "1", "randseed", "1");
        run(faulty(FaultyDevice.Fault.DROP, 100, d), second);
        JobSpec check = spec("rw", "read", "size", "1m", "verify", "md5", "verify_state_load", "1");
        BenchRun.Outcome o = run(faulty(FaultyDevice.Fault.NONE, 0, d), check);
        FioReport.Entry e = o.entries().getFirst();
        assertTrue(e.neverWritten() > 0 && e.neverWritten() < 256, "never written " + e.neverWritten());
        assertEquals(256 - e.neverWritten() - 1, e.verifiedBlocks());
        assertEquals(84, e.error(), e.messages().toString());
        assertTrue(e.messages().getFirst().contains("lost write"), e.messages().toString());
    }

    @Test
    void shouldRefuseAStateOfAnotherRegion() throws Exception {
        FaultyDevice[] d = new FaultyDevice[1];
        run(faulty(FaultyDevice.Fault.NONE, 0, d), spec("rw", "write", "size", "1m", "verify", "crc32c",
                "verify_state_save", "1"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(faulty(
                FaultyDevice.Fault.NONE, 0, d), spec("rw", "read", "size", "2m", "verify", "crc32c",
                "verify_state_load", "1")));
        assertTrue(e.getMessage().contains("blocks=256 in the file, the job has blocks=512"), e.getMessage());
    }
}
