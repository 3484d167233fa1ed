package io.rdmablock.tools.replay;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.bench.FaultyDevice;
import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Replays traces exactly as written on 512- and 4096-byte LBA devices, verifying the trace's own bytes. */
@Timeout(120)
class TraceReplayTest {
    static final long VOLUME = 8 << 20;

    @TempDir
    Path dir;

    /**
     * A 512-byte-granular trace in the MSN format: 400 writes starting at sector 7 mod 8 (most not 4 KiB aligned),
     * 1..20 sectors long, each read back whole and with a neighbour overlap, over a 4 MiB area.
     */
    Path misalignedTrace() throws Exception {
        StringBuilder sb = new StringBuilder();
        SplittableRandom r = new SplittableRandom(17);
        double t = 0;
        for (int i = 0; i < 400; i++) {
            long sector = r.nextInt(1000) * 8L + (i % 3 == 0 ? 0 : 7);
            int sectors = 1 + r.nextInt(20);
            sb.append(String.format("%.3f 5 %d %d 0%n", t += 0.01, sector, sectors));
            sb.append(String.format("%.3f 5 %d %d 1%n", t += 0.01, sector, sectors));
            sb.append(String.format("%.3f 5 %d %d 1%n", t += 0.01, Math.max(0, sector - 3), sectors + 6));
        }
        return Files.writeString(dir.resolve("misaligned.trace"), sb.toString());
    }

    BlockDevice device(int lba) {
        Path f = dir.resolve("vol-" + lba + ".img");
        FileBlockDevice.createFile(f, VOLUME);
        return new FileBlockDevice(f, lba, false, 8);
    }

    TraceReplay.Result replay(BlockDevice dev, Path trace, int scale) throws Exception {
        Trace t = Trace.load(trace, null, Integer.MAX_VALUE).foldedInto(dev.capacityBytes());
        return new TraceReplay(dev, 8, 60_000_000_000L, scale).run(t);
    }

    @Test
    void shouldReplayA512ByteGranularTraceOnA512ByteVolumeAsIs() throws Exception {
        try (BlockDevice dev = device(512)) {
            TraceReplay.Result r = replay(dev, misalignedTrace(), 0);
            assertTrue(r.ok(), r.firstProblems().toString());
            assertEquals(0, r.misaligned());
            assertEquals(800, r.readsVerified());
            assertEquals(1200, r.requests());
        }
    }

    @Test
    void shouldCarryOutMisalignedRequestsExactlyOnA4096ByteVolume() throws Exception {
        Path trace = misalignedTrace();
        Trace t = Trace.load(trace, null, Integer.MAX_VALUE);
        assertTrue(t.misaligned(4096) > 600, "misaligned " + t.misaligned(4096));
        try (BlockDevice dev = device(4096)) {
            TraceReplay.Result r = replay(dev, trace, 0);
            assertTrue(r.ok(), r.firstProblems().toString());
            assertEquals(t.misaligned(4096), r.misaligned());
            assertEquals(800, r.readsVerified());
            // bytes moved are the trace's, not widened requests
            assertEquals(400, r.writes());
            long traceWritten = 0;
            for (int i = 0; i < t.count(); i++) {
                traceWritten += t.reads()[i] ? 0 : t.lengths()[i];
            }
            assertEquals(traceWritten, r.bytesWritten());
        }
    }

    @Test
    void shouldFailVerificationWhenAWriteIsAlteredInFlight() throws Exception {
        for (int lba : new int[] {512, 4096}) {
            try (BlockDevice dev = new FaultyDevice(device(lba), FaultyDevice.Fault.ALTER, 57, 0)) {
                TraceReplay.Result r = replay(dev, misalignedTrace(), 0);
                assertFalse(r.ok(), "lba " + lba + ": altered write not detected");
                assertTrue(r.mismatches() >= 1, "lba " + lba);
                assertTrue(r.firstProblems().getFirst().contains("differs from what the trace wrote"),
                        r.firstProblems().toString());
            }
        }
    }

