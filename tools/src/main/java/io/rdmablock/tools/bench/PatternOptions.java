package io.rdmablock.tools.bench;

import java.util.Locale;

/**
 * The I/O pattern options of issue 41 for one job, with fio's meaning (fio HOWTO "I/O type", "I/O rate", "I/O engine",
 * "Threads, processes and job synchronization"; fio's options.c {@code str_rw_cb}):
 * <ul>
 *   <li>the {@code rw} offset modifier {@code :<n>}: for sequential patterns a signed byte count added to each next
 *       offset ({@code rw=read:8k} skips 8 KiB after every read, {@code rw=write:-8k} goes backwards; fio's
 *       {@code ddir_seq_add}); for random patterns the number of I/Os per new random offset (fio's
 *       {@code ddir_seq_nr}, 1..2^32-1), the others following it as {@code rw_sequencer} says;</li>
 *   <li>{@code rw_sequencer=sequential|identical};</li>
 *   <li>{@code rate_process=linear|poisson} (poisson: exponential inter-arrival times, mean
 *       {@code 1e6 / IOPS} us);</li>
 *   <li>{@code io_submit_mode=inline|offload} (offload: a submitter thread per clone issues the I/O);</li>
 *   <li>{@code flow} (weight 0..1000, 0 = not in a flow), {@code flow_id} (int, default 0), {@code flow_sleep}
 *       (us);</li>
 *   <li>{@code rate_min} / {@code rate_iops_min} (per direction, like {@code rate}) checked every {@code rate_cycle}
 *       ms (default 1000) after 2 s ({@link MinRate});</li>
 *   <li>{@code fill_device} / {@code fill_fs} (bool): the job ends, without error, where its I/O reaches the volume's
 *       end, as fio's does at ENOSPC.</li>
 * </ul>
 * A bad value fails with {@link IllegalArgumentException} naming the option, the job and the bounds.
 */
final class PatternOptions {
    /** fio's flow.h FLOW_MAX_WEIGHT. */
    static final int FLOW_MAX_WEIGHT = 1000;

    /** Bytes added to each next sequential offset (fio's ddir_seq_add; negative = backwards); 0 = none. */
    long seqAdd;
    /** I/Os per new random offset (fio's ddir_seq_nr); 1 = a new offset for every I/O. */
    long seqNr = 1;
    /** rw_sequencer=identical: the I/Os after a random offset repeat it (else they follow it sequentially). */
    boolean identical;
    boolean poisson;
    boolean offload;
    /** Flow weight (0 = the job is in no flow), flow id, and the wait after being held back in nanoseconds. */
    int flow;
    int flowId;
    long flowSleepNs;
    boolean fillDevice;
    /** rate_min in bytes/s and rate_iops_min, {read, write} (0 = none); rate_cycle in ns. */
    long[] minRateBytes = {0, 0};
    long[] minRateIops = {0, 0};
    long rateCycleNs = 1_000_000_000L;

    /** True when the job has an {@code rw} offset modifier. */
    boolean modified() {
        return seqAdd != 0 || seqNr > 1;
    }

