package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs jobs end to end on a {@link FileBlockDevice}. */
@Timeout(120)
class BenchRunTest {
    static final long SIZE = 16 << 20;

    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, SIZE);
    }

    Supplier<BlockDevice> devices() {
        return () -> new FileBlockDevice(file, 512, false, 8);
    }

    static JobSpec spec(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of("t", m);
    }

    BenchRun.Outcome run(JobSpec... specs) throws Exception {
        return BenchRun.run(List.of(specs), null, devices(), null, BenchRun.Progress.none());
    }

    @Test
    void shouldReadTheRegionExactlyOnceWhenSizeBased() throws Exception {
        BenchRun.Outcome o = run(spec("rw", "read", "bs", "4k", "size", "1m", "iodepth", "4"));
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(256, e.read().ios);
        assertEquals(1 << 20, e.read().bytes);
        assertEquals(0, e.write().ios);
        assertFalse(o.failed());
    }

    @Test
    void shouldStopTimeBasedJobsAfterTheRuntime() throws Exception {
        long t0 = System.nanoTime();
        BenchRun.Outcome o = run(spec("rw", "randread", "runtime", "1", "time_based", "1", "iodepth", "8"));
        long took = System.nanoTime() - t0;
        FioReport.Entry e = o.entries().getFirst();
        assertTrue(e.read().ios > 0);
        assertTrue(e.runtimeNs() >= 900_000_000L && e.runtimeNs() < 3_000_000_000L, "runtime " + e.runtimeNs());
        assertTrue(took < 10_000_000_000L, "took " + took);
    }

    @Test
    void shouldRunAtTheLargestIodepthWithinAModestHeap() throws Exception {
        // one set of latency histograms per in-flight slot: 4096 slots of plain 600-s histograms took ~12 GiB
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long before = rt.totalMemory() - rt.freeMemory();
        BenchRun.Outcome o = run(spec("rw", "randread", "runtime", "1", "time_based", "1", "iodepth", "4096"));
        long after = rt.totalMemory() - rt.freeMemory();
        assertTrue(o.entries().getFirst().read().ios > 0);
        assertFalse(o.failed());
        assertTrue(after - before < 1L << 30, "heap grew by " + ((after - before) >> 20) + " MiB at iodepth 4096");
    }

    @Test
    void shouldMixReadsAndWritesByRwmixread() throws Exception {
        BenchRun.Outcome o = run(spec("rw", "randrw", "rwmixread", "75", "size", "8m", "iodepth", "4"));
        FioReport.Entry e = o.entries().getFirst();
        double readShare = (double) e.read().ios / (e.read().ios + e.write().ios);
        assertEquals(0.75, readShare, 0.05);
    }

    @Test
    void shouldUseEveryBlockSizeOfBssplit() throws Exception {
        BenchRun.Outcome o = run(spec("rw", "randread", "bssplit", "4k/50:64k/50", "size", "16m", "iodepth", "2"));
        FioReport.Entry e = o.entries().getFirst();
        double avg = (double) e.read().bytes / e.read().ios;
        assertTrue(avg > 20_000 && avg < 50_000, "average block " + avg);
    }

    @Test
    void shouldVerifyWithEachMethod() throws Exception {
        for (String v : new String[] {"crc32c", "md5", "pattern"}) {
            BenchRun.Outcome o = run(spec("rw", "randwrite", "verify", v, "size", "2m", "iodepth", "8"));
            Job j = o.jobs().getFirst();
            assertEquals(0, j.errorCode(), v + ": " + j.messages);
            assertTrue(j.verifiedBlocks.sum() > 0, v);
        }
    }

    @Test
    void shouldDetectCorruptionWhenVerifyingEarlierWrites() throws Exception {
        BenchRun.Outcome w = run(spec("rw", "write", "verify", "crc32c", "size", "1m", "iodepth", "4"));
        assertEquals(0, w.jobs().getFirst().errorCode());
        BenchRun.Outcome clean = run(spec("rw", "read", "verify", "crc32c", "size", "1m", "iodepth", "4"));
        assertEquals(0, clean.jobs().getFirst().errorCode(), clean.jobs().getFirst().messages.toString());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 8192 + 100);
        }
        BenchRun.Outcome bad = run(spec("rw", "read", "verify", "crc32c", "size", "1m", "iodepth", "4"));
        Job j = bad.jobs().getFirst();
        assertEquals(84, j.errorCode());
        assertEquals(1, j.verifyErrors.get());
        assertTrue(j.messages.getFirst().contains("offset 8192"), j.messages.toString());
        assertTrue(bad.failed());
    }

    @Test
    void shouldRunOneDeviceAndStatsPerClone() throws Exception {
        BenchRun.Outcome o = run(spec("rw", "randread", "numjobs", "3", "size", "1m"));
        assertEquals(3, o.entries().size());
        JobSpec g = spec("rw", "randread", "numjobs", "3", "size", "1m", "group_reporting", "1");
        BenchRun.Outcome grouped = run(g);
        assertEquals(1, grouped.entries().size());
        assertEquals(3 * 256, grouped.entries().getFirst().read().ios);
    }

    @Test
    void shouldReplayATraceFoldingOffsetsIntoTheDevice() throws Exception {
        Path trace = dir.resolve("t.trace");
        Files.writeString(trace, """
                0.000 5 174224064 16 1
                0.221 5 162947904 16 0
                0.594 5 0 32 1
                0.958 5 32767 16 0
                """);
        BenchRun.Outcome o = BenchRun.run(List.of(spec("iodepth", "4")),
                new BenchRun.Replay(trace, true, 100), devices(), null, BenchRun.Progress.none());
        FioReport.Entry e = o.entries().getFirst();
        assertEquals(2, e.read().ios);
        assertEquals(2, e.write().ios);
        assertEquals(8192 + 16384, e.read().bytes);
        assertFalse(o.failed());
    }

    @Test
    void shouldWriteFioJsonFieldNames() throws Exception {
        BenchRun.Outcome o = run(spec("rw", "randrw", "size", "1m", "percentile_list", "50:99"));
        String json = FioReport.json(o.entries(), o.cpu(), "vol");
        for (String field : new String[] {"\"jobs\"", "\"jobname\"", "\"read\"", "\"write\"", "\"iops\"", "\"bw\"",
                "\"bw_bytes\"", "\"lat_ns\"", "\"clat_ns\"", "\"slat_ns\"", "\"percentile\"", "\"50.000000\"",
                "\"99.000000\"", "\"total_ios\"", "\"job_runtime\"", "\"error\""}) {
            assertTrue(json.contains(field), field + " missing in\n" + json);
        }
        assertTrue(FioReport.human(o.entries(), o.cpu()).contains("Run status group 0"));
    }

    @Test
    void shouldReportAnIoErrorAndStop() throws IOException, InterruptedException {
        Supplier<BlockDevice> closed = () -> {
            BlockDevice d = new FileBlockDevice(file, 512, false, 2);
            d.close();
            return d;
        };
        BenchRun.Outcome o = BenchRun.run(List.of(spec("rw", "read", "size", "1m")), null, closed, null,
                BenchRun.Progress.none());
        assertEquals(5, o.entries().getFirst().error());
    }
}
