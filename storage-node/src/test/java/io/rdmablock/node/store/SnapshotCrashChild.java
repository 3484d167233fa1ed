package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Child process of {@link SnapshotCrashTest}: fills a mapped volume with generation 0, FLUSHes, takes snapshot
 * {@code base} (prints {@code BASE}); then writes 4-block runs at random ({@link #SEED}; write {@code i} stamps
 * generation {@code i}) at QD16 without flushing, never two overlapping runs in flight (a write waits for the one in
 * flight on any of its blocks: two overlapping writes in flight together may land in either order, on this store as
 * on any block device, so the expected content would not be known), and every {@link #EVERY} writes drains, takes
 * snapshot {@code s<i>} (prints {@code SNAP s<i>} when it returned) and deletes the oldest beyond four (prints
 * {@code DEL <name>} when it returned), until killed (at most 60 s). Prints {@code WRITING} after the first
 * {@code SNAP}.
 *
 * <p>Arguments: dataDir backend(io_uring|threadpool).
 */
final class SnapshotCrashChild {
    static final long SIZE = 8L << 20;
    static final int CLUSTER = 64 << 10;
    static final long SEED = 0xC0FFEEL;
    static final int EVERY = 40;
    static final int RUN = 4;

    private SnapshotCrashChild() {
    }

    /** The block written first by write {@code i} of the sequence {@code rnd} produces. */
    static int nextBlock(SplittableRandom rnd) {
        return rnd.nextInt((int) (SIZE / BlockPattern.BLOCK) - RUN);
    }

    public static void main(String[] args) throws Exception {
        VolumeStore store = VolumeStore.open(Path.of(args[0]),
                StoreOptions.defaults().withBackend(StoreOptions.parseBackend(args[1])).withClusterBytes(CLUSTER));
        StoreVolume v = store.create(StoreTestSupport.spec("snap", SIZE, 4096));
        BlockQueue q = store.newQueue(16);
        Arena arena = Arena.ofShared();
        MemorySegment all = arena.allocate(SIZE, 4096);
        for (long b = 0; b < SIZE / BlockPattern.BLOCK; b++) {
            BlockPattern.fill(all, b * BlockPattern.BLOCK, b, 0);
        }
        StoreTestSupport.write(q, v, 0, all);
        StoreTestSupport.flush(q, v);
        store.snapshots().create("snap", "base");
        System.out.println("BASE");
        System.out.flush();
        SplittableRandom rnd = new SplittableRandom(SEED);
        MemorySegment bufs = arena.allocate(16L * RUN * BlockPattern.BLOCK, 4096);
        long[] ud = new long[16];
        int[] res = new int[16];
        int[] free = new int[16];
        int[] first = new int[16]; // first block of the run in flight in each slot, -1 when the slot is free
        Arrays.fill(first, -1);
        int freeCount = 16;
        for (int i = 0; i < 16; i++) {
            free[i] = i;
        }
        ArrayDeque<String> snaps = new ArrayDeque<>();
        long deadline = System.nanoTime() + 60_000_000_000L;
        for (long i = 1; System.nanoTime() < deadline; i++) {
            int b = nextBlock(rnd);
            while (freeCount == 0 || overlapsInFlight(first, b)) {
                q.awaitCompletion(1_000_000_000L);
                freeCount = reap(q, ud, res, free, freeCount, first);
            }
            int slot = free[--freeCount];
            first[slot] = b;
            MemorySegment buf = bufs.asSlice((long) slot * RUN * BlockPattern.BLOCK, (long) RUN * BlockPattern.BLOCK);
            for (int k = 0; k < RUN; k++) {
                BlockPattern.fill(buf, (long) k * BlockPattern.BLOCK, b + k, i);
            }
            q.submitWrite(v, (long) b * BlockPattern.BLOCK, buf, false, slot);
            if (i % EVERY == 0) {
                while (freeCount < 16) {
                    q.awaitCompletion(1_000_000_000L);
                    freeCount = reap(q, ud, res, free, freeCount, first);
                }
                store.snapshots().create("snap", "s" + i);
                snaps.add("s" + i);
                System.out.println("SNAP s" + i);
                if (snaps.size() == 1) {
                    System.out.println("WRITING");
                }
                if (snaps.size() > 4) {
                    String old = snaps.poll();
                    store.snapshots().delete("snap", old);
                    System.out.println("DEL " + old);
                }
                System.out.flush();
            }
        }
    }

    /** True when a run in flight shares a block with the run starting at block {@code b}. */
    private static boolean overlapsInFlight(int[] first, int b) {
        for (int f : first) {
            if (f >= 0 && f < b + RUN && b < f + RUN) {
                return true;
            }
        }
        return false;
    }

    /** Reaps what completed: its slots become free; returns the new count of free slots. */
    private static int reap(BlockQueue q, long[] ud, int[] res, int[] free, int freeCount, int[] first) {
        int n = q.reap(ud, res, 16);
        for (int k = 0; k < n; k++) {
            check(res[k]);
            first[(int) ud[k]] = -1;
            free[freeCount++] = (int) ud[k];
        }
        return freeCount;
    }

    private static void check(int res) {
        if (res != 0) {
            throw new IllegalStateException("write failed: result=" + res);
        }
    }
}