    /** Parses {@code rw=<pattern>[:<n>]} of job {@code job}; records the modifier here. */
    JobSpec.Rw rw(String job, String v) {
        int colon = v.indexOf(':');
        String base = colon < 0 ? v : v.substring(0, colon);
        JobSpec.Rw rw = switch (base) {
            case "read" -> JobSpec.Rw.READ;
            case "write" -> JobSpec.Rw.WRITE;
            case "randread" -> JobSpec.Rw.RANDREAD;
            case "randwrite" -> JobSpec.Rw.RANDWRITE;
            case "rw", "readwrite" -> JobSpec.Rw.RW;
            case "randrw" -> JobSpec.Rw.RANDRW;
            case "trim" -> JobSpec.Rw.TRIM;
            case "randtrim" -> JobSpec.Rw.RANDTRIM;
            case "trimwrite" -> JobSpec.Rw.TRIMWRITE;
            case "randtrimwrite" -> JobSpec.Rw.RANDTRIMWRITE;
            default -> throw new IllegalArgumentException("invalid rw: job '" + job + "': '" + v
                    + "', allowed=read|write|randread|randwrite|rw|readwrite|randrw|trim|randtrim|trimwrite|randtrimwrite,"
                    + " with an optional :<n> (not for trims)");
        };
        if (rw.trims && colon >= 0) {
            throw new IllegalArgumentException("invalid rw: job '" + job + "': rw=" + v + ": the trim patterns take no"
                    + " :<n> offset modifier here");
        }
        seqAdd = 0;
        seqNr = 1;
        if (colon < 0) {
            return rw;
        }
        String n = v.substring(colon + 1).trim();
        if (rw.random) {
            long nr;
            try {
                nr = FioValues.size("rw", n);
            } catch (IllegalArgumentException e) {
                nr = -1;
            }
            if (nr < 1 || nr > 0xffff_ffffL) {
                throw new IllegalArgumentException("invalid rw: job '" + job + "': rw=" + v + ": the I/Os per random"
                        + " offset after ':' must be an integer, min=1, max=4294967295");
            }
            seqNr = nr;
        } else {
            boolean neg = n.startsWith("-");
            long add;
            try {
                add = FioValues.size("rw", neg ? n.substring(1) : n);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid rw: job '" + job + "': rw=" + v + ": the offset"
                        + " modifier after ':' must be a size in bytes, e.g. 8k or -8k");
            }
            seqAdd = neg ? -add : add;
        }
        return rw;
    }

    /** Sets rw_sequencer, rate_process, io_submit_mode, flow, flow_id, flow_sleep or fill_device of {@code job}. */
    void set(String job, String k, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            switch (k) {
                case "rw_sequencer" -> identical = choose(k, s, "sequential", "identical");
                case "rate_process" -> poisson = choose(k, s, "linear", "poisson");
                case "io_submit_mode" -> offload = choose(k, s, "inline", "offload");
                case "flow" -> flow = FioValues.integer(k, s, 0, FLOW_MAX_WEIGHT);
                case "flow_id" -> flowId = FioValues.integer(k, s, Integer.MIN_VALUE, Integer.MAX_VALUE);
                case "flow_sleep" -> flowSleepNs = FioValues.integer(k, s, 0, Integer.MAX_VALUE) * 1_000L;
                case "fill_device", "fill_fs" -> fillDevice = FioValues.bool(k, s);
                case "rate_min", "ratemin" -> minRateBytes = FioValues.perDirection(k, s, true);
                case "rate_iops_min" -> minRateIops = FioValues.perDirection(k, s, false);
                case "rate_cycle", "ratecycle" -> rateCycleNs = FioValues.integer(k, s, 1, 1 << 30) * 1_000_000L;
                default -> throw new IllegalStateException("unhandled option " + k);
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (job '" + job + "')", e);
        }
    }

    /**
     * Checks the job's values together once parsed (fio's init.c): a minimum rate above the rate cap fails, naming
     * the option, the job and the direction.
     */
    void check(JobSpec j) {
        for (int d = 0; d < 2; d++) {
            String dir = d == 0 ? "read" : "write";
            if (j.rateBytes[d] > 0 && minRateBytes[d] > j.rateBytes[d]) {
                throw new IllegalArgumentException("invalid rate_min: job '" + j.name + "': rate_min=" + minRateBytes[d]
                        + " exceeds rate=" + j.rateBytes[d] + " (" + dir + "), max=" + j.rateBytes[d]);
            }
            if (j.rateIops[d] > 0 && minRateIops[d] > j.rateIops[d]) {
                throw new IllegalArgumentException("invalid rate_iops_min: job '" + j.name + "': rate_iops_min="
                        + minRateIops[d] + " exceeds rate_iops=" + j.rateIops[d] + " (" + dir + "), max=" + j.rateIops[d]);
            }
        }
    }

    private static boolean choose(String k, String v, String no, String yes) {
        if (v.equals(no)) {
            return false;
        }
        if (v.equals(yes)) {
            return true;
        }
        throw new IllegalArgumentException("invalid " + k + ": '" + v + "', allowed=" + no + "|" + yes);
    }
}
