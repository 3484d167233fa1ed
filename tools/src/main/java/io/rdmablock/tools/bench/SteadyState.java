package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * fio's steady-state detection (fio HOWTO "Steady state"; source {@code steadystate.c}, line for line): every
 * {@code steadystate_check_interval} (default 1 s, at least 1 s) the IOPS and bandwidth of the jobs it watches (one
 * clone, or with {@code group_reporting} every clone of the group) over the last interval go into a rolling window of
 * {@code steadystate_duration / steadystate_check_interval} values, starting one interval after
 * {@code steadystate_ramp_time}. Once the window is full, each check computes the criterion: {@code iops} and
 * {@code bw}, the largest absolute difference of a value from the window's mean; {@code iops_slope} and
 * {@code bw_slope}, the least-squares slope of the values against their index (|slope|); with a {@code %} limit, as a
 * percentage of the mean. Below the limit, steady state is attained and the jobs end as at their runtime's end.
 * Values: IOPS in I/Os per second, bandwidth in bytes per second, scaled as fio does by the actual time since the
 * previous check over the interval. Not thread-safe: the runner's thread only.
 */
final class SteadyState {

    /**
     * The options of one job.
     *
     * @param iops       true for iops/iops_slope, false for bw/bw_slope
     * @param slope      true for the slope forms, false for the mean deviation forms
     * @param pct        the limit is a percentage of the mean
     * @param limit      the limit (IOPS, bytes/s or %)
     * @param durNs      steadystate_duration, whole seconds; 0 = off
     * @param rampNs     steadystate_ramp_time
     * @param intervalNs steadystate_check_interval, whole seconds
     */
    record Spec(boolean iops, boolean slope, boolean pct, double limit, long durNs, long rampNs, long intervalNs) {

        static final Spec OFF = new Spec(true, true, true, 0.01, 0, 0, 1_000_000_000L);

        /**
         * Parses {@code steadystate=iops|bw|iops_slope|bw_slope:LIMIT[%]} (fio's {@code str_steadystate_cb}; a bw
         * limit takes size suffixes).
         *
         * @throws IllegalArgumentException naming the option and the allowed forms
         */
        Spec withCriterion(String v) {
            int colon = v.indexOf(':');
            String crit = (colon < 0 ? v : v.substring(0, colon)).strip();
            String lim = colon < 0 ? "" : v.substring(colon + 1).strip();
            if (crit.equals("lat") || crit.equals("lat_slope")) {
                throw new IllegalArgumentException("invalid steadystate: '" + v + "': the lat criteria are not"
                        + " supported yet, allowed=iops|bw|iops_slope|bw_slope:LIMIT[%]");
            }
            if (!List.of("iops", "bw", "iops_slope", "bw_slope").contains(crit) || lim.isEmpty()) {
                throw new IllegalArgumentException("invalid steadystate: '" + v
                        + "', allowed=iops|bw|iops_slope|bw_slope:LIMIT[%] (e.g. iops_slope:0.1%)");
            }
            boolean isIops = crit.startsWith("iops");
            boolean isPct = lim.endsWith("%");
            double l;
            try {
                l = isPct ? Double.parseDouble(lim.substring(0, lim.length() - 1).strip())
                        : isIops ? Double.parseDouble(lim) : FioValues.size("steadystate", lim);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("invalid steadystate: '" + v + "': limit '" + lim
                        + "' is not a number");
            }
            if (l < 0) {
                throw new IllegalArgumentException("invalid steadystate: '" + v + "': limit min=0");
            }
            return new Spec(isIops, crit.endsWith("_slope"), isPct, l, durNs, rampNs, intervalNs);
        }

        Spec withDuration(long ns) {
            return new Spec(iops, slope, pct, limit, ns, rampNs, intervalNs);
        }

        Spec withRamp(long ns) {
            return new Spec(iops, slope, pct, limit, durNs, ns, intervalNs);
        }

        Spec withInterval(long ns) {
            return new Spec(iops, slope, pct, limit, durNs, rampNs, ns);
        }

        /** fio's checks ({@code init.c} fixup_options), before any I/O. */
        void validate(String job) {
            if (durNs == 0) {
                return;
            }
            if (intervalNs < 1_000_000_000L || intervalNs % 1_000_000_000L != 0) {
                throw new IllegalArgumentException("invalid steadystate_check_interval: " + intervalNs / 1e9
                        + " s in job '" + job + "': min=1s, whole seconds");
            }
            if (durNs % intervalNs != 0 || durNs <= intervalNs) {
                throw new IllegalArgumentException("invalid steadystate_duration: " + durNs / 1e9 + " s in job '"
                        + job + "': must be a multiple of steadystate_check_interval (" + intervalNs / 1_000_000_000L
                        + " s) and at least twice it");
            }
        }