    @Test
    void shouldRefuseRequestsThatAreNotWholeSectorsBeforeTheFirstIo() throws Exception {
        Path csv = Files.writeString(dir.resolve("odd.csv"), """
                Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
                128166372003061629,hm,1,Write,4096,4096,100
                128166372003061630,hm,1,Read,8192,1000,100
                """);
        try (BlockDevice dev = device(512)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> replay(dev, csv, 0));
            assertTrue(e.getMessage().contains("line 3") && e.getMessage().contains("multiple of 512"), e.getMessage());
        }
    }

    @Test
    void shouldReadMsrCambridgeCsv() throws Exception {
        Path csv = Files.writeString(dir.resolve("msr.csv"), """
                Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
                128166372003061629,hm,1,Write,3154132992,32768,9364
                128166372016382155,hm,1,Read,3154132992,32768,1500
                """);
        Trace t = Trace.load(csv, null, Integer.MAX_VALUE);
        assertEquals(TraceFormat.MSR, t.format());
        assertEquals(2, t.count());
        assertEquals(1, t.skipped());
        assertFalse(t.reads()[0]);
        assertEquals(3154132992L, t.offsets()[1]);
        assertEquals(32768, t.lengths()[1]);
        assertEquals((128166372016382155L - 128166372003061629L) * 100, t.timesNs()[1] - t.timesNs()[0]);
        try (BlockDevice dev = device(4096)) {
            Trace f = t.foldedInto(dev.capacityBytes());
            assertEquals(2, f.folded());
            assertEquals(0, f.offsets()[0] % 4096);
            assertTrue(new TraceReplay(dev, 4, 10_000_000_000L, 0).run(f).ok());
        }
    }

    @Test
    void shouldReadBlkparseOutputUsingQueuedEvents() throws Exception {
        Path bp = Files.writeString(dir.resolve("sda.blkparse"), """
                  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]
                  8,0    3        2     0.000001000   697  G  WS 223490 + 8 [kjournald]
                  8,0    3        3     0.000100000   697  D  WS 223490 + 8 [kjournald]
                  8,0    3        4     0.000500000   697  C  WS 223490 + 8 [0]
                  8,0    1        5     0.001000000  1201  Q   R 223493 + 3 [cat]
                  8,0    1        6     0.002000000  1201  Q  FWS 0 + 0 [sync]
                  8,0    1        7     0.003000000  1201  Q   D 1000 + 8 [fstrim]
                CPU0 (sda):
                 Reads Queued:           1,        1KiB\t Writes Queued:           1,        4KiB
                """);
        Trace t = Trace.load(bp, null, Integer.MAX_VALUE);
        assertEquals(TraceFormat.BLKPARSE, t.format());
        assertEquals(2, t.count(), "Q events with data, read or write");
        assertFalse(t.reads()[0]);
        assertEquals(223490L * 512, t.offsets()[0]);
        assertTrue(t.reads()[1]);
        assertEquals(1536, t.lengths()[1]);
        assertEquals(1_000_000L, t.timesNs()[1]);
        assertTrue(t.skipped() >= 6, "skipped " + t.skipped());
        try (BlockDevice dev = device(4096)) {
            TraceReplay.Result r = new TraceReplay(dev, 4, 10_000_000_000L, 0).run(t.foldedInto(dev.capacityBytes()));
            assertTrue(r.ok(), r.firstProblems().toString());
            assertEquals(2, r.misaligned());
        }
    }

    @Test
    void shouldHonourTraceTimestampsWhenScaled() throws Exception {
        Path trace = Files.writeString(dir.resolve("slow.trace"), """
                0.000 5 0 8 0
                200.000 5 0 8 1
                400.000 5 8 8 0
                """);
        try (BlockDevice dev = device(512)) {
            TraceReplay.Result r = replay(dev, trace, 100);
            assertTrue(r.ok());
            assertTrue(r.elapsedNs() >= 400_000_000L, "elapsed " + r.elapsedNs());
            // fio's replay_time_scale: a percentage of the trace's rate, 200 = twice as fast, 50 = half as fast
            TraceReplay.Result twice = replay(dev, trace, 200);
            assertTrue(twice.elapsedNs() >= 200_000_000L && twice.elapsedNs() < r.elapsedNs(),
                    "200%: " + twice.elapsedNs() + " vs 100%: " + r.elapsedNs());
            TraceReplay.Result half = replay(dev, trace, 50);
            assertTrue(half.elapsedNs() >= 800_000_000L, "50%: " + half.elapsedNs());
        }
    }

    @Test
    void shouldFailPlainlyForAMissingTrace() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Trace.load(dir.resolve("nope.trace"), null, 10));
        assertTrue(e.getMessage().endsWith("nope.trace: no such file"), e.getMessage());
    }
}
