package io.rdmablock.node.store;

import static io.rdmablock.node.store.StoreTestSupport.buffer;
import static io.rdmablock.node.store.StoreTestSupport.fillRandom;
import static io.rdmablock.node.store.StoreTestSupport.isAllZero;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The benchmark-only NULL backend: writes discarded, reads zero, flush completes, contract checks kept. */
class NullBlockQueueTest {
    private final Arena arena = Arena.ofShared();
    private VolumeStore store;
    private BlockQueue queue;
    private StoreVolume volume;
    private Path dir;

    @BeforeEach
    void setUp() throws Exception {
        dir = StoreTestSupport.freshDir("null");
        store = VolumeStore.open(dir, StoreOptions.defaults().withBackend(IoBackend.NULL));
        queue = store.newQueue(4);
        volume = store.create(spec("v1", 1 << 20, 4096));
    }

    @AfterEach
    void tearDown() {
        queue.close();
        store.close();
        arena.close();
    }

    @Test
    void shouldDiscardWritesAndReadZeros() throws Exception {
        assertEquals(IoBackend.NULL, store.backend());
        assertEquals(IoBackend.NULL, queue.backend());
        MemorySegment out = buffer(arena, 8192);
        fillRandom(out, 3);
        StoreTestSupport.write(queue, volume, 4096, out);
        StoreTestSupport.flush(queue, volume);
        MemorySegment in = buffer(arena, 8192);
        fillRandom(in, 4); // stale bytes must not survive a read
        StoreTestSupport.read(queue, volume, 4096, in);
        assertTrue(isAllZero(in), "a null-store read returns zeros");
        assertEquals(0, volume.allocatedBytes(), "nothing was written to the volume (allocation map)");
    }

    @Test
    void shouldRefuseOutOfRangeAndOverCapacitySubmits() {
        MemorySegment buf = buffer(arena, 4096);
        assertThrows(IllegalArgumentException.class, () -> queue.submitRead(volume, 1 << 20, buf, 1));
        assertThrows(IllegalArgumentException.class, () -> queue.submitWrite(volume, 100, buf, false, 1));
        for (int i = 0; i < 4; i++) {
            queue.submitFlush(volume, i);
        }
        assertThrows(IllegalStateException.class, () -> queue.submitFlush(volume, 9));
        long[] tags = new long[8];
        int[] results = new int[8];
        assertEquals(4, queue.reap(tags, results, 8));
        assertEquals(3, tags[3]);
        assertEquals(0, results[3]);
        assertEquals(0, queue.inFlight());
    }
}
