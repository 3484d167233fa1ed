package io.rdmablock.cli;

import io.rdmablock.initiator.BlockDevice;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * One row of the stack-only bench: a closed loop of {@code iodepth} 4 KiB random reads or writes on one device, for
 * a ramp then a measured window, with the CPU time of the node's and the initiator's threads over the window.
 *
 * <p>Run to completion as the bench's {@code Worker}: the thread that completes an I/O (the initiator's queue thread)
 * records its latency and submits the next one; nothing else runs per I/O. Latencies of the window go into a
 * preallocated array (at most {@link #MAX_SAMPLES}; beyond, the count goes on but percentiles use the first ones).
 *
 * <p>CPU attribution, by thread name ({@link ThreadMXBean#getThreadCpuTime}, user + system, ns): <b>node</b> =
 * {@code rdmablock-poller-*} (the target's pollers: capsule decode, store submit/reap, RDMA READ/WRITE posts, response
 * SEND; with the memory provider also the copies of those RDMA operations and of the response SEND, which a NIC
 * would do); <b>client</b> = {@code rdmablock-ioq-*} (the initiator's queue threads: submit, command SEND and its
 * copy into the node's RECV, completion handling, this loop's callback); <b>other</b> = every other live thread
 * (acceptor, controller, keep-alive, JIT and GC threads included), reported apart. Context switches per thread from
 * {@code /proc/self/task/<tid>/status} (voluntary + involuntary), by the same names ({@code comm} is cut at 15
 * characters: {@code rdmablock-polle}, {@code rdmablock-ioq-N}). Heap bytes allocated per I/O by the same roles
 * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}); the client's include this loop's own
 * {@code whenComplete} callback (a lambda and its completion node, about 60 bytes per I/O).
 */
final class StackBenchRun {
    static final int BLOCK_BYTES = 4096;
    static final int MAX_SAMPLES = 1 << 22;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    /** Figures of one row; CPU and context switches per I/O of the measured window. */
    record Row(String rw, int iodepth, double seconds, long ios, long errors, double iops, double p50Us,
               double p99Us, double nodeCpuNsPerIo, double clientCpuNsPerIo, double otherCpuNsPerIo,
               double nodeCtxPerIo, double clientCtxPerIo, double nodeAllocPerIo, double clientAllocPerIo,
               List<Map.Entry<String, Integer>> profile, int profileSamples) {
        /** 1e9 / node CPU ns per I/O: the IOPS one node core would sustain at this cost. */
        double iopsPerNodeCore() {
            return nodeCpuNsPerIo > 0 ? 1e9 / nodeCpuNsPerIo : 0;
        }
    }

    private final BlockDevice device;
    private final boolean write;
    private final int iodepth;
    private final long blocks;
    private final long[] latNs = new long[MAX_SAMPLES];
    private final AtomicInteger samples = new AtomicInteger();
    private volatile boolean measuring;
    private volatile boolean stop;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final java.util.concurrent.atomic.LongAdder ios = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder errors = new java.util.concurrent.atomic.LongAdder();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();

    StackBenchRun(BlockDevice device, boolean write, int iodepth) {
        this.device = device;
        this.write = write;
        this.iodepth = iodepth;
        this.blocks = device.capacityBytes() / BLOCK_BYTES;
    }

    /** Runs the row: {@code rampNs} unmeasured, then {@code runtimeNs} measured; profiles node pollers if asked. */
    Row run(long rampNs, long runtimeNs, boolean profile) throws InterruptedException {
        MemorySegment[] bufs = new MemorySegment[iodepth];
        for (int i = 0; i < iodepth; i++) {
            bufs[i] = device.allocateBuffer(BLOCK_BYTES);
            bufs[i].fill((byte) i);
        }
        try {
            for (int i = 0; i < iodepth; i++) {
                inFlight.incrementAndGet();
                submit(bufs[i], new SplittableRandom(0x5EED + 31L * i + (write ? 7 : 0)));
            }
            Thread.sleep(rampNs / 1_000_000L);
            Map<Long, long[]> before = threadStats();
            Map<String, Long> ctxBefore = ctxByName();
            long t0 = System.nanoTime();
            measuring = true;
            Map<String, Integer> frames = new HashMap<>();
            int profiled = profile ? sample(t0 + runtimeNs, frames) : 0;
            long left = t0 + runtimeNs - System.nanoTime();
            if (left > 0) {
                Thread.sleep(left / 1_000_000L, (int) (left % 1_000_000L));
            }
            measuring = false;
            long t1 = System.nanoTime();
            long n = ios.sumThenReset();
            Map<Long, long[]> after = threadStats();
            Map<String, Long> ctxAfter = ctxByName();
            stop = true;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (inFlight.get() > 0 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000L);
            }
            long[] cpu = byRole(before, after, 0);
            long[] alloc = byRole(before, after, 2);
            int k = Math.min(samples.get(), MAX_SAMPLES);
            long[] lat = Arrays.copyOf(latNs, k);
            Arrays.sort(lat);
            double secs = (t1 - t0) / 1e9;
            double per = Math.max(1, n);
            List<Map.Entry<String, Integer>> top = frames.entrySet().stream()
                    .sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(25).toList();
            return new Row(write ? "randwrite" : "randread", iodepth, secs, n, errors.sum(), n / secs,
                    pct(lat, 0.50), pct(lat, 0.99), cpu[0] / per, cpu[1] / per, cpu[2] / per,
                    (ctxAfter.getOrDefault("node", 0L) - ctxBefore.getOrDefault("node", 0L)) / per,
                    (ctxAfter.getOrDefault("client", 0L) - ctxBefore.getOrDefault("client", 0L)) / per,
                    alloc[0] / per, alloc[1] / per, top, profiled);
        } finally {
            stop = true;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (inFlight.get() > 0 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(1_000_000L);
            }
            for (MemorySegment b : bufs) {
                if (b != null && inFlight.get() == 0) {
                    device.freeBuffer(b);
                }
            }
        }
    }

    /** The first I/O error of the row, or null. */
    Throwable firstError() {
        return firstError.get();
    }

    private void submit(MemorySegment buf, SplittableRandom rnd) {
        long off = rnd.nextLong(blocks) * BLOCK_BYTES;
        long start = System.nanoTime();
        CompletableFuture<Void> f = write ? device.write(off, buf, false) : device.read(off, buf);
        BiConsumer<Void, Throwable> done = (v, t) -> {
            long end = System.nanoTime();
            if (t != null) {
                errors.increment();
                firstError.compareAndSet(null, t);
            } else if (measuring) {
                ios.increment();
                int i = samples.getAndIncrement();
                if (i < MAX_SAMPLES) {
                    latNs[i] = end - start;
                }
            }
            if (stop || t != null) {
                inFlight.decrementAndGet();
            } else {
                submit(buf, rnd);
            }
        };
        f.whenComplete(done);
    }

    private static double pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
        return sorted[i] / 1000.0;
    }

    static String role(String threadName) {
        if (threadName.startsWith("rdmablock-poller-") || threadName.startsWith("rdmablock-polle")) {
            return "node";
        }
        if (threadName.startsWith("rdmablock-ioq-")) {
            return "client";
        }
        return "other";
    }

    /**
     * thread id -> {cpu ns, role index (0 node, 1 client, 2 other), bytes allocated on the Java heap
     * ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}; -1 when the JVM cannot tell)}.
     */
    private static Map<Long, long[]> threadStats() {
        Map<Long, long[]> m = new HashMap<>();
        for (ThreadInfo ti : MX.getThreadInfo(MX.getAllThreadIds(), 0)) {
            if (ti == null) {
                continue;
            }
            long ns = MX.getThreadCpuTime(ti.getThreadId());
            if (ns >= 0) {
                String r = role(ti.getThreadName());
                long bytes = MX instanceof com.sun.management.ThreadMXBean x
                        ? x.getThreadAllocatedBytes(ti.getThreadId()) : -1;
                m.put(ti.getThreadId(), new long[] {ns, r.equals("node") ? 0 : r.equals("client") ? 1 : 2, bytes});
            }
        }
        return m;
    }

    /**
     * Field {@code field} of {@link #threadStats()} (0 CPU ns, 2 allocated bytes) summed over the window per role; a
     * thread that started inside the window counts from 0.
     */
    private static long[] byRole(Map<Long, long[]> before, Map<Long, long[]> after, int field) {
        long[] sum = new long[3];
        for (Map.Entry<Long, long[]> e : after.entrySet()) {
            long[] b = before.get(e.getKey());
            sum[(int) e.getValue()[1]] += Math.max(0, e.getValue()[field] - (b == null ? 0 : b[field]));
        }
        return sum;
    }

    /** Voluntary + involuntary context switches of this process's threads by role (/proc/self/task). */
    static Map<String, Long> ctxByName() {
        Map<String, Long> m = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                try {
                    String name = null;
                    long n = 0;
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("Name:")) {
                            name = line.substring(5).strip();
                        } else if (line.startsWith("voluntary_ctxt_switches:")
                                || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            n += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
                        }
                    }
                    if (name != null) {
                        m.merge(role(name), n, Long::sum);
                    }
                } catch (java.io.IOException | RuntimeException e) {
                    // the thread exited meanwhile
                }
            }
        } catch (java.io.IOException e) {
            return m;
        }
        return m;
    }

    /**
     * A sampling profile of the node pollers until {@code endNs}: every 2 ms their stacks (ThreadMXBean, so at
     * safepoints: biased, but enough to rank costs), counting each sample's top frame as {@code "self <frame>"} and
     * every distinct io.rdmablock frame of the stack as {@code "incl <frame>"}. Returns the number of stacks taken.
     */
    private static int sample(long endNs, Map<String, Integer> frames) {
        int taken = 0;
        while (System.nanoTime() < endNs) {
            for (ThreadInfo ti : MX.getThreadInfo(MX.getAllThreadIds(), 64)) {
                if (ti == null || !role(ti.getThreadName()).equals("node")
                        || ti.getThreadState() != Thread.State.RUNNABLE) {
                    continue;
                }
                StackTraceElement[] st = ti.getStackTrace();
                if (st.length == 0) {
                    continue;
                }
                taken++;
                frames.merge("self " + frame(st[0]), 1, Integer::sum);
                java.util.Set<String> seen = new java.util.HashSet<>();
                for (StackTraceElement e : st) {
                    if (e.getClassName().startsWith("io.rdmablock.") && seen.add(frame(e))) {
                        frames.merge("incl " + frame(e), 1, Integer::sum);
                    }
                }
            }
            LockSupport.parkNanos(2_000_000L);
        }
        return taken;
    }

    private static String frame(StackTraceElement e) {
        String c = e.getClassName();
        return c.substring(c.lastIndexOf('.') + 1) + "." + e.getMethodName();
    }
}
