package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.rdmablock.node.resync.ResyncFixture.REGION;
import static io.rdmablock.node.resync.ResyncFixture.VOLUME;
import static io.rdmablock.node.resync.ResyncFixture.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The primary's resync and verify (docs/resync.md) against fake secondaries. */
class ResyncTest {
    @TempDir
    Path dir;
    private ResyncFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private ResyncFixture fixture() {
        f = new ResyncFixture(dir);
        return f;
    }

    /** A persisted bitmap of n2 with these regions marked. */
    private void bitmap(int... regions) {
        DirtyRegions d = DirtyRegions.create(dir.resolve("vol.dirty-n2"), REGION, VOLUME, ResyncFixture.EPOCH);
        for (int r : regions) {
            d.mark((long) r * REGION, 1);
        }
        d.flush();
    }

    private void diverge(ResyncFixture.Copy c, int... regions) {
        for (int r : regions) {
            for (int i = 0; i < REGION; i++) {
                c.data[r * REGION + i] ^= 0x5a;
            }
        }
    }

    @Test
    void anIncrementalResyncCopiesOnlyTheMarkedRegionsThenTheCopyIsInSyncAndTheBitmapGone() {
        ResyncFixture f = fixture();
        bitmap(3, 10);
        ReplicaSet set = f.start(false);
        diverge(f.copies.get("n2"), 3, 10);
        set.resyncs(f.resyncs);
        await(() -> set.view().isInSync(0), 10_000, "n2 in sync");
        assertEquals(2L * REGION, f.copies.get("n2").copierWriteBytes.get(), "only the marked regions");
        assertEquals(2L * REGION, f.copied.sum(), "metric");
        assertArrayEquals(f.primary, f.copies.get("n2").data, "the copy equals the primary");
        assertEquals(List.of("syncing n2@5", "in-sync n2@5"), f.calls);
        assertEquals(6, set.view().epoch(), "in sync at the new epoch");
        assertFalse(set.view().isSyncing(0));
        // ReplicaSet.resynced publishes the view first, then deletes the bitmap: wait for it (bounded)
        await(() -> !Files.exists(dir.resolve("vol.dirty-n2")), 10_000, "bitmap deleted");
        assertEquals(null, set.view().copies()[0].missed());
    }

    @Test
    void withoutABitmapTheResyncIsFull() {
        ResyncFixture f = fixture();
        ReplicaSet set = f.start(false);
        diverge(f.copies.get("n2"), 0, 15);
        set.resyncs(f.resyncs);
        await(() -> set.view().isInSync(0), 10_000, "n2 in sync");
        assertEquals(VOLUME, f.copies.get("n2").copierWriteBytes.get(), "every region");
        assertArrayEquals(f.primary, f.copies.get("n2").data);
    }

    @Test
    void aFullResyncDrawsFromTheNodesBackgroundBudget() throws java.io.IOException {
        // the fixture's budget (1000 MiB/s): the 1 MiB volume takes a few ms
        ResyncFixture fast = fixture();
        ReplicaSet set = fast.start(false);
        long t0 = System.nanoTime();
        set.resyncs(fast.resyncs);
        await(() -> set.view().isInSync(0), 10_000, "n2 in sync (fast budget)");
        long fastMs = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(VOLUME, fast.budget.grantedBytes(), "every region's bytes taken from the budget");
        fast.close();
        f = null;
        // a tiny budget, 1 MiB/s fixed: the 256 KiB bucket goes at once, the rest (1 MiB - 256 KiB, less the one
        // region of debt) at 1 MiB/s: at least ~0.69 s
        ResyncFixture slow = new ResyncFixture(Files.createDirectories(dir.resolve("slow")));
        f = slow;
        slow.budget = new io.rdmablock.node.qos.BackgroundBudget(1L << 20, 1L << 20, 50,
                new io.rdmablock.node.metrics.ForegroundLatency(), System::nanoTime);
        ReplicaSet slowSet = slow.start(false);
        long t1 = System.nanoTime();
        slowSet.resyncs(slow.resyncs);
        await(() -> slowSet.view().isInSync(0), 20_000, "n2 in sync (tiny budget)");
        long slowMs = (System.nanoTime() - t1) / 1_000_000;
        assertEquals(VOLUME, slow.budget.grantedBytes(), "every region's bytes taken from the budget");
        assertArrayEquals(slow.primary, slow.copies.get("n2").data);
        assertTrue(slowMs >= 600, "1 MiB at 1 MiB/s after a 256 KiB bucket took " + slowMs + " ms (fast: " + fastMs
                + " ms)");
        assertTrue(slowMs < 15_000, "bounded: " + slowMs + " ms");
    }

