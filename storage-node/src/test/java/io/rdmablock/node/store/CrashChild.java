package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Child process of {@link CrashRecoveryTest}: writes region A ({@code A_BYTES} of seeded random data) at QD32,
 * FLUSHes, prints {@code FLUSHED}, then (mode {@code kill}) rewrites region B with self-describing blocks without
 * flushing, prints {@code WRITING} after the first completions and continues until killed (at most 60 s);
 * mode {@code graceful} closes the store and exits 0 after the flush.
 *
 * <p>Arguments: dataDir backend(io_uring|threadpool) mode(kill|graceful).
 */
final class CrashChild {

    static final long A_BYTES = 32L << 20;
    static final long B_BYTES = 8L << 20;
    static final long SEED = 0x5eedL;
    static final int CHUNK = 128 * 1024;

    private CrashChild() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        IoBackend backend = StoreOptions.parseBackend(args[1]);
        boolean graceful = args[2].equals("graceful");
        VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults().withBackend(backend));
        StoreVolume v = store.create(StoreTestSupport.spec("crash", A_BYTES + B_BYTES, 4096));
        BlockQueue q = store.newQueue(32);
        Arena arena = Arena.ofShared();
        MemorySegment a = arena.allocate(A_BYTES, 4096);
        StoreTestSupport.fillRandom(a, SEED);
        long[] ud = new long[32];
        int[] res = new int[32];
        long next = 0;
        while (next < A_BYTES || q.inFlight() > 0) {
            while (next < A_BYTES && q.inFlight() < q.capacity()) {
                q.submitWrite(v, next, a.asSlice(next, CHUNK), false, next);
                next += CHUNK;
            }
            q.awaitCompletion(1_000_000_000L);
            int n = q.reap(ud, res, 32);
            for (int i = 0; i < n; i++) {
                if (res[i] != 0) {
                    throw new IllegalStateException("write failed: offset=" + ud[i] + ", result=" + res[i]);
                }
            }
        }
        StoreTestSupport.flush(q, v);
        System.out.println("FLUSHED");
        System.out.flush();
        if (graceful) {
            q.close();
            store.close();
            System.exit(0);
        }
        int blocks = (int) (B_BYTES / BlockPattern.BLOCK);
        MemorySegment bufs = arena.allocate(32L * BlockPattern.BLOCK * 4, 4096);
        long gen = 0;
        long completed = 0;
        boolean announced = false;
        long deadline = System.nanoTime() + 60_000_000_000L;
        int[] free = new int[32];
        int freeCount = 32;
        for (int i = 0; i < 32; i++) {
            free[i] = i;
        }
        while (System.nanoTime() < deadline) {
            while (freeCount > 0) {
                int b = (int) ((gen * 4) % blocks);
                gen++;
                int slot = free[--freeCount];
                MemorySegment buf = bufs.asSlice((long) slot * 4 * BlockPattern.BLOCK, 4L * BlockPattern.BLOCK);
                for (int i = 0; i < 4; i++) {
                    BlockPattern.fill(buf, (long) i * BlockPattern.BLOCK, A_BYTES / BlockPattern.BLOCK + b + i, gen);
                }
                q.submitWrite(v, A_BYTES + (long) b * BlockPattern.BLOCK, buf, false, slot);
            }
            q.awaitCompletion(1_000_000_000L);
            int n = q.reap(ud, res, 32);
            for (int i = 0; i < n; i++) {
                free[freeCount++] = (int) ud[i];
            }
            completed += n;
            if (!announced && completed >= 64) {
                System.out.println("WRITING");
                System.out.flush();
                announced = true;
            }
        }
    }
}
