package io.rdmablock.node.qos;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.rdma.fabric.Opcodes;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Benchmark of {@link VolumeQosLimiter} on the real clock (ops/bench/qos; not a test: figures depend on the
 * machine): {@code threads} poller-like threads, each with {@code depth} commands outstanding, ask one volume's
 * limiter for budget in rounds of {@code roundUs} us (an admitted command completes at the end of its round, as a
 * store at that latency would), for {@code seconds}; prints the measured IOPS against the limit, a live change
 * from the limit to 4x at half time, and the cost of one {@link VolumeQosLimiter#tryAcquire} with and without a
 * limit.
 *
 * <p>Arguments: {@code iops threads depth seconds roundUs}, defaults {@code 5000 4 32 10 50}.
 */
public final class QosBench {
    private QosBench() {
    }

    public static void main(String[] args) throws InterruptedException {
        long iops = args.length > 0 ? Long.parseLong(args[0]) : 5_000;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        int depth = args.length > 2 ? Integer.parseInt(args[2]) : 32;
        int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        long roundNs = (args.length > 4 ? Long.parseLong(args[4]) : 50) * 1_000;
        VolumeQosLimiter limiter = new VolumeQosLimiter();
        limiter.apply(VolumeQos.ofIops(iops), 1L << 30);
        System.out.printf("qos bench: limit %d IOPS, %d threads x QD%d, %d s, rounds of %d us%n", iops, threads,
                depth, seconds, roundNs / 1_000);
        long[] perSecond = run(limiter, threads, depth, seconds, roundNs, iops);
        int half = seconds / 2;
        long before = 0;
        long after = 0;
        for (int s = 0; s < seconds; s++) {
            System.out.printf("  second %2d: %,8d IOPS%s%n", s + 1, perSecond[s], s == half ? " (live change)" : "");
            if (s < half) {
                before += perSecond[s];
            } else if (s > half) {
                after += perSecond[s];
            }
        }
        double measured = (double) before / Math.max(1, half);
        double changed = (double) after / Math.max(1, seconds - half - 1);
        System.out.printf("measured %.0f IOPS against %d (ratio %.3f) over %d s; after the live change to %d: %.0f "
                + "IOPS (ratio %.3f)%n", measured, iops, measured / iops, half, 4 * iops, changed,
                changed / (4 * iops));
        System.out.printf("tryAcquire: %.1f ns without a limit, %.1f ns with one (uncontended)%n",
                cost(new VolumeQosLimiter()), cost(limited()));
    }

    private static VolumeQosLimiter limited() {
        VolumeQosLimiter l = new VolumeQosLimiter();
        l.apply(VolumeQos.ofIops(VolumeQos.MAX_IOPS), 1L << 30);
        return l;
    }

    /** ns per call, best of 5 runs of 2M calls. */
    private static double cost(VolumeQosLimiter l) {
        double best = Double.MAX_VALUE;
        long sink = 0;
        for (int run = 0; run < 5; run++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 2_000_000; i++) {
                if (l.tryAcquire(Opcodes.IO_READ, 4096, t0)) {
                    sink++;
                }
            }
            best = Math.min(best, (System.nanoTime() - t0) / 2_000_000.0);
        }
        return sink < 0 ? -1 : best;
    }

    private static long[] run(VolumeQosLimiter limiter, int threads, int depth, int seconds, long roundNs, long iops)
            throws InterruptedException {
        AtomicLongArray admitted = new AtomicLongArray(seconds);
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    long now;
                    while ((now = System.nanoTime()) < end) {
                        int second = (int) ((now - start) / 1_000_000_000L);
                        int n = 0;
                        while (n < depth && limiter.tryAcquire(Opcodes.IO_READ, 4096, now)) {
                            n++;
                        }
                        admitted.addAndGet(second, n);
                        java.util.concurrent.locks.LockSupport.parkNanos(roundNs);
                    }
                } finally {
                    done.countDown();
                }
            }, "qos-bench-" + t);
            th.setDaemon(true);
            th.start();
        }
        Thread.sleep(seconds * 500L);
        limiter.apply(VolumeQos.ofIops(4 * iops), 1L << 30); // the live change
        done.await();
        long[] out = new long[seconds];
        for (int s = 0; s < seconds; s++) {
            out[s] = admitted.get(s);
        }
        return out;
    }
}
