package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Resync, rebuild and verify across node processes (soft provider, loopback; docs/resync.md): a stale copy catches up
 * from the primary's persisted bitmap (only what it missed), a resync whose primary dies restarts from the new primary
 * without the target ever being promoted, a lost copy is rebuilt on another node, a drained node is emptied, and
 * {@code volume verify} finds the copies identical afterwards. Every wait is bounded.
 */
class ResyncE2eTest {
    private static final long SIZE = 64L << 20;
    private static final long REGION = 64 << 10;

    @TempDir
    Path dir;

    private static int primary(Volume v) {
        return NodeCluster.index(v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .orElseThrow().nodeId());
    }

    private static List<Integer> secondaries(Volume v) {
        return v.copies().stream().filter(c -> c.role() == CopyRole.SECONDARY)
                .map(c -> NodeCluster.index(c.nodeId())).toList();
    }

    private static boolean allInSync(Volume v) {
        return v.state() == VolumeState.READY && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC);
    }

    private static CopyState stateOf(Volume v, int k) {
        return v.copies().stream().filter(c -> c.nodeId().equals(NodeCluster.nodeId(k))).map(VolumeCopy::state)
                .findFirst().orElse(null);
    }

    private static DeviceOptions options() {
        return DeviceOptions.defaults().providerMode("soft").ioQueues(2).pathTimeoutMs(1_000)
                .failoverTimeoutMs(30_000);
    }

    /** Writes one full 64 KiB region at every {@code stride}-th region, stamped with {@code gen}; returns bytes. */
    private static long writeRegions(BlockDevice dev, int stride, long gen) {
        MemorySegment buf = dev.allocateBuffer(REGION);
        try {
            long regions = SIZE / REGION;
            long written = 0;
            for (long r = 0; r < regions; r += stride) {
                for (int w = 0; w < REGION / 8; w++) {
                    buf.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, w, gen * 1_000_003L + r);
                }
                dev.writeSync(r * REGION, buf, false);
                written += REGION;
            }
            dev.flushSync();
            return written;
        } finally {
            dev.freeBuffer(buf);
        }
    }

    /** Reads the regions back and checks their stamps; returns the first mismatch or null. */
    private static String checkRegions(BlockDevice dev, int stride, long gen) {
        MemorySegment buf = dev.allocateBuffer(REGION);
        try {
            for (long r = 0; r < SIZE / REGION; r += stride) {
                dev.readSync(r * REGION, buf);
                for (int w = 0; w < REGION / 8; w += 511) {
                    long got = buf.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, w);
                    if (got != gen * 1_000_003L + r) {
                        return "region " + r + " word " + w + ": " + got + ", want " + (gen * 1_000_003L + r);
                    }
                }
            }
            return null;
        } finally {
            dev.freeBuffer(buf);
        }
    }

    /** Runs {@code volume verify} through the management plane (bounded); returns the finished report. */
    private static VerifyReport verify(NodeCluster cluster, String name, int seconds) throws InterruptedException {
        cluster.client().startVerify(name);
        return Await.value(() -> cluster.client().verifyStatus(name),
                r -> r.state() == VerifyState.DONE || r.state() == VerifyState.FAILED, Duration.ofSeconds(seconds),
                "verify of " + name + " finished (DONE or FAILED)");
    }

    private static void assertIdentical(NodeCluster cluster, String name, int copies) throws InterruptedException {
        VerifyReport r = verify(cluster, name, 120);
        assertEquals(VerifyState.DONE, r.state(), () -> "verify: " + r + cluster.tails(30));
        assertEquals(0, r.differing(), () -> "copies differ: " + r + cluster.tails(30));
        assertEquals(copies, r.nodeIds().size(), () -> "copies compared: " + r);
        assertEquals(SIZE, r.checkedBytes(), () -> "bytes compared: " + r);
    }

    /**
     * A secondary is stopped, 5% of the volume is written, the primary is restarted (no host connected, so nothing
     * reports it and it stays primary): its bitmap must survive, so when the secondary returns the resync copies about
     * that 5% and not the volume; then verify finds every copy identical.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aReturningSecondaryGetsOnlyWhatItMissedEvenAcrossAPrimaryRestart() throws Exception {
        // a lease longer than the primary's restart: with no host on the volume its secondary reports the silent
        // primary (docs/failover.md, "a secondary's report"), so a 2 s lease would fail the restarting primary over,
        // and this test is about its bitmap surviving the restart, not about the failover
        try (NodeCluster cluster = new NodeCluster(dir, 3, "soft", List.of(), NodeCluster.Placement.loopback(), 3_000,
                60_000)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("rs", SIZE, 3).withAnyHost());
            Volume v = cluster.awaitVolume("rs", ResyncE2eTest::allInSync, 120, "3 in-sync copies");
            int p = primary(v);
            int victim = secondaries(v).get(0);
            cluster.stop(victim);
            long dirty;
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rs", null, options())) {
                dirty = writeRegions(dev, 20, 1); // every 20th region: 5% of the volume
            }
            Volume stale = cluster.awaitVolume("rs", x -> stateOf(x, victim) == CopyState.STALE, 30, "victim stale");
            assertEquals(p, primary(stale));
            cluster.stop(p);
            cluster.start(p); // the bitmap is read back from its file
            cluster.awaitNode(p, io.rdmablock.mgmt.client.NodeState.UP, 60);
            long t0 = System.nanoTime();
            cluster.start(victim);
            Volume done = cluster.awaitVolume("rs", ResyncE2eTest::allInSync, 120, "victim resynced");
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertEquals(p, primary(done), () -> "the primary must not change: " + done);
            double copied = cluster.metric(p, "rdmablock_node_resync_bytes_total"); // counts since p's restart
            assertTrue(copied >= dirty, () -> "resync copied " + copied + " bytes, dirty " + dirty + cluster.tails(30));
            assertTrue(copied <= 2 * dirty, () -> "resync copied " + copied + " bytes for " + dirty
                    + " dirty: the bitmap did not survive the primary's restart" + cluster.tails(30));
            assertIdentical(cluster, "rs", 3);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rs", null, options())) {
                assertNull(checkRegions(dev, 20, 1));
            }
            System.out.printf("resync e2e: dirty %.1f MiB (%.1f%% of the volume), resync copied %.1f MiB (%.2fx), "
                    + "%.1f s from the secondary's restart to in_sync%n",
                    dirty / 1048576.0, 100.0 * dirty / SIZE, copied / 1048576.0, copied / dirty, seconds);
        }
    }

    /**
     * The primary is killed while a secondary is being resynced (throttled to 4 MiB/s so it takes seconds; R=3,
     * minInSync 1): the syncing copy is not promoted, the new primary resyncs it again, writes under load go on through the failover and
     * none acknowledged is lost; once the old primary returns and is resynced too, verify finds three identical copies.
     */
    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void aResyncWhosePrimaryDiesRestartsFromTheNewPrimary() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 3, List.of("--resync-mib-s", "4"))) {
            // minInSync 1: with the primary killed and the resync target not yet in sync, the new primary is the only
            // copy in sync; with the default 2 writes would (rightly) be refused Namespace Not Ready until it is
            cluster.client().createVolume(new CreateVolumeRequest("rk", SIZE, 4096, 3, 1, List.of("*")));
            Volume v = cluster.awaitVolume("rk", ResyncE2eTest::allInSync, 120, "3 in-sync copies");
            int p = primary(v);
            int target = secondaries(v).get(0);
            int other = secondaries(v).get(1);
            cluster.stop(target);
            AckedWrites model = new AckedWrites(SIZE, 8);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rk", null, options())) {
                // dirty most regions while the target is out (bounded by count and time)
                long s0 = System.nanoTime();
                model.run(dev, () -> model.ackedCount.get() >= 3_000
                        || System.nanoTime() - s0 > TimeUnit.SECONDS.toNanos(40), 1_000);
                assertNull(model.firstFailure());
                cluster.start(target);
                cluster.awaitVolume("rk", x -> stateOf(x, target) == CopyState.SYNCING, 60, "target syncing");
                long[] ackedAtKill = {0};
                Thread killer = new Thread(() -> {
                    try {
                        Thread.sleep(500); // the primary dies half a second into the resync: the scenario
                        ackedAtKill[0] = model.ackedCount.get();
                        cluster.kill(p);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "killer");
                killer.start();
                long s1 = System.nanoTime();
                model.run(dev, () -> (ackedAtKill[0] > 0 && model.ackedCount.get() > ackedAtKill[0] + 300)
                        || System.nanoTime() - s1 > TimeUnit.SECONDS.toNanos(90), 1_000_000);
                killer.join(60_000);
                assertNull(model.firstFailure(), () -> "a write failed through the failover" + cluster.tails(40));
                Volume after = cluster.client().getVolume("rk");
                assertEquals(other, primary(after), () -> "the in-sync copy must be promoted, never the resync "
                        + "target: " + after + cluster.tails(40));
                Volume synced = cluster.awaitVolume("rk", x -> stateOf(x, target) == CopyState.IN_SYNC, 120,
                        "target resynced from the new primary");
                assertNotEquals(target, primary(synced));
                dev.flushSync();
                assertNull(model.checkDevice(dev), () -> "through the device" + cluster.tails(40));
            }
            cluster.start(p); // the old primary returns as a stale secondary and is resynced in full
            cluster.awaitVolume("rk", ResyncE2eTest::allInSync, 180, "old primary resynced");
            assertIdentical(cluster, "rk", 3);
            System.out.printf("resync e2e: primary n%d killed mid-resync of n%d; n%d promoted, resync restarted and "
                    + "finished; %d acknowledged writes, none lost; 3 copies identical%n", p, target, other,
                    model.ackedCount.get());
        }
    }

    /**
     * A node down past the rebuild time (3 s here) loses its copy: a replacement on the third node is resynced in
     * full, the old copy leaves the record, and when its node returns it deletes the copy's data.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aCopyWhoseNodeStaysDownIsRebuiltElsewhere() throws Exception {
        try (NodeCluster cluster = NodeCluster.withRebuildAfter(dir, 3, List.of(), 3_000)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("rb", SIZE, 2).withAnyHost());
            Volume v = cluster.awaitVolume("rb", ResyncE2eTest::allInSync, 120, "2 in-sync copies");
            int p = primary(v);
            int lost = secondaries(v).get(0);
            int spare = 6 - p - lost;
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rb", null, options())) {
                writeRegions(dev, 4, 7);
                cluster.kill(lost);
                writeRegions(dev, 8, 8);
            }
            Volume rebuilt = cluster.awaitVolume("rb", x -> allInSync(x) && stateOf(x, lost) == null
                    && stateOf(x, spare) == CopyState.IN_SYNC, 120, "rebuilt on n" + spare);
            assertEquals(2, rebuilt.copies().size(), rebuilt::toString);
            assertIdentical(cluster, "rb", 2);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rb", null, options())) {
                assertNull(checkRegions(dev, 8, 8));
            }
            Path file = cluster.volumeFile(lost, v.id());
            cluster.start(lost);
            try {
                Await.until(() -> !Files.exists(file), Duration.ofSeconds(60),
                        "the returning node deleted its old copy " + file);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + cluster.tails(30), e);
            }
            System.out.printf("resync e2e: n%d down past 3 s, copy rebuilt on n%d, verified identical; the old copy "
                    + "was deleted when n%d returned%n", lost, spare, lost);
        }
    }

    /** Draining the primary's node moves every copy off it: a replacement elsewhere, then a switchover. */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void drainMovesEveryCopyOffTheNode() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 3, List.of())) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("rd", SIZE, 2).withAnyHost());
            Volume v = cluster.awaitVolume("rd", ResyncE2eTest::allInSync, 120, "2 in-sync copies");
            int p = primary(v);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rd", null, options())) {
                writeRegions(dev, 4, 3);
                cluster.client().drainNode(NodeCluster.nodeId(p));
                Volume moved = cluster.awaitVolume("rd", x -> allInSync(x) && stateOf(x, p) == null
                        && x.copies().size() == 2, 120, "moved off n" + p);
                assertNotEquals(p, primary(moved));
                assertNull(checkRegions(dev, 4, 3), "through the device after the switchover");
            }
            assertIdentical(cluster, "rd", 2);
            System.out.printf("resync e2e: drain of n%d moved both copies' roles off it; verified identical%n", p);
        }
    }

    /** 4 KiB random writes from {@code threads} threads until {@link #stop} (at most {@code maxMs}); counts them. */
    private static final class Writers {
        private final java.util.concurrent.atomic.AtomicLong done = new java.util.concurrent.atomic.AtomicLong();
        private final java.util.concurrent.atomic.AtomicReference<Throwable> failed =
                new java.util.concurrent.atomic.AtomicReference<>();
        private final List<Thread> threads = new java.util.ArrayList<>();
        private final long t0 = System.nanoTime();
        private final long maxMs;
        private volatile boolean stopped;

        Writers(BlockDevice dev, long bytes, int count, long maxMs) {
            this.maxMs = maxMs;
            long end = t0 + TimeUnit.MILLISECONDS.toNanos(maxMs);
            for (int t = 0; t < count; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    java.util.Random rnd = new java.util.Random(seed);
                    MemorySegment buf = dev.allocateBuffer(4096);
                    try {
                        while (!stopped && System.nanoTime() < end && failed.get() == null) {
                            dev.writeSync(rnd.nextLong(bytes / 4096) * 4096, buf, false);
                            done.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        failed.compareAndSet(null, e);
                    } finally {
                        dev.freeBuffer(buf);
                    }
                });
                th.start();
                threads.add(th);
            }
        }

        /** Stops the writers, waits for them (bounded); returns writes per second since the start. */
        double stop() throws InterruptedException {
            stopped = true;
            double s = (System.nanoTime() - t0) / 1e9;
            long n = done.get();
            for (Thread th : threads) {
                th.join(maxMs + 30_000);
            }
            assertNull(failed.get(), "a foreground write failed");
            return n / s;
        }
    }

    /** 4 KiB random writes from {@code threads} threads for {@code ms} (bounded); returns writes per second. */
    private static double writeRate(BlockDevice dev, long bytes, int threads, long ms) throws InterruptedException {
        Writers w = new Writers(dev, bytes, threads, ms + 1_000);
        Thread.sleep(ms); // the measurement window of a rate: time passing is the point
        return w.stop();
    }

    /** Stops node {@code victim}, writes every region of the volume (its resync is then full), starts it again. */
    private static void dirtyAll(NodeCluster cluster, BlockDevice dev, int victim, long size) throws Exception {
        cluster.stop(victim);
        fill(dev, size);
        cluster.start(victim);
        cluster.awaitVolume("rf", x -> stateOf(x, victim) == CopyState.SYNCING, 60, "syncing");
    }

    /** Writes the whole volume in 1 MiB writes. */
    private static void fill(BlockDevice dev, long size) {
        MemorySegment big = dev.allocateBuffer(1 << 20);
        try {
            for (long off = 0; off < size; off += 1 << 20) {
                dev.writeSync(off, big, false);
            }
        } finally {
            dev.freeBuffer(big);
        }
    }

    /**
     * The node settings {@link #foregroundWritesGoOnDuringAResync} measures: the system property
     * {@code rdmablock.e2e.resyncFigures}, settings separated by {@code ;}, each the node's extra arguments separated
     * by spaces (an empty setting = the node's defaults); without it, the defaults once.
     */
    private static List<List<String>> figureSettings() {
        String p = System.getProperty("rdmablock.e2e.resyncFigures", "");
        List<List<String>> out = new java.util.ArrayList<>();
        for (String setting : p.split(";", -1)) {
            out.add(setting.isBlank() ? List.of() : List.of(setting.strip().split("\\s+")));
        }
        return out;
    }

    /**
     * Figures, not a speed target: the foreground's 4 KiB random-write rate (4 threads) during a full resync of a
     * volume's stale copy (64 MiB, or {@code rdmablock.e2e.resyncFigureMiB}), writing from the moment it is syncing
     * until it is in sync, against the rate before (in sync, the volume written once, so that both copies' files are
     * allocated as after a resync); then the same resync with no foreground, for the resync's time idle. Runs each
     * setting of {@link #figureSettings()} on a fresh cluster. The assertions: writes go on during the resync (with the node's
     * defaults, at least 0.3 of the rate before, a wide margin under the measured ~0.7-0.9; with other settings a
     * twentieth), and the copy gets in sync under load.
     */
    @Test
    @Timeout(value = 1800, unit = TimeUnit.SECONDS)
    void foregroundWritesGoOnDuringAResync() throws Exception {
        List<List<String>> settings = figureSettings();
        for (int i = 0; i < settings.size(); i++) {
            foregroundFigures(dir.resolve("run" + i), settings.get(i));
        }
    }

    private static void foregroundFigures(Path runDir, List<String> nodeArgs) throws Exception {
        // 64 MiB by default (the resync under load runs at the floor, ~4 MiB/s: ~16 s); docs/resync.md's figures are
        // for 256 (-Drdmablock.e2e.resyncFigureMiB=256)
        long size = Long.getLong("rdmablock.e2e.resyncFigureMiB", 64) << 20;
        double mib = size / (double) (1 << 20);
        try (NodeCluster cluster = new NodeCluster(runDir, 2, nodeArgs)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("rf", size, 2).withAnyHost());
            Volume v = cluster.awaitVolume("rf", ResyncE2eTest::allInSync, 120, "2 in-sync copies");
            int victim = secondaries(v).get(0);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "rf", null, options())) {
                fill(dev, size); // every block allocated in both copies' files, as after a resync
                writeRate(dev, size, 4, 1_000); // warm-up
                double before = writeRate(dev, size, 4, 3_000);
                dirtyAll(cluster, dev, victim, size);
                long t0 = System.nanoTime();
                Writers load = new Writers(dev, size, 4, 600_000);
                double during;
                try {
                    cluster.awaitVolume("rf", ResyncE2eTest::allInSync, 600, "resynced under load");
                } finally {
                    during = load.stop();
                }
                double busyS = (System.nanoTime() - t0) / 1e9;
                double after = writeRate(dev, size, 4, 3_000);
                dirtyAll(cluster, dev, victim, size);
                long t1 = System.nanoTime();
                cluster.awaitVolume("rf", ResyncE2eTest::allInSync, 600, "resynced idle");
                double idleS = (System.nanoTime() - t1) / 1e9;
                double ratio = during / before;
                double floor = nodeArgs.isEmpty() ? 0.3 : 0.05;
                assertTrue(ratio >= floor, () -> "writes during the resync: " + during + "/s, before " + before);
                System.out.printf("resync e2e: node args %s: foreground 4K random writes (4 threads) %.0f/s before, "
                        + "%.0f/s during a full resync of %.0f MiB (during/before %.2f), %.0f/s after (during/after "
                        + "%.2f); resync under load %.1f s (%.1f MiB/s), idle %.1f s (%.1f MiB/s)%n",
                        nodeArgs.isEmpty() ? "(defaults)" : String.join(" ", nodeArgs), before, during, mib, ratio, after,
                        during / after, busyS, mib / busyS, idleS, mib / idleS);
            }
        }
    }
}