        int intervals() {
            return (int) (durNs / intervalNs);
        }

        /** fio's "ss" string: {@code iops_slope:0.010000%}. */
        String text() {
            return String.format(Locale.ROOT, "%s%s:%f%s", iops ? "iops" : "bw", slope ? "_slope" : "", (float) limit,
                    pct ? "%" : "");
        }
    }

    final Spec spec;
    private final List<Job> jobs;
    private final int intervals;
    private final long intervalMs;
    private final long[] bwData;
    private final long[] iopsData;
    private final long sumX;
    private final long sumXSq;
    private int head;
    private int tail;
    private boolean bufferFull;
    private boolean rampOver;
    private volatile boolean attained;
    private long sumY;
    private long sumXY;
    private long oldestY;
    private double slope;
    private double deviation;
    private double criterion;
    private long prevIos;
    private long prevBytes;
    private long prevTimeNs;
    private long epochNs;
    private long nextCheckNs;

    SteadyState(Spec spec, List<Job> jobs) {
        this.spec = spec;
        this.jobs = new ArrayList<>(jobs);
        this.intervals = spec.intervals();
        this.intervalMs = spec.intervalNs / 1_000_000;
        this.bwData = new long[intervals];
        this.iopsData = new long[intervals];
        this.sumX = (long) intervals * (intervals - 1) / 2;
        this.sumXSq = (long) (intervals - 1) * intervals * (2L * intervals - 1) / 6;
        this.rampOver = spec.rampNs == 0;
    }

    /**
     * The checks for the jobs of one phase: one per clone with steadystate_duration, or with group_reporting one per
     * reporting group (fio's {@code steadystate_setup}); each job's {@link Job#steady} is set.
     *
     * @throws IllegalArgumentException when the jobs of a group have different steady-state options (fio: "steadystate
     *                                  options must be consistent within reporting groups")
     */
    static List<SteadyState> watch(List<Job> jobs) {
        List<SteadyState> out = new ArrayList<>();
        Map<Integer, List<Job>> groups = new java.util.TreeMap<>();
        for (Job j : jobs) {
            if (j.spec.steadyState.durNs() == 0) {
                continue;
            }
            if (j.spec.groupReporting) {
                groups.computeIfAbsent(j.spec.groupId, g -> new ArrayList<>()).add(j);
            } else {
                out.add(new SteadyState(j.spec.steadyState, List.of(j)));
            }
        }
        for (List<Job> g : groups.values()) {
            for (Job j : g) {
                if (!j.spec.steadyState.equals(g.getFirst().spec.steadyState)) {
                    throw new IllegalArgumentException("invalid job '" + j.name + "': steadystate options must be the"
                            + " same within a reporting group (as job '" + g.getFirst().name + "')");
                }
            }
            out.add(new SteadyState(g.getFirst().spec.steadyState, g));
        }
        for (SteadyState s : out) {
            s.jobs.forEach(j -> j.steady = s);
        }
        return out;
    }

    /** Starts the clock: the jobs' common start (fio's td->epoch). */
    void start(long epochNs) {
        this.epochNs = epochNs;
        this.prevTimeNs = epochNs;
        this.nextCheckNs = epochNs + spec.intervalNs;
    }

    /** When the next check is due ({@link System#nanoTime()}). */
    long nextCheckNs() {
        return nextCheckNs;
    }

    boolean attained() {
        return attained;
    }

    /** The last criterion computed (0 before the window is full): |slope| or max deviation, in % with a % limit. */
    double criterion() {
        return criterion;
    }

    /**
     * Runs the checks due at {@code nowNs}; when steady state is attained, ends the jobs (their end time becomes
     * now) and returns true.
     */
    boolean poll(long nowNs) {
        if (attained || nowNs - nextCheckNs < 0) {
            return false;
        }
        nextCheckNs += spec.intervalNs * Math.max(1, (nowNs - nextCheckNs) / spec.intervalNs + 1);
        if (!rampOver && nowNs - epochNs >= spec.rampNs + spec.intervalNs) {
            rampOver = true;
        }
        long ios = 0;
        long bytes = 0;
        for (Job j : jobs) {
            ios += j.readOps.sum() + j.writeOps.sum() + j.trimOps.sum();
            bytes += j.readBytes.sum() + j.writeBytes.sum() + j.trimBytes.sum();
        }
        long rateTime = (nowNs - prevTimeNs) / 1_000_000;
        prevTimeNs = nowNs;
        long div = intervalMs * intervalMs / 1000;
        long bw = rateTime * (bytes - prevBytes) / div;
        long iops = rateTime * (ios - prevIos) / div;
        prevIos = ios;
        prevBytes = bytes;
        if (!rampOver) {
            return false;
        }
        if (spec.slope ? slope(iops, bw) : deviation(iops, bw)) {
            attained = true;
            for (Job j : jobs) {
                j.endNs = nowNs;
            }
            return true;
        }
        return false;
    }

