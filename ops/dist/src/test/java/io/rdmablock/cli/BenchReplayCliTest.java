package io.rdmablock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code rdmablock bench} and {@code rdmablock replay} through the one CLI: help texts, exit codes, alignment. */
@Timeout(120)
class BenchReplayCliTest {
    @TempDir
    Path dir;

    @Test
    void shouldExitTwoWithAPlainMessageForAMissingTraceOrJobFile() {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        CliRun r = CliRun.of("replay", "--file", vol.toString(), "--trace", dir.resolve("none.trace").toString());
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("rdmablock: invalid trace: ") && r.err().contains("none.trace: no such file"),
                r.err());
        assertFalse(r.err().contains("Exception"), r.err());
        CliRun b = CliRun.of("bench", "--file", vol.toString(), dir.resolve("none.fio").toString());
        assertEquals(ExitCodes.BAD_INPUT, b.exitCode(), b.err());
        assertTrue(b.err().contains("invalid JOBFILE: ") && b.err().contains("none.fio: no such file"), b.err());
        assertFalse(b.err().contains("Exception"), b.err());
    }

    @Test
    void shouldNameTheEngineLineTargetsAndTraceFormatsInHelp() {
        String bench = CliRun.of("bench", "--help").out();
        assertTrue(bench.contains("ioengine=rdmablock") && bench.contains("--volume NAME") && bench.contains("filename"),
                bench);
        String replay = CliRun.of("replay", "--help").out();
        assertTrue(replay.contains("msn") && replay.contains("MSR Cambridge CSV") && replay.contains("blkparse")
                && replay.contains("--replay-time-scale"), replay);
    }

    @Test
    void shouldReplayA512ByteGranularTraceOnA4096ByteVolumeSayingHowManyRequestsWereMisaligned() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 4 << 20);
        Path trace = Files.writeString(dir.resolve("t.trace"), """
                0.0 5 7 3 0
                1.0 5 7 3 1
                2.0 5 0 16 1
                3.0 5 16 8 0
                """);
        CliRun r = CliRun.of("replay", "--file", vol.toString(), "--lba-size", "4096", "--direct=false",
                "--trace", trace.toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("replay: 2 requests not aligned to the 4096-byte LBA size, carried out with"
                + " read-modify-write of their partial blocks (first: line 1, offset=3584 length=1536)"), r.out());
        assertTrue(r.out().contains("verification OK: 2 reads matched the trace's bytes"), r.out());
    }
}
