package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** verify=meta, verify_pattern (fio's syntax, compared with fio's own bytes), verify_interval, verify_offset. */
@Timeout(60)
class MetaVerifyTest {
    static final Path FIO = Path.of("/usr/bin/fio");
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 1 << 20);
    }

    static JobSpec spec(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of(name, m);
    }

    BenchRun.Outcome run(JobSpec... s) throws Exception {
        return BenchRun.run(new ArrayList<>(List.of(s)), null, () -> new FileBlockDevice(file, 512, false, 8), null,
                BenchRun.Progress.none(), dir);
    }

    @Test
    void shouldFillThePatternByteForByteAsFioDoes() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(FIO), "fio is not installed at /usr/bin/fio: nothing to compare with");
        for (String pat : List.of("0xff%o\"abcd\"-12", "0xdeadbeef", "%o", "305419896", "0xabc\"xy\"0")) {
            Path f = dir.resolve("fio.img");
            Files.deleteIfExists(f);
            Process p = new ProcessBuilder(FIO.toString(), "--name=p", "--ioengine=psync", "--filename=" + f,
                    "--size=16k", "--bs=4k", "--rw=write", "--verify=pattern", "--verify_pattern=" + pat,
                    "--do_verify=0", "--output-format=terse").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            byte[] fio = Files.readAllBytes(f);
            assertEquals(16384, fio.length);
            VerifyPattern vp = VerifyPattern.parse(pat);
            try (Arena a = Arena.ofConfined()) {
                for (int off = 0; off < 16384; off += 4096) {
                    MemorySegment s = a.allocate(4096);
                    vp.fill(s, off, 0);
                    byte[] mine = s.toArray(ValueLayout.JAVA_BYTE);
                    byte[] theirs = java.util.Arrays.copyOfRange(fio, off, off + 4096);
                    assertArrayEquals(theirs, mine, "pattern " + pat + " block at " + off);
                }
            }
        }
    }

    @Test
    void shouldRefuseBadPatternsNamingTheOption() {
        for (String bad : List.of("0x", "\"abc", "%x", "zz", "99999999999")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> spec("j", "verify", "meta", "verify_pattern", bad));
            assertTrue(e.getMessage().startsWith("invalid verify_pattern: '" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void shouldRefuseIntervalAndOffsetOutsideTheBlockNamingJobAndBounds() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> spec("j1", "bs", "4k", "verify", "crc32c", "verify_interval", "1000"));
        assertTrue(e.getMessage().contains("verify_interval: 1000 in job 'j1': min=64, max=bs=4096"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> spec("j2", "bs", "4k", "verify", "meta", "verify_interval", "512", "verify_offset", "500"));
        assertTrue(e.getMessage().contains("verify_offset: 500 in job 'j2': min=0, max=448"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("j3", "verify_interval", "512"));
        assertTrue(e.getMessage().contains("job 'j3'"), e.getMessage());
    }

    @Test
    void shouldReportACorruptByteWithItsOffset() {
        JobSpec s = spec("j", "bs", "4k", "verify", "meta", "verify_pattern", "%o", "verify_interval", "512",
                "verify_offset", "16");
        BlockVerifier v = new BlockVerifier(s, 1);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment b = a.allocate(4096);
            v.fill(b, 8192, 7, 3);
            assertNull(v.check(b, 8192, 1));
            assertEquals(3, v.lastGeneration());
            b.set(ValueLayout.JAVA_BYTE, 1500, (byte) (b.get(ValueLayout.JAVA_BYTE, 1500) ^ 0x40));
            String m = v.check(b, 8192, 1);
            assertNotNull(m);
            assertTrue(m.contains("bad pattern at offset " + (8192 + 1500)), m);
            b.set(ValueLayout.JAVA_BYTE, 1500, (byte) (b.get(ValueLayout.JAVA_BYTE, 1500) ^ 0x40));
            b.set(ValueLayout.JAVA_BYTE, 2048 + 16 + 9, (byte) 0x55); // the 5th unit's header: its offset field
            m = v.check(b, 8192, 1);
            assertTrue(m.contains("bad header crc at offset " + (8192 + 2048)), m);
        }
    }

    @Test
    void shouldFindABlockWrittenByAnotherJob() {
        JobSpec s = spec("j", "bs", "4k", "verify", "meta");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment b = a.allocate(4096);
            new BlockVerifier(s, 2).fill(b, 4096, 1, 9);
            String m = new BlockVerifier(s, 1).check(b, 4096, 1);
            assertNotNull(m);
            assertTrue(m.contains("at offset 4096: written by job 2 (generation 9), want job 1"), m);
            assertNull(new BlockVerifier(s, 1).check(b, 4096, -1));
        }
    }

    @Test
    void shouldFindAMisplacedBlockAndACorruptByteOnTheDevice() throws Exception {
        JobSpec w = spec("w", "rw", "write", "size", "64k", "bs", "4k", "verify", "meta", "verify_pattern",
                "0xdeadbeef%o", "verify_interval", "1k", "do_verify", "0", "verify_state_save", "1");
        assertEquals(0, run(w).entries().getFirst().error());
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            byte[] blk = new byte[4096];
            f.seek(0);
            f.readFully(blk);
            f.seek(8192);
            f.write(blk);               // block 2 now holds block 0 (a misplaced write)
            f.seek(40960 + 3000);
            int x = f.read();
            f.seek(40960 + 3000);
            f.write(x ^ 1);             // one corrupt byte in block 10
        }
        JobSpec r = spec("w", "rw", "read", "size", "64k", "bs", "4k", "verify", "meta", "verify_pattern",
                "0xdeadbeef%o", "verify_interval", "1k", "verify_state_load", "1");
        FioReport.Entry e = run(r).entries().getFirst();
        assertEquals(84, e.error());
        String all = String.join("\n", e.messages());
        assertTrue(all.contains("bad header at offset 8192: holds offset 0 length 1024"), all);
        assertTrue(all.contains("bad pattern at offset " + (40960 + 3000)), all);
        assertEquals(14, e.verifiedBlocks(), all);
    }

    @Test
    void shouldPassWithIntervalAndOffsetForEveryChecksum() throws Exception {
        for (String kind : List.of("crc32c", "md5", "meta", "pattern")) {
            JobSpec s = spec("v-" + kind, "rw", "randwrite", "size", "128k", "bs", "8k", "verify", kind,
                    "verify_interval", kind.equals("pattern") ? "1k" : "2k", "iodepth", "4",
                    "verify_pattern", "\"rdma\"%o");
            FioReport.Entry e = run(s).entries().getFirst();
            assertEquals(0, e.error(), kind + ": " + e.messages());
            assertTrue(e.verifiedBlocks() > 0, kind);
        }
    }
}
