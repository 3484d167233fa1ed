package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Progressive issue (a command longer than the piece capacity) and space reclaim across snapshot cycles. */
class MappedProgressBreakTest {
    private static final int CLUSTER = 64 << 10;

    /** 2 MiB writes, unaligned to clusters, on a capacity-1 queue while snapshots are taken from another thread. */
    @Test
    void bigUnalignedWritesOnCapacityOneQueueWithSnapshotsFromAnotherThread() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-progress");
        StoreOptions opts = StoreTestSupport.options(IoBackend.THREAD_POOL).withClusterBytes(CLUSTER);
        try (Arena arena = Arena.ofShared(); VolumeStore store = VolumeStore.open(dir, opts)) {
            StoreVolume v = store.create(spec("v", 8 << 20, 4096));
            BlockQueue q = store.newQueue(1);
            MemorySegment big = StoreTestSupport.buffer(arena, 2 << 20);
            MemorySegment got = StoreTestSupport.buffer(arena, 2 << 20);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread mgmt = Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < 20; i++) {
                        store.snapshots().create("v", "p" + i);
                        Thread.sleep(5);
                        if (i >= 3) {
                            store.snapshots().delete("v", "p" + (i - 3));
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            for (int i = 0; i < 40; i++) {
                long off = 4096L * (1 + (i * 37) % 512);
                StoreTestSupport.fillRandom(big, 1000 + i);
                q.submitWrite(v, off, big, i % 5 == 0, 1);
                assertEquals(0, awaitResult(q, 1), "write " + i);
                StoreTestSupport.read(q, v, off, got);
                assertEquals(-1, got.mismatch(big), "read back of write " + i + " at " + off);
            }
            mgmt.join(30_000);
            assertNull(failure.get(), () -> "management failed: " + failure.get());
            q.close();
        }
    }

    /**
     * Many snapshot/overwrite/delete cycles: allocatedBytes must equal what the maps hold and, once the reuse grace
     * passed, the file's blocks must not exceed that by more than a few clusters (freed ones are punched).
     */
    @Test
    void spaceIsReclaimedAfterSnapshotCycles() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-space");
        StoreOptions opts = StoreTestSupport.options(IoBackend.THREAD_POOL).withClusterBytes(CLUSTER);
        int size = 2 << 20;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf = StoreTestSupport.buffer(arena, size);
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.create(spec("v", size, 4096));
                BlockQueue q = store.newQueue(4);
                ClusterMap.reuseGraceNs = 5_000_000_000L; // the product's 35 s would make this test wait 35 s
                for (int i = 0; i < 12; i++) {
                    StoreTestSupport.fillRandom(buf, i);
                    StoreTestSupport.write(q, v, 0, buf);
                    store.snapshots().create("v", "c" + i);
                    StoreTestSupport.write(q, v, 4096, buf.asSlice(0, size - 8192)); // redirect + copies
                    store.snapshots().delete("v", "c" + i);
                    assertEquals(v.map().liveBytes(), v.allocatedBytes(), "cycle " + i);
                }
                q.close();
                long deadline = System.nanoTime() + 15_000_000_000L;
                Path file = dir.resolve("volumes").resolve("v.vol");
                long blocks = Syscalls.allocatedBytes(file);
                while (System.nanoTime() < deadline && (v.map().pendingFreeCount() > 0 || blocks > size + 4L * CLUSTER)) {
                    Thread.sleep(200);
                    blocks = Syscalls.allocatedBytes(file);
                }
                ClusterMap.reuseGraceNs = ClusterMap.REUSE_GRACE_NS;
                assertEquals(0, v.map().pendingFreeCount(), "frees still pending after the grace");
                assertTrue(blocks <= size + 4L * CLUSTER, "file blocks=" + blocks + " for " + size + " live bytes");
            }
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.get("v");
                assertEquals(size, v.allocatedBytes());
                // highWater (the file's length) may be far above: clusters freed within the grace are not reused;
                // the file is sparse and the freed clusters punched, so only blocks count
                assertTrue(Syscalls.allocatedBytes(dir.resolve("volumes").resolve("v.vol")) <= size + 4L * CLUSTER);
            }
        }
    }
}
