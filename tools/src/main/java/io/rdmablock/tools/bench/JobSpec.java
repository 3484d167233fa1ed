package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One benchmark job, resolved from fio options (fio(1), "JOB PARAMETERS"); the meanings are fio's. The accepted
 * options, their groups and what each does here are in {@link JobOptions}. {@link #parse} records unknown options in
 * {@link #unsupported} (so a job file can be checked as a whole, {@link #checkSupported}); {@link #of} fails on them.
 * A bad value fails with {@link IllegalArgumentException} naming the option, the value and its bounds.
 */
final class JobSpec {

    enum Rw {
        READ(false, false, true), WRITE(false, true, false), RANDREAD(true, false, true), RANDWRITE(true, true, false),
        RW(false, true, true), RANDRW(true, true, true),
        /** Trims (NVMe DATASET MANAGEMENT deallocate); trimwrite: each block trimmed, then written (fio's). */
        TRIM(false, false, false, true), RANDTRIM(true, false, false, true), TRIMWRITE(false, true, false, true),
        RANDTRIMWRITE(true, true, false, true);

        final boolean random;
        final boolean writes;
        final boolean reads;
        final boolean trims;

        Rw(boolean random, boolean writes, boolean reads) {
            this(random, writes, reads, false);
        }

        Rw(boolean random, boolean writes, boolean reads, boolean trims) {
            this.random = random;
            this.writes = writes;
            this.reads = reads;
            this.trims = trims;
        }
    }

    /** verify= types; the first five keep their numbers (written in headers), the rest follow fio's names. */
    enum Verify {
        NONE, CRC32C, MD5, PATTERN, META, CRC64, CRC32, CRC16, CRC7, SHA1, SHA256, SHA512, SHA3_224, SHA3_256,
        SHA3_384, SHA3_512, XXHASH
    }

    static final double[] DEFAULT_PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
    /** fio's FIO_RANDSEED (fio.h): the base seed when randrepeat=1 and no randseed is given. */
    static final long FIO_RANDSEED = 0xb1899bedL;

    String name = "job";
    String description = "";
    Rw rw = Rw.READ;
    /** Issue 41's options: rw's offset modifier, rw_sequencer, rate_process, io_submit_mode, flow, fill_device. */
    final PatternOptions pattern = new PatternOptions();
    /** Issue 41, second wave: bsrange, offset_increment, io_size, number_ios ({@link IoLimits}). */
    final IoLimits limits = new IoLimits();
    /** iodepth_batch_submit, iodepth_batch_complete_min/_max, iodepth_low ({@link IoBatching}). */
    final IoBatching.Options batchOptions = new IoBatching.Options();
    int rwmixread = 50;
    int bsRead = 4096;
    int bsWrite = 4096;
    /** bssplit of reads, and of writes and trims (fio's per-direction lists; one list: both the same). */
    List<FioValues.Split> bssplit = List.of();
    List<FioValues.Split> bssplitWrite = List.of();
    /** Alignment of random offsets in bytes; 0 = the block size of the I/O (fio's default). */
    int blockAlign;
    int iodepth = 1;
    int numjobs = 1;
    String size;      // raw, resolved against the device
    /** The size came from the command line ({@code --size}): an absolute size beyond the device is rejected. */
    boolean sizeStrict;
    String offset = "0";
    long runtimeNs;
    boolean timeBased;
    long rampTimeNs;
    long startDelayNs;
    int loops = 1;
    boolean stonewall;
    boolean newGroup;
    /** Reporting group (fio's groupid) and execution phase, assigned by {@link #assignGroups}. */
    int groupId;
    int phase;
    RandomDistribution distribution = RandomDistribution.UNIFORM;
    boolean randrepeat = true;
    Long randseed;
    String randomGenerator = "tausworthe";
    long latencyTargetNs;
    long latencyWindowNs;
    double latencyPercentile = 100;
    /** Bandwidth caps {read, write} in bytes/s and IOPS caps {read, write}; 0 = none. */
    long[] rateBytes = {0, 0};
    long[] rateIops = {0, 0};
    long thinktimeNs;
    int thinktimeBlocks = 1;
    Verify verify = Verify.NONE;
    /** verify_pattern, verify_interval (0 = bs), verify_offset: {@link VerifyPattern}, {@link BlockVerifier}. */
    VerifyPattern verifyPattern;
    int verifyInterval;
    int verifyOffset;
    boolean doVerify = true;
    boolean verifyFatal;
    int verifyBacklog;
    boolean verifyStateSave;
    boolean verifyStateLoad;
    double[] percentiles = DEFAULT_PERCENTILES;
    /** Issue 41 part B: reporting (gtod_reduce, disable_*, *_percentiles), job control, placement, buffers. */
    final ReportOptions report = new ReportOptions();
    final JobControl control = new JobControl();
    final BufferContent.Spec buffers = new BufferContent.Spec();
    /** steadystate and its _duration, _ramp_time, _check_interval ({@link SteadyState}). */
    SteadyState.Spec steadyState = SteadyState.Spec.OFF;
    /** write_bw_log, write_lat_log, write_iops_log: file prefix, "" = the job name, null = off ({@link IoLogs}). */
    String bwLog;
    String latLog;
    String iopsLog;
    int logAvgMsec;
    boolean logOffset;
    boolean perJobLogs = true;
    boolean groupReporting;
    /** The options as given (after [global] merge and command-line overrides), for "job options" in the JSON. */
    final Map<String, String> options = new LinkedHashMap<>();
    final java.util.Set<String> warnings = new java.util.LinkedHashSet<>();
    /** Options of this job that rdmablock bench does not know. */
    final List<String> unsupported = new ArrayList<>();
    /** Target options of other engines given in this job (ignored: the target is the command line's). */
    final java.util.Set<String> ignoredTarget = new java.util.LinkedHashSet<>();

    /** Resolves {@code opts} (fio option name to value; flags have value "") into a job; fails on unknown options. */
    static JobSpec of(String name, Map<String, String> opts) {
        JobSpec j = parse(name, opts);
        checkSupported(List.of(j));
        return j;
    }

    /** Like {@link #of} but records unknown options in {@link #unsupported} instead of failing. */
    static JobSpec parse(String name, Map<String, String> opts) {
        JobSpec j = new JobSpec();
        j.name = name;
        for (Map.Entry<String, String> e : opts.entrySet()) {
            String k = e.getKey();
            String v = e.getValue() == null ? "" : e.getValue();
            j.options.put(k, v);
            if (k.equals("ioengine")) {
                if (!v.equals("rdmablock")) {
                    throw new IllegalArgumentException("invalid ioengine: '" + v + "': change the engine line to"
                            + " ioengine=rdmablock (the target is the command line's --volume/--address/--file)");
                }
            } else if (JobOptions.TARGET.contains(k)) {
                j.ignoredTarget.add(k);
            } else if (JobOptions.NO_EFFECT.containsKey(k)) {
                if (k.equals("direct") && !FioValues.bool(k, v) || k.equals("buffered") && FioValues.bool(k, v)) {
                    j.warnings.add(k + "=" + v + " ignored: rdmablock I/O always bypasses any cache (as direct=1)");
                }
            } else if (ReportOptions.OPTIONS.contains(k)) {
                j.report.set(name, k, v, j.warnings);
            } else if (JobControl.OPTIONS.contains(k)) {
                j.control.set(j, k, v);
            } else if (Placement.OPTIONS.contains(k)) {
                Placement.set(j, k, v);
            } else if (BufferContent.OPTIONS.contains(k)) {
                j.buffers.set(j, k, v);
            } else if (!JobOptions.SUPPORTED.containsKey(k)) {
                j.unsupported.add(k);
            } else {
                j.set(k, v);
            }
        }
        j.pattern.check(j);
        if (j.rw.trims && j.verify != Verify.NONE) {
            throw new IllegalArgumentException("invalid verify: job '" + name + "': verify with rw=" + j.options.get("rw")
                    + " is not supported yet (a trim may overlap the block's write)");
        }
        if (j.verify != Verify.NONE && (!j.bssplit.isEmpty() || !j.bssplitWrite.isEmpty() || j.bsRead != j.bsWrite)) {
            throw new IllegalArgumentException("invalid verify: verify=" + VerifyChecksum.name(j.verify)
                    + " needs one block size (no bssplit, same read and write bs)");
        }
        if ((j.verifyStateSave || j.verifyStateLoad || j.verifyBacklog > 0) && j.verify == Verify.NONE) {
            throw new IllegalArgumentException("invalid job '" + name + "': verify_state_save, verify_state_load and"
                    + " verify_backlog need a verify= type");
        }
        BlockVerifier.validate(j);
        j.buffers.validate(j);
        j.control.resolveStartDelay(j);
        j.steadyState.validate(name);
        return j;
    }

    /** Fails listing, for every job with any, the options rdmablock bench does not know, and the accepted ones. */
    static void checkSupported(List<JobSpec> jobs) {
        List<String> bad = new ArrayList<>();
        for (JobSpec j : jobs) {
            if (!j.unsupported.isEmpty()) {
                // grouped by why: an option that cannot apply to a block volume says so; the rest are not yet done
                java.util.Map<String, List<String>> byReason = new java.util.LinkedHashMap<>();
                for (String o : j.unsupported) {
                    String why = JobOptions.cannotApply(o);
                    byReason.computeIfAbsent(why == null ? "not supported yet, docs/bench.md" : why,
                            k -> new ArrayList<>()).add(o);
                }
                List<String> parts = new ArrayList<>();
                byReason.forEach((why, opts) -> parts.add(String.join(", ", opts) + " (" + why + ")"));
                bad.add("job '" + j.name + "': " + String.join(", ", parts));
            }
        }
        if (!bad.isEmpty()) {
            throw new IllegalArgumentException("unsupported fio options: " + String.join("; ", bad)
                    + " (rdmablock bench accepts: " + JobOptions.acceptedList() + "; target options ignored: "
                    + JobOptions.targetList() + ")");
        }
    }

    /**
     * fio's stonewall/new_group: a job with stonewall (or wait_for_previous) starts a new phase, which runs after
     * every job before it has finished, and a new reporting group; new_group starts a new group only.
     */
    static void assignGroups(List<JobSpec> jobs) {
        int group = 0;
        int phase = 0;
        for (int i = 0; i < jobs.size(); i++) {
            JobSpec j = jobs.get(i);
            if (i > 0 && j.stonewall) {
                phase++;
            }
            if (i > 0 && (j.stonewall || j.newGroup)) {
                group++;
            }
            j.phase = phase;
            j.groupId = group;
        }
    }

    /** The base seed of this job: randseed, else fio's fixed seed with randrepeat=1, else the clock. */
    long seed() {
        if (randseed != null) {
            return randseed;
        }
        return randrepeat ? FIO_RANDSEED : System.nanoTime();
    }

    private void set(String k, String v) {
        switch (k) {
            case "name" -> name = v;
            case "description" -> description = v.replace("\"", "");
            case "rw", "readwrite" -> rw = pattern.rw(name, v);
            case "rw_sequencer", "rate_process", "io_submit_mode", "flow", "flow_id", "flow_sleep", "fill_device",
                 "fill_fs", "rate_min", "ratemin", "rate_iops_min", "rate_cycle", "ratecycle" -> pattern.set(name, k, v);
            case "bsrange", "blocksize_range", "offset_increment", "io_size", "io_limit", "number_ios" ->
                    limits.set(name, k, v);
            case "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
                 "iodepth_batch_complete_max", "iodepth_low" -> batchOptions.set(name, k, v);
            case "rwmixread" -> rwmixread = FioValues.integer(k, v, 0, 100);
            case "rwmixwrite" -> rwmixread = 100 - FioValues.integer(k, v, 0, 100);
            case "bs", "blocksize" -> {
                String[] p = v.split(",", -1);
                bsRead = blockSize(k, p[0]);
                bsWrite = p.length > 1 && !p[1].isBlank() ? blockSize(k, p[1]) : bsRead;
            }
            case "bssplit" -> {
                List<List<FioValues.Split>> d = FioValues.bssplitByDirection(v);
                bssplit = d.get(0);
                bssplitWrite = d.get(1);
            }
            case "blockalign", "ba" -> blockAlign = blockSize(k, v.split(",")[0]);
            case "iodepth" -> iodepth = FioValues.integer(k, v, 1, 4096);
            case "numjobs" -> numjobs = FioValues.integer(k, v, 1, 256);
            case "size" -> size = v;
            case "offset" -> offset = v;
            case "runtime", "timeout" -> runtimeNs = FioValues.timeNs(k, v);
            case "time_based" -> timeBased = FioValues.bool(k, v);
            case "ramp_time" -> rampTimeNs = FioValues.timeNs(k, v);
            case "startdelay" -> startDelayNs = control.startDelay(this, k, v); // also LO-HI (JobControl)
            case "loops" -> loops = FioValues.integer(k, v, 1, 1_000_000);
            case "stonewall", "wait_for_previous" -> stonewall = FioValues.bool(k, v);
            case "new_group" -> newGroup = FioValues.bool(k, v);
            case "random_distribution" -> distribution = RandomDistribution.parse(v);
            case "randrepeat" -> randrepeat = FioValues.bool(k, v);
            case "randseed" -> randseed = FioValues.unsigned(k, v);
            case "random_generator" -> {
                if (!v.equals("tausworthe") && !v.equals("lfsr") && !v.equals("tausworthe64")) {
                    throw new IllegalArgumentException("invalid random_generator: '" + v
                            + "', allowed=tausworthe|lfsr|tausworthe64");
                }
                randomGenerator = v;
                warnings.add("random_generator=" + v + ": offsets come from SplitMix64 (java.util.SplittableRandom)"
                        + " seeded with randseed, not fio's " + v + (v.equals("lfsr")
                        ? "; blocks may repeat within a pass (an LFSR visits each block once)" : ""));
            }
            case "latency_target" -> latencyTargetNs = FioValues.timeNs(k, v, 1_000L);
            case "latency_window" -> latencyWindowNs = FioValues.timeNs(k, v, 1_000L);
            case "latency_percentile" -> {
                latencyPercentile = FioValues.decimal(k, v, 0, 100);
                if (latencyPercentile <= 0) {
                    throw new IllegalArgumentException("invalid latency_percentile: " + v + ", min>0, max=100");
                }
            }
            case "rate" -> rateBytes = FioValues.perDirection(k, v, true);
            case "rate_iops" -> rateIops = FioValues.perDirection(k, v, false);
            case "thinktime" -> thinktimeNs = FioValues.timeNs(k, v, 1_000L);
            case "thinktime_blocks" -> thinktimeBlocks = FioValues.integer(k, v, 1, 1 << 30);
            case "verify" -> {
                verify = VerifyChecksum.parse(v);
                if (verify == null) {
                    throw new IllegalArgumentException("invalid verify: '" + v + "' in job '" + name + "', allowed="
                            + VerifyChecksum.ALLOWED);
                }
            }
            case "verify_pattern" -> verifyPattern = VerifyPattern.parse(v);
            case "verify_interval" -> verifyInterval = (int) Math.min(Integer.MAX_VALUE, FioValues.size(k, v));
            case "verify_offset" -> verifyOffset = (int) Math.min(Integer.MAX_VALUE, FioValues.size(k, v));
            case "do_verify" -> doVerify = FioValues.bool(k, v);
            case "verify_fatal" -> verifyFatal = FioValues.bool(k, v);
            case "verify_backlog" -> verifyBacklog = FioValues.integer(k, v, 0, 1 << 30);
            case "verify_state_save" -> verifyStateSave = FioValues.bool(k, v);
            case "verify_state_load" -> verifyStateLoad = FioValues.bool(k, v);
            case "group_reporting" -> groupReporting = FioValues.bool(k, v);
            case "steadystate", "ss" -> steadyState = steadyState.withCriterion(v);
            case "steadystate_duration", "ss_dur" -> steadyState = steadyState.withDuration(FioValues.timeNs(k, v));
            case "steadystate_ramp_time", "ss_ramp" -> steadyState = steadyState.withRamp(FioValues.timeNs(k, v));
            case "steadystate_check_interval", "ss_interval" ->
                    steadyState = steadyState.withInterval(FioValues.timeNs(k, v));
            case "write_bw_log" -> bwLog = v;
            case "write_lat_log" -> latLog = v;
            case "write_iops_log" -> iopsLog = v;
            case "log_avg_msec" -> logAvgMsec = FioValues.integer(k, v, 0, 1 << 30);
            case "log_offset" -> logOffset = FioValues.bool(k, v);
            case "per_job_logs" -> perJobLogs = FioValues.bool(k, v);
            case "percentile_list" -> {
                String[] p = v.split(":");
                percentiles = new double[p.length];
                for (int i = 0; i < p.length; i++) {
                    percentiles[i] = FioValues.decimal(k, p[i], 0, 100);
                }
            }
            default -> throw new IllegalStateException("unhandled option " + k);
        }
    }

    private static int blockSize(String k, String v) {
        long bs = FioValues.size(k, v);
        if (bs <= 0 || bs > (256 << 20)) {
            throw new IllegalArgumentException("invalid " + k + ": " + v + ", min=1, max=256m");
        }
        return (int) bs;
    }

    int maxBlockSize() {
        int m = Math.max(Math.max(bsRead, bsWrite), limits.maxBs());
        for (FioValues.Split s : bssplit) {
            m = Math.max(m, s.bs());
        }
        for (FioValues.Split s : bssplitWrite) {
            m = Math.max(m, s.bs());
        }
        return m;
    }

    /** Offset of the job's region on a device of {@code capacityBytes}, aligned down to {@code lbaSize}. */
    long regionOffset(long capacityBytes, int lbaSize) {
        double pct = FioValues.percent("offset", offset);
        long o = pct >= 0 ? (long) (capacityBytes * pct / 100) : FioValues.size("offset", offset);
        o = o / lbaSize * lbaSize;
        if (o >= capacityBytes) {
            throw new IllegalArgumentException("invalid offset: offset=" + o + " is not below the device size " + capacityBytes);
        }
        return o;
    }

    /**
     * Length of the job's region. A size beyond the device from the offset is clamped with a warning (job files, and
     * percentages), except an absolute size given with {@code --size} ({@link #sizeStrict}), which is rejected.
     *
     * @throws IllegalArgumentException naming the field, value and bounds
     */
    long regionLength(long capacityBytes, int lbaSize) {
        long o = regionOffset(capacityBytes, lbaSize);
        long avail = capacityBytes - o;
        if (size == null) {
            return avail;
        }
        double pct = FioValues.percent("size", size);
        long s = pct >= 0 ? (long) (capacityBytes * pct / 100) : FioValues.size("size", size);
        s = s / lbaSize * lbaSize;
        if (s > avail && sizeStrict && pct < 0) {
            throw new IllegalArgumentException("invalid size: size=" + s + " exceeds the device from offset " + o
                    + ": min=" + maxBlockSize() + ", max=" + avail + " (device size " + capacityBytes + ")");
        }
        if (s > avail) {
            warnings.add("size=" + size + " exceeds the device from offset " + o + ": using " + avail + " bytes");
            s = avail;
        }
        if (s < maxBlockSize()) {
            throw new IllegalArgumentException("invalid size: size=" + s + " is smaller than the block size " + maxBlockSize());
        }
        return s;
    }
}
