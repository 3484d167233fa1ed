package io.rdmablock.tools.bench;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * fio's {@code rate_min} / {@code rate_iops_min} / {@code rate_cycle} for one job clone (fio HOWTO "I/O rate"; fio's
 * backend.c {@code __check_min_rate}): after a settle period of 2 s from the job's start (and not during
 * {@code ramp_time}), every {@code rate_cycle} ms the bytes (or I/Os) each direction completed since the last check,
 * per second, must reach the minimum; a direction that did no I/O at all is not checked. Below it the job fails with
 * EIO (error 5), as fio's does: {@code <job>: rate_min=<B/s>B/s not met, got <B/s>B/s} or
 * {@code <job>: rate_iops_min=<n> not met, got <n> IOPS}. Runs on the clone's timer thread.
 */
final class MinRate implements Runnable {
    static final long SETTLE_NS = 2_000_000_000L;
    private final Job job;
    private final PatternOptions p;
    private final long[] lastBytes = new long[2];
    private final long[] lastIos = new long[2];
    private long lastNs;
    private boolean started;

    private MinRate(Job job) {
        this.job = job;
        this.p = job.spec.pattern;
    }

    /** True when the job has a minimum rate. */
    static boolean needed(JobSpec spec) {
        PatternOptions p = spec.pattern;
        return p.minRateBytes[0] + p.minRateBytes[1] + p.minRateIops[0] + p.minRateIops[1] > 0;
    }

    /** Starts the checks of {@code job} on {@code timer} when it has a minimum rate (after {@link Job#begin}). */
    static void schedule(Job job, ScheduledExecutorService timer) {
        if (needed(job.spec)) {
            long first = Math.max(job.startNs + SETTLE_NS, job.rampEndNs) - System.nanoTime();
            timer.scheduleAtFixedRate(new MinRate(job), Math.max(0, first), job.spec.pattern.rateCycleNs,
                    TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void run() {
        if (job.stop || job.finished.getCount() == 0) {
            return;
        }
        long now = System.nanoTime();
        long[] bytes = {job.readBytes.sum(), job.writeBytes.sum()};
        long[] ios = {job.readOps.sum(), job.writeOps.sum()};
        long spentMs = (now - lastNs) / 1_000_000;
        for (int d = 0; d < 2 && started && spentMs > 0; d++) {
            if (bytes[d] == 0) {
                continue;
            }
            String bad = null;
            if (p.minRateBytes[d] > 0) {
                long rate = (bytes[d] - lastBytes[d]) * 1000 / spentMs;
                bad = rate < p.minRateBytes[d] ? "rate_min=" + p.minRateBytes[d] + "B/s not met, got " + rate + "B/s"
                        : null;
            } else if (p.minRateIops[d] > 0) {
                long rate = (ios[d] - lastIos[d]) * 1000 / spentMs;
                bad = rate < p.minRateIops[d] ? "rate_iops_min=" + p.minRateIops[d] + " not met, got " + rate + " IOPS"
                        : null;
            }
            if (bad != null) {
                String message = job.name + ": " + bad;
                job.fail(new java.io.IOException(message) {
                    @Override
                    public String toString() {
                        return "check_min_rate: " + message;
                    }
                });
                return;
            }
        }
        System.arraycopy(bytes, 0, lastBytes, 0, 2);
        System.arraycopy(ios, 0, lastIos, 0, 2);
        lastNs = now;
        started = true;
    }
}
