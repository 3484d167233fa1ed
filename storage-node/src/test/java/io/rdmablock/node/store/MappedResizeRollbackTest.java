package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Resize of a mapped volume, snapshots on both sides of it, rollback to the smaller one, writes, reopen. */
class MappedResizeRollbackTest {
    private static final int CLUSTER = 64 << 10;
    private static final int MIB = 1 << 20;

    @Test
    void rollbackToASmallerSnapshotThenWritesSurviveReopen() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-resize");
        StoreOptions opts = StoreTestSupport.options(IoBackend.THREAD_POOL).withClusterBytes(CLUSTER);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment a = StoreTestSupport.buffer(arena, MIB);
            MemorySegment b = StoreTestSupport.buffer(arena, MIB);
            MemorySegment c = StoreTestSupport.buffer(arena, 8192);
            MemorySegment got = StoreTestSupport.buffer(arena, MIB);
            StoreTestSupport.fillRandom(a, 1);
            StoreTestSupport.fillRandom(b, 2);
            StoreTestSupport.fillRandom(c, 3);
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.create(spec("v", MIB, 4096));
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.write(q, v, 0, a);
                store.snapshots().create("v", "small");
                store.resize("v", 3L * MIB);
                StoreTestSupport.write(q, v, 2L * MIB, b);
                StoreTestSupport.write(q, v, 0, b);
                store.snapshots().create("v", "big");
                store.snapshots().rollback("v", "small");
                StoreTestSupport.write(q, v, 4096, c); // partial write into a shared cluster: redirect + copy
                StoreTestSupport.write(q, v, 2L * MIB + 8192, c); // into the grown part, now unallocated
                q.close();
            }
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.get("v");
                assertEquals(3L * MIB, v.sizeBytes());
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.read(q, v, 0, got);
                MemorySegment exp = StoreTestSupport.buffer(arena, MIB);
                exp.copyFrom(a);
                exp.asSlice(4096, 8192).copyFrom(c);
                assertEquals(-1, got.mismatch(exp), "first MiB: snapshot 'small' plus the later write");
                StoreTestSupport.read(q, v, 2L * MIB, got);
                exp.fill((byte) 0);
                exp.asSlice(8192, 8192).copyFrom(c);
                assertEquals(-1, got.mismatch(exp), "third MiB: zero (past 'small') plus the later write");
                StoreTestSupport.read(q, v, MIB, got);
                assertTrue(StoreTestSupport.isAllZero(got));
                StoreVolume view = store.snapshots().open("v", "big");
                StoreTestSupport.read(q, view, 2L * MIB, got);
                assertEquals(-1, got.mismatch(b), "snapshot 'big' keeps the grown part");
                store.snapshots().close(view);
                long held = 0;
                java.util.Set<Long> phys = new java.util.HashSet<>();
                for (long k = 0; k < 3L * MIB / CLUSTER; k++) {
                    long e = v.map().entry(k) & ClusterMap.PHYS_MASK;
                    if (e != 0) {
                        phys.add(e);
                    }
                }
                for (ClusterMap.Snap s : v.map().snapshots()) {
                    for (long p1 : s.map()) {
                        if (p1 != 0) {
                            phys.add(p1);
                        }
                    }
                }
                held = (long) phys.size() * CLUSTER;
                assertEquals(held, v.allocatedBytes());
                q.close();
            }
        }
    }
}
