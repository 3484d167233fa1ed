package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Issue 41's pattern options: parsing with fio's meaning, and bad values refused before any I/O. */
@Timeout(60)
class PatternOptionsTest {
    @TempDir
    Path dir;

    record Run(int rc, String err) {
    }

    Run bench(String... args) {
        PrintStream oldErr = System.err;
        ByteArrayOutputStream warn = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        try {
            System.setErr(new PrintStream(warn, true, StandardCharsets.UTF_8));
            CommandLine cl = BenchCommand.commandLine();
            cl.setErr(new PrintWriter(err, true));
            return new Run(cl.execute(args), err + warn.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(oldErr);
        }
    }

    @Test
    void shouldParseTheOffsetModifierAsFio() {
        PatternOptions p = PatternFioTest.spec("a", "rw=write:-8k").pattern;
        assertEquals(-8192, p.seqAdd);
        assertEquals(1, p.seqNr);
        PatternOptions r = PatternFioTest.spec("b", "rw=randread:8", "rw_sequencer=identical").pattern;
        assertEquals(8, r.seqNr);
        assertTrue(r.identical && r.modified());
        assertEquals(JobSpec.Rw.RANDREAD, PatternFioTest.spec("c", "readwrite=randread:8").rw);
        assertFalse(PatternFioTest.spec("d", "rw=read").pattern.modified());
        PatternOptions f = PatternFioTest.spec("e", "flow=3", "flow_id=7", "flow_sleep=100", "fill_fs=1",
                "rate_process=poisson", "io_submit_mode=offload").pattern;
        assertEquals(3, f.flow);
        assertEquals(7, f.flowId);
        assertEquals(100_000, f.flowSleepNs);
        assertTrue(f.fillDevice && f.poisson && f.offload);
    }

    @Test
    void shouldRefuseABadValueBeforeAnyIoNamingTheOptionAndTheJob() throws Exception {
        Path vol = dir.resolve("v.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        Map<String, String> bad = Map.of(
                "rw=randread:0", "invalid rw: job 'bad': rw=randread:0: the I/Os per random offset after ':' must be"
                        + " an integer, min=1, max=4294967295",
                "rw=read:abc", "invalid rw: job 'bad': rw=read:abc: the offset modifier after ':' must be a size",
                "rw=sideways:8k", "invalid rw: job 'bad': 'sideways:8k', allowed=read|write|randread",
                "rw_sequencer=random", "invalid rw_sequencer: 'random', allowed=sequential|identical (job 'bad')",
                "rate_process=burst", "invalid rate_process: 'burst', allowed=linear|poisson (job 'bad')",
                "io_submit_mode=async", "invalid io_submit_mode: 'async', allowed=inline|offload (job 'bad')",
                "flow=1001", "invalid flow: flow=1001, min=0, max=1000 (job 'bad')",
                "flow_id=x", "invalid flow_id: 'x' is not an integer (job 'bad')",
                "fill_device=maybe", "invalid fill_device: 'maybe', want 0 or 1 (job 'bad')");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            Path job = Files.writeString(dir.resolve("j.fio"), """
                    [global]
                    ioengine=rdmablock
                    bs=4k
                    [w]
                    rw=write
                    size=64k
                    [bad]
                    rw=write
                    %s
                    """.formatted(e.getKey()));
            Run r = bench("--file", vol.toString(), job.toString());
            assertEquals(2, r.rc(), e.getKey() + ": " + r.err());
            assertTrue(r.err().contains(e.getValue()), e.getKey() + ": " + r.err());
            byte[] data = Files.readAllBytes(vol);
            for (byte b : data) {
                assertEquals(0, b, e.getKey() + ": the first job wrote before the bad value was found");
            }
        }
    }

    @Test
    void shouldRefuseAMinimumRateAboveTheRateCapBeforeAnyIo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PatternFioTest.spec("m", "rate=1m", "rate_min=2m"));
        assertEquals("invalid rate_min: job 'm': rate_min=2097152 exceeds rate=1048576 (read), max=1048576",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PatternFioTest.spec("n", "rate_iops=,100",
                "rate_iops_min=,200"));
        assertTrue(e.getMessage().startsWith("invalid rate_iops_min: job 'n': rate_iops_min=200 exceeds rate_iops=100"
                + " (write)"), e.getMessage());
        PatternOptions p = PatternFioTest.spec("o", "ratemin=1m,2m", "ratecycle=250").pattern;
        assertArrayEquals(new long[] {1 << 20, 2 << 20}, p.minRateBytes);
        assertEquals(250_000_000L, p.rateCycleNs);
    }
}