    private long value(int i) {
        return spec.iops ? iopsData[i] : bwData[i];
    }

    private boolean slope(long iops, long bw) {
        bwData[tail] = bw;
        iopsData[tail] = iops;
        long newVal = spec.iops ? iops : bw;
        if (bufferFull || tail - head == intervals - 1) {
            if (!bufferFull) {
                sumY = 0;
                for (int i = 0; i < intervals; i++) {
                    sumY += value(i);
                    sumXY += (long) i * value((head + i) % intervals);
                }
                bufferFull = true;
            } else {
                sumY -= oldestY;
                sumY += newVal;
                sumXY = sumXY - sumY + (long) intervals * newVal;
            }
            oldestY = value(head);
            slope = (sumXY - (double) sumX * sumY / intervals) / (sumXSq - (double) sumX * sumX / intervals);
            criterion = spec.pct ? 100.0 * slope / ((double) sumY / intervals) : slope;
            if (Math.abs(criterion) < spec.limit) {
                return true;
            }
        }
        tail = (tail + 1) % intervals;
        if (tail <= head) {
            head = (head + 1) % intervals;
        }
        return false;
    }

    private boolean deviation(long iops, long bw) {
        bwData[tail] = bw;
        iopsData[tail] = iops;
        if (bufferFull || tail - head == intervals - 1) {
            if (!bufferFull) {
                sumY = 0;
                for (int i = 0; i < intervals; i++) {
                    sumY += value(i);
                }
                bufferFull = true;
            } else {
                sumY -= oldestY;
                sumY += value(tail);
            }
            oldestY = value(head);
            double mean = (double) sumY / intervals;
            deviation = 0;
            for (int i = 0; i < intervals; i++) {
                deviation = Math.max(deviation, Math.abs(value(i) - mean));
            }
            criterion = spec.pct ? 100.0 * deviation / mean : deviation;
            if (criterion < spec.limit) {
                return true;
            }
        }
        tail = (tail + 1) % intervals;
        if (tail == head) {
            head = (head + 1) % intervals;
        }
        return false;
    }

    private long mean(long[] d) {
        long s = 0;
        for (long x : d) {
            s += x;
        }
        return s / intervals;
    }

    /** fio's JSON "steadystate" object of a job ({@code stat.c} show_thread_status_json). */
    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ss", spec.text());
        m.put("duration", (int) (spec.durNs / 1_000_000_000L));
        m.put("attained", attained ? 1 : 0);
        m.put("criterion", String.format(Locale.ROOT, "%f%s", (float) criterion, spec.pct ? "%" : ""));
        m.put("max_deviation", deviation);
        m.put("slope", slope);
        Map<String, Object> data = new LinkedHashMap<>();
        int j = attained || !bufferFull ? head : head == 0 ? intervals - 1 : head - 1;
        List<Long> bw = new ArrayList<>();
        List<Long> iops = new ArrayList<>();
        for (int l = 0; l < intervals; l++) {
            int k = (j + l) % intervals;
            bw.add(bwData[k]);
            iops.add(iopsData[k]);
        }
        data.put("bw_mean", mean(bwData));
        data.put("iops_mean", mean(iopsData));
        data.put("iops", iops);
        data.put("bw", bw);
        m.put("data", data);
        return m;
    }

    /** fio's normal-output line ({@code show_ss_normal}); bw in the unit fio picks for the mean. */
    String human() {
        return String.format(Locale.ROOT, "  steadystate  : attained=%s, bw=%s/s (%s/s), iops=%s, %s%s=%.3f%s%n",
                attained ? "yes" : "no", FioReport.bin(mean(bwData)), FioReport.dec(mean(bwData)),
                FioReport.num(mean(iopsData)), spec.iops ? "iops" : "bw", spec.slope ? " slope" : " mean dev", criterion,
                spec.pct ? "%" : "");
    }
}
