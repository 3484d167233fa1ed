package io.rdmablock.node.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store's fault injection (case C7): parsing, and a held write on a queue. */
class StoreFaultsTest {
    @TempDir
    Path dir;

    @Test
    void shouldParseStallRuleAndRejectGarbage() {
        StoreFaults f = StoreFaults.parse("stall:vol1:4096:250:2");
        assertEquals(250_000_000L, f.delayNs());
        assertEquals(2, f.remaining());
        assertEquals(1, StoreFaults.parse("stall:v:0:10").remaining());
        assertNull(StoreFaults.parse(" "));
        assertThrows(IllegalArgumentException.class, () -> StoreFaults.parse("delay:vol1:0:10"));
        assertThrows(IllegalArgumentException.class, () -> StoreFaults.parse("stall:vol1:x:10"));
        assertThrows(IllegalArgumentException.class, () -> StoreFaults.parse("stall:vol1:0:10:0"));
    }

    @Test
    void shouldHoldOnlyTheMatchingWriteForItsDelay() {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults());
             Arena arena = Arena.ofConfined()) {
            StoreVolume v = store.create(new VolumeSpec("vol1", "vol1", 8L << 20, 512, Set.of("*")));
            try (BlockQueue plain = store.newQueue(4)) {
                assertFalse(plain instanceof StallingBlockQueue, "no rule: the backend's own queue");
            }
            store.setFaults(StoreFaults.stall("vol1", 8192, 300_000_000L, 1));
            MemorySegment buf = arena.allocate(4096, 4096).fill((byte) 7);
            long[] ud = new long[4];
            int[] res = new int[4];
            try (BlockQueue q = store.newQueue(4)) {
                long t0 = System.nanoTime();
                q.submitWrite(v, 8192, buf, false, 1); // held
                q.submitWrite(v, 0, buf, false, 2);    // passes
                assertEquals(2, q.inFlight());
                long deadline = t0 + 5_000_000_000L;
                long heldDoneNs = 0;
                int done = 0;
                while (done < 2 && System.nanoTime() < deadline) {
                    q.awaitCompletion(50_000_000L);
                    int n = q.reap(ud, res, 4);
                    for (int i = 0; i < n; i++) {
                        assertEquals(0, res[i]);
                        if (ud[i] == 1) {
                            heldDoneNs = System.nanoTime() - t0;
                        } else {
                            assertTrue(System.nanoTime() - t0 < 250_000_000L, "unmatched write was held");
                        }
                    }
                    done += n;
                }
                assertEquals(2, done);
                assertTrue(heldDoneNs >= 300_000_000L, "held write completed after " + heldDoneNs + " ns");
                q.submitWrite(v, 8192, buf, false, 3); // count exhausted: passes
                assertTrue(q.awaitCompletion(1_000_000_000L));
                assertEquals(1, q.reap(ud, res, 4));
            }
        }
    }
}
