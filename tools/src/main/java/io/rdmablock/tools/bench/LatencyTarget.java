package io.rdmablock.tools.bench;

/**
 * fio's latency-target queue-depth search ({@code latency_target}, {@code latency_window},
 * {@code latency_percentile}), as in fio's {@code io_u.c} ({@code lat_target_init}, {@code lat_target_check},
 * {@code lat_target_success}, {@code __lat_target_failed}, {@code lat_target_failed}): the job starts at depth 1,
 * doubles the depth after each window in which at least {@code percentile}% of the I/Os completed within the target
 * (bisecting once a depth has failed), halves towards the last good depth when a window fails, and when a window
 * leaves the depth unchanged runs one more window at that depth with fresh statistics and ends the job. With
 * percentile 100 a single late I/O fails the window at once, and a late I/O at depth 1 is fatal (fio: "latency of N
 * nsec exceeds specified max", ETIMEDOUT). Times are nanoseconds passed in. Thread-safe.
 */
final class LatencyTarget {
    /** What a completion or window check asks of the worker. */
    enum Event { NONE, DEPTH_CHANGED, RESET_STATS, DONE, FATAL }

    private final long targetNs;
    private final long windowNs;
    private final double percentile;
    private final int iodepth;
    private int qd = 1;
    private int qdLow = 1;
    private int qdHigh;
    private int stableCount;
    private boolean endRun;
    private long windowStartNs;
    private long windowIos;
    private long windowFailed;

    LatencyTarget(JobSpec spec, long nowNs) {
        this.targetNs = spec.latencyTargetNs;
        this.windowNs = spec.latencyWindowNs;
        this.percentile = spec.latencyPercentile;
        this.iodepth = spec.iodepth;
        this.qdHigh = spec.iodepth;
        this.windowStartNs = nowNs;
    }

    /** The current queue depth. */
    synchronized int depth() {
        return qd;
    }

    /** Accounts one completion of total latency {@code latNs}; may end the window. */
    synchronized Event complete(long latNs, long nowNs) {
        windowIos++;
        if (latNs > targetNs) {
            if (percentile == 100.0) {
                if (qd == 1) {
                    return Event.FATAL;
                }
                failed(nowNs);
                return Event.DEPTH_CHANGED;
            }
            windowFailed++;
        }
        if (nowNs - windowStartNs < windowNs) {
            return Event.NONE;
        }
        double success = 100.0 * (windowIos - windowFailed) / windowIos;
        if (success >= percentile) {
            return success(nowNs);
        }
        if (qd > 1) {
            failed(nowNs);
        } else {
            newCycle(nowNs);
        }
        return Event.DEPTH_CHANGED;
    }

    private void newCycle(long nowNs) {
        windowStartNs = nowNs;
        windowIos = 0;
        windowFailed = 0;
    }

    private void failed(long nowNs) {
        qdHigh = qd;
        if (qd == qdLow) {
            qdLow--;
        }
        qd = Math.max(1, (qd + qdLow) / 2);
        stableCount = 0;
        newCycle(nowNs);
    }

    private Event success(long nowNs) {
        int before = qd;
        qdLow = qd;
        if (qd + 1 == qdHigh && ++stableCount >= 3) {
            qdHigh++;
            stableCount = 0;
        }
        if (qdHigh != iodepth) {
            qd = (qd + qdHigh) / 2;
        } else {
            qd *= 2;
        }
        qd = Math.min(qd, iodepth);
        newCycle(nowNs);
        if (qd == before) {
            if (endRun) {
                return Event.DONE;
            }
            endRun = true;
            return Event.RESET_STATS;
        }
        return Event.DEPTH_CHANGED;
    }

    long targetNs() {
        return targetNs;
    }
}
