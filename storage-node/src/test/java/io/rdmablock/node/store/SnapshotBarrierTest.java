package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots taken while writers write: each writer, on its own queue, writes block {@code i mod BLOCKS} of its own
 * range with generation {@code i}, one write after the other. Each snapshot must be one cut of every writer's
 * sequence: exactly the writes {@code 1..G} for some {@code G} (a prefix, nothing from after a missing write), with
 * {@code G} at least the writer's last completed write before the snapshot was asked for and at most its last
 * write issued before the snapshot returned.
 */
class SnapshotBarrierTest {
    private static final int WRITERS = 3;
    private static final int BLOCKS = 64; // per writer, spread over clusters: stride of 16 KiB
    private static final int STRIDE = 4;
    private static final int SNAPSHOTS = 12;

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldCutEveryWritersSequenceAtOnePoint(IoBackend backend) throws Exception {
        Path dir = StoreTestSupport.freshDir("snapcut");
        long span = (long) BLOCKS * STRIDE * BlockPattern.BLOCK;
        try (VolumeStore store = VolumeStore.open(dir, StoreTestSupport.options(backend).withClusterBytes(64 << 10));
             Arena arena = Arena.ofShared()) {
            StoreVolume v = store.create(StoreTestSupport.spec("v", WRITERS * span, 4096));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong[] completed = new AtomicLong[WRITERS];
            AtomicLong[] issued = new AtomicLong[WRITERS];
            List<Thread> threads = new ArrayList<>();
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int w = 0; w < WRITERS; w++) {
                int wid = w;
                completed[w] = new AtomicLong();
                issued[w] = new AtomicLong();
                threads.add(Thread.ofPlatform().start(() -> {
                    try (Arena a = Arena.ofConfined(); BlockQueue q = store.newQueue(2)) {
                        MemorySegment b = a.allocate(BlockPattern.BLOCK, 4096);
                        long deadline = System.nanoTime() + 60_000_000_000L;
                        for (long i = 1; !stop.get() && System.nanoTime() < deadline; i++) {
                            long block = blockOf(wid, i);
                            BlockPattern.fill(b, 0, block, i);
                            issued[wid].set(i);
                            q.submitWrite(v, block * BlockPattern.BLOCK, b, false, i);
                            assertEquals(0, awaitResult(q, i));
                            completed[wid].set(i);
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            long[] lo = new long[WRITERS];
            long[] hi = new long[WRITERS];
            MemorySegment buf = arena.allocate(WRITERS * span, 4096);
            long maxBarrierNs = 0;
            try (BlockQueue rq = store.newQueue(2)) {
                for (int s = 0; s < SNAPSHOTS; s++) {
                    Thread.sleep(30);
                    for (int w = 0; w < WRITERS; w++) {
                        lo[w] = completed[w].get();
                    }
                    store.snapshots().create("v", "c" + s);
                    maxBarrierNs = Math.max(maxBarrierNs, store.snapshots().lastBarrierNs());
                    for (int w = 0; w < WRITERS; w++) {
                        hi[w] = issued[w].get();
                    }
                    StoreVolume view = store.snapshots().open("v", "c" + s);
                    rq.submitRead(view, 0, buf, 1);
                    assertEquals(0, awaitResult(rq, 1));
                    store.snapshots().close(view);
                    for (int w = 0; w < WRITERS; w++) {
                        checkPrefix(buf, w, lo[w], hi[w], "snapshot c" + s);
                    }
                }
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
            }
            assertTrue(errors.isEmpty(), "writers failed: " + errors);
            assertTrue(completed[0].get() > 100, "writers made progress: " + completed[0].get());
            System.out.printf("snapshot barrier: %d snapshots under %d writers, longest barrier %.2f ms%n", SNAPSHOTS,
                    WRITERS, maxBarrierNs / 1e6);
        }
    }

    private static long blockOf(int writer, long i) {
        return ((long) writer * BLOCKS + (i % BLOCKS)) * STRIDE;
    }

    /** The writer's blocks hold exactly writes 1..G for one G in [lo, hi]. */
    private static void checkPrefix(MemorySegment buf, int w, long lo, long hi, String what) {
        long g = 0;
        for (int k = 0; k < BLOCKS; k++) {
            long block = ((long) w * BLOCKS + k) * STRIDE;
            g = Math.max(g, Math.max(0, BlockPattern.check(buf, block * BlockPattern.BLOCK, block)));
        }
        assertTrue(g >= lo && g <= hi, what + ": writer " + w + " cut at write " + g + ", outside [" + lo + ", " + hi
                + "]");
        for (int k = 0; k < BLOCKS; k++) {
            long block = ((long) w * BLOCKS + k) * STRIDE;
            long want = g - Math.floorMod(g - k, BLOCKS); // the last write i <= g with i mod BLOCKS == k
            long got = BlockPattern.check(buf, block * BlockPattern.BLOCK, block);
            assertEquals(want <= 0 ? -1 : want, got, what + ": writer " + w + " block " + k + " (cut at " + g + ")");
        }
    }
}
