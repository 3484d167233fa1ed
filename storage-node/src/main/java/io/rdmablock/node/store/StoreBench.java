package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.Set;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Random-read benchmark of one {@link BlockQueue}: {@code bs}-byte reads at random aligned offsets of a volume, at a
 * fixed queue depth, from one thread, for a fixed time. Prints IOPS and process CPU time per I/O
 * ({@code getrusage(RUSAGE_SELF)}: user + system of every thread, workers included). Run through
 * {@code ops/bench/store}.
 *
 * <p>Arguments: dataDir backend(io_uring|threadpool) sizeBytes seconds [qd=32] [bs=4096]. The volume {@code bench}
 * is created and filled with non-zero data on the first run (reads of holes would not reach the disk).
 */
public final class StoreBench {

    private StoreBench() {
    }

    public static void main(String[] args) throws Throwable {
        Path dir = Path.of(args[0]);
        IoBackend backend = StoreOptions.parseBackend(args[1]);
        long size = Long.parseLong(args[2]);
        double seconds = Double.parseDouble(args[3]);
        int qd = args.length > 4 ? Integer.parseInt(args[4]) : 32;
        int bs = args.length > 5 ? Integer.parseInt(args[5]) : 4096;
        try (VolumeStore store = VolumeStore.open(dir, io.rdmablock.node.NodeConfiguration.fromSystemProperties().storeOptions()
                .withBackend(backend));
             Arena arena = Arena.ofShared()) {
            StoreVolume v = store.find("bench").orElse(null);
            if (v == null || v.sizeBytes() != size) {
                if (v != null) {
                    store.delete("bench");
                }
                v = store.create(new VolumeSpec("bench", "bench", size, 4096, Set.of()));
                fill(store, v, arena);
            }
            boolean register = Boolean.parseBoolean(System.getProperty("bench.registerBuffers", "true"));
            try (BlockQueue q = store.newQueue(qd)) {
                MemorySegment bufs = arena.allocate((long) qd * bs, 4096);
                if (register) {
                    q.registerBuffers(bufs);
                }
                run(q, v, bufs, qd, bs, Math.min(2.0, seconds / 4), false, register); // warm-up
                run(q, v, bufs, qd, bs, seconds, true, register);
            }
        }
    }

    private static void fill(VolumeStore store, StoreVolume v, Arena arena) {
        int chunk = 1 << 20;
        MemorySegment buf = arena.allocate(chunk, 4096);
        buf.fill((byte) 0xa5);
        try (BlockQueue q = store.newQueue(8)) {
            long[] ud = new long[8];
            int[] res = new int[8];
            long next = 0;
            while (next < v.sizeBytes() || q.inFlight() > 0) {
                while (next < v.sizeBytes() && q.inFlight() < q.capacity()) {
                    q.submitWrite(v, next, buf, false, next);
                    next += chunk;
                }
                q.awaitCompletion(1_000_000_000L);
                int n = q.reap(ud, res, 8);
                for (int i = 0; i < n; i++) {
                    if (res[i] != 0) {
                        throw new IllegalStateException("fill failed: offset=" + ud[i] + ", result=" + res[i]);
                    }
                }
            }
            q.submitFlush(v, 0);
            while (q.inFlight() > 0) {
                q.awaitCompletion(1_000_000_000L);
                q.reap(ud, res, 8);
            }
        }
    }

    private static void run(BlockQueue q, StoreVolume v, MemorySegment bufs, int qd, int bs, double seconds,
                            boolean print, boolean registered) throws Throwable {
        long blocks = v.sizeBytes() / bs;
        long[] ud = new long[qd];
        int[] res = new int[qd];
        long x = 0x9E3779B97F4A7C15L;
        long ios = 0;
        long[] ru0 = rusage();
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        for (int s = 0; s < qd; s++) {
            x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
            q.submitRead(v, Long.remainderUnsigned(x, blocks) * bs, bufs.asSlice((long) s * bs, bs), s);
        }
        boolean stopping = false;
        while (q.inFlight() > 0) {
            int n = q.reap(ud, res, qd);
            if (n == 0) {
                q.awaitCompletion(100_000_000L);
                continue;
            }
            if (!stopping && System.nanoTime() >= end) {
                stopping = true;
            }
            for (int i = 0; i < n; i++) {
                if (res[i] != 0) {
                    throw new IllegalStateException("read failed: result=" + res[i]);
                }
                ios++;
                if (!stopping) {
                    int s = (int) ud[i];
                    x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
                    q.submitRead(v, Long.remainderUnsigned(x, blocks) * bs, bufs.asSlice((long) s * bs, bs), s);
                }
            }
        }
        long t1 = System.nanoTime();
        long[] ru1 = rusage();
        if (print) {
            double secs = (t1 - t0) / 1e9;
            double userUs = (ru1[0] - ru0[0]);
            double sysUs = (ru1[1] - ru0[1]);
            String name = q.backend() == IoBackend.IO_URING ? (registered ? "io_uring+reg" : "io_uring")
                    : "threadpool";
            System.out.printf("store %-12s bs=%d qd=%d: %.0f IOPS, cpu/io=%.2f us (user %.2f, sys %.2f), "
                            + "ios=%d, secs=%.1f%n", name, bs, qd, ios / secs, (userUs + sysUs) / ios, userUs / ios, sysUs / ios, ios, secs);
        }
    }

    private static MethodHandle getrusage;

    /** {user µs, system µs} of this process (getrusage(2), RUSAGE_SELF). */
    private static long[] rusage() throws Throwable {
        if (getrusage == null) {
            Linker l = Linker.nativeLinker();
            getrusage = l.downcallHandle(l.defaultLookup().find("getrusage").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ru = a.allocate(144, 8); // struct rusage: ru_utime at 0, ru_stime at 16 (timeval)
            int r = (int) getrusage.invokeExact(0, ru);
            if (r != 0) {
                throw new IllegalStateException("getrusage failed");
            }
            return new long[] {ru.get(JAVA_LONG, 0) * 1_000_000 + ru.get(JAVA_LONG, 8),
                ru.get(JAVA_LONG, 16) * 1_000_000 + ru.get(JAVA_LONG, 24)};
        }
    }
}