    @Test
    void aCopyAddedToTheRecordIsResyncedInFull() {
        ResyncFixture f = fixture();
        ReplicaSet set = f.start(true);
        set.resyncs(f.resyncs);
        ResyncFixture.Copy n3 = f.new Copy("n3");
        f.copies.put("n3", n3);
        set.apply(ResyncFixture.EPOCH, 1, Map.of("n2", true, "n3", false), node -> n3);
        assertEquals(2, set.view().copies().length);
        await(() -> set.view().isInSync(1), 10_000, "n3 in sync");
        assertEquals(VOLUME, n3.copierWriteBytes.get(), "a rebuild target gets every region");
        assertArrayEquals(f.primary, n3.data);
        assertEquals(3, set.view().inSyncCount());
        set.apply(set.view().epoch() + 1, 1, Map.of("n3", true), node -> n3);
        assertTrue(set.view().copies()[0].removed, "n2 no longer in the record");
        assertFalse(set.view().isInSync(0));
        assertEquals(List.of("n3=in_sync"), set.describe());
    }

    @Test
    void aFailedWriteToTheTargetAbortsBackToStaleKeepingTheBits() {
        ResyncFixture f = fixture();
        bitmap(2, 4, 9);
        ReplicaSet set = f.start(false);
        f.copies.get("n2").failWriteAt = 4L * REGION;
        set.resyncs(f.resyncs);
        await(() -> f.calls.size() == 2, 10_000, "abort");
        assertEquals(List.of("syncing n2@5", "stale n2@5"), f.calls);
        await(() -> !f.resyncs.resyncing("n2"), 5_000, "resync end");
        assertFalse(set.view().isInSync(0));
        assertFalse(set.view().isSyncing(0));
        DirtyRegions d = set.view().copies()[0].missed();
        assertEquals(3, d.markedCount(), "every bit kept");
        DirtyRegions onDisk = DirtyRegions.load(dir.resolve("vol.dirty-n2"), VOLUME);
        assertNotNull(onDisk);
        assertTrue(onDisk.isMarked(2) && onDisk.isMarked(4) && onDisk.isMarked(9));
    }

    @Test
    void aDeposedPrimaryStopsItsResyncAtOnceWithoutAnyTransition() {
        ResyncFixture f = fixture();
        ReplicaSet set = f.start(false);
        f.blockReadAt = 3L * REGION;
        f.readGate = new java.util.concurrent.CountDownLatch(1);
        set.resyncs(f.resyncs);
        await(() -> f.readBlocked.getCount() == 0, 10_000, "copier at region 3");
        f.primacy = new ReplicaSet.Primacy(9, false, 1, Map.of());
        set.reportFenced(set.view().copies()[0], set.view().epoch());
        await(set::deposed, 5_000, "deposed");
        f.readGate.countDown();
        await(() -> !f.resyncs.resyncing("n2"), 5_000, "resync end");
        assertEquals(List.of("syncing n2@5"), f.calls, "neither in-sync nor stale asked by a deposed primary");
        assertFalse(set.view().isSyncing(0));
        assertTrue(f.copies.get("n2").copierWriteBytes.get() <= 4L * REGION, "stopped at the next region");
        assertEquals(16, set.view().copies()[0].missed().markedCount(), "bits kept");
    }

    @Test
    void verifyFindsIdenticalCopiesIdenticalThenReportsACorruptedRegion() {
        ResyncFixture f = fixture();
        ReplicaSet set = f.start(true, true);
        set.resyncs(f.resyncs);
        f.resyncs.verify("run-1");
        await(() -> f.resyncs.verifyReport().state() == VerifyState.DONE
                || f.resyncs.verifyReport().state() == VerifyState.FAILED, 10_000, "verify 1");
        VerifyReport r1 = f.resyncs.verifyReport();
        assertEquals(VerifyState.DONE, r1.state(), String.valueOf(r1.error()));
        assertEquals(0, r1.differing());
        assertEquals(VOLUME, r1.checkedBytes());
        assertEquals(List.of("n1", "n2", "n3"), r1.nodeIds());

        f.copies.get("n3").data[7 * REGION + 100] ^= 1;
        f.resyncs.verify("run-1");
        assertEquals("run-1", f.resyncs.verifyReport().id(), "the same id is not run again");
        f.resyncs.verify("run-2");
        await(() -> "run-2".equals(f.resyncs.verifyReport().id())
                && f.resyncs.verifyReport().state() != VerifyState.RUNNING, 10_000, "verify 2");
        VerifyReport r2 = f.resyncs.verifyReport();
        assertEquals(VerifyState.DONE, r2.state(), String.valueOf(r2.error()));
        assertEquals(1, r2.differing());
        assertEquals(7L * REGION, r2.differences().getFirst().offsetBytes());
        assertEquals(REGION, r2.differences().getFirst().lengthBytes());
        assertEquals(List.of("n3"), r2.differences().getFirst().nodeIds());
    }
}
