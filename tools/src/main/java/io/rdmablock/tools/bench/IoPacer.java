package io.rdmablock.tools.bench;

/**
 * fio's {@code rate}, {@code rate_iops} and {@code thinktime}/{@code thinktime_blocks} for one job clone: how long an
 * I/O must wait before it is issued. Rates are per direction and averaged from the first I/O: the n-th read may start
 * at {@code first + n * max(bytes / rate, 1 / rate_iops)} (a job more than 1 s behind its schedule restarts the schedule
 * instead of bursting). thinktime: after every {@code thinktime_blocks} issued I/Os the job pauses {@code thinktime}
 * before issuing more (I/Os in flight complete meanwhile), as fio's {@code handle_thinktime} does. Times are
 * {@link System#nanoTime()} values passed in. Thread-safe.
 *
 * <p>{@code rate_process=poisson} (fio's backend.c {@code usec_for_io}): instead of the fixed period, each I/O of a
 * direction is followed by an exponentially distributed gap of mean {@code floor(1e6 / iops)} us, where
 * {@code iops = rate_bps / min_bs} ({@code rate_bps} = {@code rate}, else {@code rate_iops x bs}; {@code min_bs} the
 * direction's smallest block size), whatever the I/O's own length: a Poisson process of that rate. The gaps come from
 * the clone's seed (like its offsets), so {@code randrepeat=1} repeats them.
 */
final class IoPacer {
    private static final long MAX_LAG_NS = 1_000_000_000L;
    private final long[] rateBytes;
    private final long[] rateIops;
    private final long thinktimeNs;
    private final int thinktimeBlocks;
    private final long[] nextDueNs = new long[2];
    private final boolean[] started = new boolean[2];
    private long issued;
    private long pauseUntilNs;
    private boolean paused;
    /** Mean gap of rate_process=poisson per direction in ns, 0 = linear; and its generator. */
    private final long[] poissonMeanNs = new long[2];
    private final java.util.SplittableRandom poisson;

    IoPacer(JobSpec spec) {
        this(spec, spec.seed());
    }

    /** @param seed of the rate_process=poisson gaps (per clone, as fio seeds each thread's poisson_state) */
    IoPacer(JobSpec spec, long seed) {
        this.rateBytes = spec.rateBytes.clone();
        this.rateIops = spec.rateIops.clone();
        this.thinktimeNs = spec.thinktimeNs;
        this.thinktimeBlocks = spec.thinktimeBlocks;
        this.poisson = new java.util.SplittableRandom(seed ^ 0x5bd1e995L);
        for (int d = 0; d < 2 && spec.pattern.poisson; d++) {
            int minBs = d == 0 ? spec.bsRead : spec.bsWrite;
            for (FioValues.Split s : d == 0 ? spec.bssplit : spec.bssplitWrite) {
                minBs = Math.min(minBs, s.bs());
            }
            long bps = rateBytes[d] > 0 ? rateBytes[d] : rateIops[d] * minBs;
            long iops = bps / minBs;
            poissonMeanNs[d] = iops > 0 ? Math.max(1, 1_000_000 / iops) * 1_000L : 0;
        }
    }

    /** True when the job has any pacing. */
    static boolean needed(JobSpec spec) {
        return spec.thinktimeNs > 0 || spec.rateBytes[0] + spec.rateBytes[1] + spec.rateIops[0] + spec.rateIops[1] > 0;
    }

    /** Reserves a slot for an I/O of {@code lengthBytes}; returns the nanoseconds to wait before issuing it (0 = now). */
    synchronized long reserve(boolean read, int lengthBytes, long nowNs) {
        long wait = 0;
        if (thinktimeNs > 0) {
            if (paused && nowNs - pauseUntilNs < 0) {
                wait = pauseUntilNs - nowNs;
            }
            issued++;
            if (issued % thinktimeBlocks == 0) {
                pauseUntilNs = nowNs + wait + thinktimeNs;
                paused = true;
            }
        }
        int d = read ? 0 : 1;
        long periodNs = 0;
        if (rateBytes[d] > 0) {
            periodNs = Math.max(periodNs, (long) (lengthBytes * 1e9 / rateBytes[d]));
        }
        if (rateIops[d] > 0) {
            periodNs = Math.max(periodNs, (long) (1e9 / rateIops[d]));
        }
        if (poissonMeanNs[d] > 0) {
            periodNs = (long) (poissonMeanNs[d] * -Math.log(1 - poisson.nextDouble()));
        }
        if (periodNs > 0) {
            long at = nowNs + wait;
            if (!started[d] || at - nextDueNs[d] > MAX_LAG_NS) {
                started[d] = true;
                nextDueNs[d] = at;
            }
            long due = nextDueNs[d] - at > 0 ? nextDueNs[d] : at;
            nextDueNs[d] += periodNs;
            wait = Math.max(wait, due - nowNs);
        }
        return wait;
    }
}
