package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A load generator on one {@link BlockQueue} for the store's benchmarks ({@link SnapshotBench}): 4K random reads or
 * writes at a queue depth for a time, or a sequential pass of writes; per-I/O latency kept (at most 4M samples).
 */
final class Load {
    private static final int MAX_SAMPLES = 1 << 22;

    /** What a run did: I/Os, seconds, latencies in ns (sorted). */
    record Result(long ios, double secs, long[] lat) {
        double iops() {
            return ios / secs;
        }

        double mibps(int bs) {
            return ios * (double) bs / (1 << 20) / secs;
        }

        /** The {@code q} quantile of latency, ns. */
        double p(double q) {
            return lat.length == 0 ? 0 : lat[(int) Math.min(lat.length - 1, Math.floor(q * lat.length))];
        }

        double max() {
            return lat.length == 0 ? 0 : lat[lat.length - 1];
        }
    }

    private final VolumeStore store;
    private final StoreVolume v;
    private final MemorySegment bufs;
    private long x = 0x9E3779B97F4A7C15L;

    Load(VolumeStore store, StoreVolume v, Arena arena) {
        this.store = store;
        this.v = v;
        this.bufs = arena.allocate(32L << 20, 4096);
        bufs.fill((byte) 0x5a);
    }

    /** 4K random I/O at {@code qd} for {@code secs}. */
    Result random(boolean write, int qd, double secs) {
        long blocks = v.sizeBytes() / 4096;
        long[] lat = new long[MAX_SAMPLES];
        long[] start = new long[qd];
        int n = 0;
        long ios = 0;
        try (BlockQueue q = store.newQueue(qd)) {
            long[] ud = new long[qd];
            int[] res = new int[qd];
            long t0 = System.nanoTime();
            long end = t0 + (long) (secs * 1e9);
            for (int s = 0; s < qd; s++) {
                start[s] = System.nanoTime();
                submit(q, write, next(blocks) * 4096, bufs.asSlice(s * 4096L, 4096), s);
            }
            while (q.inFlight() > 0) {
                int m = q.reap(ud, res, qd);
                if (m == 0) {
                    q.awaitCompletion(1_000_000L);
                    continue;
                }
                long now = System.nanoTime();
                for (int i = 0; i < m; i++) {
                    check(res[i]);
                    int s = (int) ud[i];
                    if (n < lat.length) {
                        lat[n++] = now - start[s];
                    }
                    ios++;
                    if (now < end) {
                        start[s] = now;
                        submit(q, write, next(blocks) * 4096, bufs.asSlice(s * 4096L, 4096), s);
                    }
                }
            }
            double took = (System.nanoTime() - t0) / 1e9;
            long[] sorted = Arrays.copyOf(lat, n);
            Arrays.sort(sorted);
            return new Result(ios, took, sorted);
        }
    }

    /** Writes {@code [0, bytes)} in {@code bs} pieces at {@code qd}, then (with {@code flush}) FLUSHes. */
    Result sequential(int bs, int qd, long bytes, boolean flush) {
        try (BlockQueue q = store.newQueue(qd)) {
            long[] ud = new long[qd];
            int[] res = new int[qd];
            long next = 0;
            long ios = 0;
            long t0 = System.nanoTime();
            while (next < bytes || q.inFlight() > 0) {
                while (next < bytes && q.inFlight() < qd) {
                    long len = Math.min(bs, bytes - next);
                    q.submitWrite(v, next, bufs.asSlice((long) (q.inFlight() % 16) * bs % (bufs.byteSize() - bs), len),
                            false, next);
                    next += len;
                }
                q.awaitCompletion(100_000_000L);
                int m = q.reap(ud, res, qd);
                for (int i = 0; i < m; i++) {
                    check(res[i]);
                }
                ios += m;
            }
            if (flush) {
                q.submitFlush(v, 0);
                while (q.inFlight() > 0) {
                    q.awaitCompletion(100_000_000L);
                    int m = q.reap(ud, res, qd);
                    for (int i = 0; i < m; i++) {
                        check(res[i]);
                    }
                }
            }
            return new Result(ios, (System.nanoTime() - t0) / 1e9, new long[0]);
        }
    }

    private void submit(BlockQueue q, boolean write, long off, MemorySegment buf, long ud) {
        if (write) {
            q.submitWrite(v, off, buf, false, ud);
        } else {
            q.submitRead(v, off, buf, ud);
        }
    }

    private long next(long blocks) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return Long.remainderUnsigned(x, blocks);
    }

    private static void check(int res) {
        if (res != 0) {
            throw new IllegalStateException("I/O failed: result=" + res);
        }
    }
}
