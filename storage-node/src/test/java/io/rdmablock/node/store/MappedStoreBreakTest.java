package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reviewer tests of the mapped (cluster-map) store layer: each one fails because of a bug it names. */
class MappedStoreBreakTest {
    private static final int CLUSTER = 64 << 10;

    private static StoreOptions mapped() {
        return StoreTestSupport.options(IoBackend.THREAD_POOL).withClusterBytes(CLUSTER);
    }

    private static MemorySegment pattern(Arena arena, long len, long seed) {
        MemorySegment b = StoreTestSupport.buffer(arena, len);
        StoreTestSupport.fillRandom(b, seed);
        return b;
    }

    /**
     * Snapshots.rollback writes the snapshot's map over the live map on disk (synced) before ClusterMap.rollback
     * checks for BUSY entries; when that check refuses (IllegalStateException, documented as "nothing happens"), the
     * in-memory map is unchanged but the disk already holds the rolled-back map. After a reopen the volume shows the
     * snapshot's content: the refused rollback happened after all (and memory and disk diverged in between).
     */
    @Test
    void refusedRollbackMustNotChangeTheVolumeOnDisk() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-rollback");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment a = pattern(arena, CLUSTER, 1);
            MemorySegment b = pattern(arena, CLUSTER, 2);
            MemorySegment got = StoreTestSupport.buffer(arena, CLUSTER);
            try (VolumeStore store = VolumeStore.open(dir, mapped())) {
                StoreVolume v = store.create(spec("v", 1 << 20, 4096));
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.write(q, v, 0, a);
                store.snapshots().create("v", "s1");
                StoreTestSupport.write(q, v, 0, b);
                // a command is changing cluster 3 (as a write in flight would: BUSY)
                ClusterMap map = v.map();
                assertTrue(map.tryBusy(3, map.entry(3)));
                assertThrows(IllegalStateException.class, () -> store.snapshots().rollback("v", "s1"));
                map.unbusy(3);
                StoreTestSupport.read(q, v, 0, got);
                assertEquals(-1, got.mismatch(b), "in memory the refused rollback changed nothing");
                q.close();
            }
            try (VolumeStore store = VolumeStore.open(dir, mapped())) {
                StoreVolume v = store.get("v");
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.read(q, v, 0, got);
                q.close();
                assertEquals(-1, got.mismatch(b),
                        "after reopen cluster 0 must still hold the data written after the snapshot (the rollback "
                                + "was refused), but it holds the snapshot's data: rollback persisted before its check");
            }
        }
    }

    /**
     * A write to an unallocated cluster is submitted (handed to the backend), the volume is deleted, then the queue
     * reaps: the write completes and its map entry is committed by the MapWorker AFTER delete's deleteRange of m/v/.
     * The stale key m/v/0/5 -> phys 0 survives. A volume created later with the same id takes phys 0 for its cluster
     * 0; after a reopen the stale entry is loaded too: cluster 5 reads cluster 0's data (and phys 0 counts as shared).
     */
    @Test
    void deleteWithWriteInFlightMustNotLeaveMapEntriesForALaterVolumeOfTheSameId() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-delete");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment old = pattern(arena, CLUSTER, 3);
            MemorySegment x = pattern(arena, CLUSTER, 4);
            MemorySegment got = StoreTestSupport.buffer(arena, CLUSTER);
            try (VolumeStore store = VolumeStore.open(dir, mapped())) {
                StoreVolume v = store.create(spec("v", 1 << 20, 4096));
                BlockQueue q = store.newQueue(4);
                q.submitWrite(v, 5L * CLUSTER, old, false, 1);
                store.delete("v"); // "I/O already handed to the kernel finishes harmlessly"
                awaitResult(q, 1); // whatever it returns; its commit has run when it completes
                StoreVolume v2 = store.create(spec("v", 1 << 20, 4096));
                StoreTestSupport.write(q, v2, 0, x);
                assertEquals(CLUSTER, v2.allocatedBytes());
                q.close();
            }
            try (VolumeStore store = VolumeStore.open(dir, mapped())) {
                StoreVolume v = store.get("v");
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.read(q, v, 5L * CLUSTER, got);
                q.close();
                assertEquals(CLUSTER, v.allocatedBytes(), "the recreated volume wrote one cluster");
                assertTrue(StoreTestSupport.isAllZero(got),
                        "cluster 5 of the recreated volume was never written: it must read zero, but it maps the "
                                + "deleted volume's stale entry (same phys as cluster 0): equal to cluster 0's data="
                                + (got.mismatch(x) == -1));
            }
        }
    }

    /**
     * With a queue of capacity 2 (4 backend pieces), one mapped 1 MiB write (16 clusters) takes every piece; a command
     * on a flat volume then throws "block queue full" although inFlight (1) is below capacity (2): the pass-through
     * needs a piece and has no way to wait for one. The MapWorker is held (by holding another mapped volume's map
     * monitor, which its idle reclaim takes) so the pieces stay busy deterministically.
     */
    @Test
    void flatCommandMustBeAcceptedBelowCapacityWhileMappedCommandsHoldEveryPiece() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-flat");
        try (VolumeStore store = VolumeStore.open(dir, StoreTestSupport.options(IoBackend.THREAD_POOL)
                .withClusterBytes(0))) {
            store.create(spec("f", 1 << 20, 4096));
        }
        try (Arena arena = Arena.ofShared();
             VolumeStore store = VolumeStore.open(dir, mapped())) {
            StoreVolume f = store.get("f");
            assertEquals(0, f.clusterBytes(), "f is flat");
            StoreVolume m = store.create(spec("m", 4 << 20, 4096));
            StoreVolume other = store.create(spec("other", 1 << 20, 4096));
            BlockQueue q = store.newQueue(2);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = Thread.ofPlatform().start(() -> {
                synchronized (other.map()) {
                    held.countDown();
                    try {
                        release.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            try {
                assertTrue(held.await(5, TimeUnit.SECONDS));
                Thread.sleep(300); // the worker goes idle, reclaims, and blocks on other's map
                MemorySegment big = pattern(arena, 1 << 20, 5);
                q.submitWrite(m, 0, big, false, 1);
                MemorySegment small = StoreTestSupport.buffer(arena, 4096);
                assertEquals(1, q.inFlight());
                assertDoesNotThrow(() -> q.submitRead(f, 0, small, 2),
                        "inFlight=1 < capacity=2: the flat read must be accepted");
            } finally {
                release.countDown();
                holder.join(10_000);
            }
            long[] ud = new long[2];
            int[] res = new int[2];
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (q.inFlight() > 0 && System.nanoTime() < deadline) {
                q.awaitCompletion(100_000_000L);
                q.reap(ud, res, 2);
            }
            q.close();
        }
    }

    /**
     * FUA on a cluster the live map owns alone goes in place (RWF_DSYNC) with no map sync. When that cluster's map
     * entry is not yet durable (its first write, or a redirect after a snapshot, was not FUA: committed unsynced), the
     * FUA write completes before anything makes the entry durable: after a power loss the entry is gone (or points to
     * the snapshot's old cluster) and the acknowledged FUA data is lost. Proof without a power cut: no synced map
     * commit (MapWorker.lastSyncStartNs) happens between the first write's completion and the FUA's completion.
     */
    @Test
    void fuaWriteInPlaceMustMakeItsClusterMappingDurable() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-fua");
        try (Arena arena = Arena.ofShared();
             VolumeStore store = VolumeStore.open(dir, mapped())) {
            StoreVolume v = store.create(spec("v", 1 << 20, 4096));
            BlockQueue q = store.newQueue(4);
            StoreTestSupport.write(q, v, 0, pattern(arena, 4096, 6)); // allocates cluster 0: entry committed unsynced
            java.lang.reflect.Field wf = VolumeStore.class.getDeclaredField("mapWorker");
            wf.setAccessible(true);
            MapWorker worker = (MapWorker) wf.get(store);
            java.lang.reflect.Field sf = MapWorker.class.getDeclaredField("lastSyncStartNs");
            sf.setAccessible(true);
            long before = sf.getLong(worker);
            q.submitWrite(v, 4096, pattern(arena, 4096, 7), true, 3); // FUA, in place in cluster 0
            assertEquals(0, awaitResult(q, 3));
            long after = sf.getLong(worker);
            q.close();
            assertTrue(after != before, "the FUA write completed, but cluster 0's map entry (committed unsynced by "
                    + "the earlier write) was never synced: a power loss now loses the FUA data");
        }
    }

    /**
     * Same stale-key leak as above, on a cluster number beyond the recreated volume's size: at the next open,
     * Snapshots.load feeds the stale live key to ClusterMap.loadLive, which indexes past its segment array: the whole
     * store fails to open (every volume of the node is down), not only the one volume.
     */
    @Test
    void staleMapKeyBeyondTheVolumeSizeMustNotStopTheStoreFromOpening() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-delete-open");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment old = pattern(arena, CLUSTER, 8);
            try (VolumeStore store = VolumeStore.open(dir, mapped())) {
                StoreVolume v = store.create(spec("v", 512L << 20, 4096));
                store.create(spec("bystander", 1 << 20, 4096));
                BlockQueue q = store.newQueue(4);
                q.submitWrite(v, 5000L * CLUSTER, old, false, 1);
                store.delete("v");
                awaitResult(q, 1);
                store.create(spec("v", 1 << 20, 4096));
                q.close();
            }
            try (VolumeStore store = assertDoesNotThrow(() -> VolumeStore.open(dir, mapped()),
                    "the store must open (a stale m/ key of a deleted volume must not take the node down)")) {
                assertEquals(0, store.get("v").allocatedBytes());
                store.get("bystander");
            }
        }
    }

    /**
     * Snapshots.close(view) only decrements openViews while the view is not deleted, and a view counts as deleted as
     * soon as its volume is: a view closed after its volume was deleted leaves "v@s" in openViews for the life of
     * the process. A volume created again with that id and a snapshot of that name can then never be deleted
     * ("snapshot in use") until the node restarts.
     */
    @Test
    void closingAViewAfterItsVolumeWasDeletedMustReleaseTheSnapshotName() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-view");
        try (VolumeStore store = VolumeStore.open(dir, mapped())) {
            store.create(spec("v", 1 << 20, 4096));
            store.snapshots().create("v", "s");
            StoreVolume view = store.snapshots().open("v", "s");
            store.delete("v");
            store.snapshots().close(view);
            store.create(spec("v", 1 << 20, 4096));
            store.snapshots().create("v", "s");
            assertDoesNotThrow(() -> store.snapshots().delete("v", "s"),
                    "no view of the new volume's snapshot is open: delete must succeed");
        }
    }
}
