package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.NoSuchElementException;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Snapshots#rollback(String, long, String)}: applied once per request id (the id is kept in the rollback's own
 * metadata batch), never again after later writes, not even after the store is reopened; another id applies.
 */
class RollbackOnceTest {
    private static final int CLUSTER = 64 << 10;
    private static final int MIB = 1 << 20;

    @Test
    void shouldApplyARequestOnceAcrossWritesAndReopen() throws Exception {
        Path dir = StoreTestSupport.freshDir("rollback-once");
        StoreOptions opts = StoreTestSupport.options(IoBackend.THREAD_POOL).withClusterBytes(CLUSTER);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment a = StoreTestSupport.buffer(arena, MIB);
            MemorySegment b = StoreTestSupport.buffer(arena, MIB);
            MemorySegment c = StoreTestSupport.buffer(arena, MIB);
            MemorySegment got = StoreTestSupport.buffer(arena, MIB);
            StoreTestSupport.fillRandom(a, 1);
            StoreTestSupport.fillRandom(b, 2);
            StoreTestSupport.fillRandom(c, 3);
            long snapId;
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.create(spec("v", 2L * MIB, 4096));
                BlockQueue q = store.newQueue(4);
                StoreTestSupport.write(q, v, 0, a);
                snapId = store.snapshots().create("v", "s").id();
                StoreTestSupport.write(q, v, 0, b);
                assertNull(store.snapshots().lastRollback("v"));

                assertTrue(store.snapshots().rollback("v", snapId, "req-1"));
                assertEquals("req-1", store.snapshots().lastRollback("v"));
                StoreTestSupport.read(q, v, 0, got);
                assertEquals(-1, got.mismatch(a), "rolled back: the snapshot's content");

                StoreTestSupport.write(q, v, 0, c);
                assertFalse(store.snapshots().rollback("v", snapId, "req-1"), "the same request again");
                StoreTestSupport.read(q, v, 0, got);
                assertEquals(-1, got.mismatch(c), "a write after the rollback is not undone by the same request");

                assertThrows(NoSuchElementException.class, () -> store.snapshots().rollback("v", 99, "req-2"));
                assertEquals("req-1", store.snapshots().lastRollback("v"), "a refused rollback records nothing");
                q.close();
            }
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.get("v");
                BlockQueue q = store.newQueue(4);
                assertEquals("req-1", store.snapshots().lastRollback("v"), "kept across a reopen");
                assertFalse(store.snapshots().rollback("v", snapId, "req-1"));
                StoreTestSupport.read(q, v, 0, got);
                assertEquals(-1, got.mismatch(c), "after a restart the request is still not re-applied");

                assertTrue(store.snapshots().rollback("v", snapId, "req-2"), "a new request applies");
                StoreTestSupport.read(q, v, 0, got);
                assertEquals(-1, got.mismatch(a));
                q.close();
                store.delete("v");
                store.create(spec("v", 2L * MIB, 4096));
                assertNull(store.snapshots().lastRollback("v"), "a volume's delete takes its rollback id");
            }
        }
    }

    @Test
    void shouldRefuseAFlatVolumeAndBadRequestIds() throws Exception {
        Path dir = StoreTestSupport.freshDir("rollback-flat");
        try (VolumeStore store = VolumeStore.open(dir, StoreTestSupport.options(IoBackend.THREAD_POOL)
                .withClusterBytes(0))) {
            store.create(spec("f", MIB, 4096));
            assertThrows(IllegalArgumentException.class, () -> store.snapshots().rollback("f", 1, "req-1"));
            assertThrows(IllegalArgumentException.class, () -> store.snapshots().rollback("f", 1, ""));
            assertThrows(NoSuchElementException.class, () -> store.snapshots().rollback("nope", 1, "req-1"));
        }
    }
}
