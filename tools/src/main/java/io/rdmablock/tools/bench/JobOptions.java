package io.rdmablock.tools.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The fio job options {@code rdmablock bench} knows (fio(1) "JOB PARAMETERS"), in four groups: options carried out
 * with fio's meaning ({@link #SUPPORTED}); options accepted without effect because rdmablock always behaves that way
 * ({@link #NO_EFFECT}, with the reason); target options of other engines, ignored with one warning because the target
 * comes from the command line ({@link #TARGET}); and {@code ioengine}, which must say {@code rdmablock}.
 * Anything else is an unsupported option: {@link JobSpec#checkSupported} lists them for every job of the file.
 */
final class JobOptions {
    /** Supported options and what they do here (fio's meaning unless the text says otherwise). */
    static final Map<String, String> SUPPORTED = table(
            "name", "job name", "description", "free text, printed",
            "rw", "read|write|randread|randwrite|rw|readwrite|randrw, optional :<n> offset modifier",
            "readwrite", "alias of rw",
            "rwmixread", "percent reads in rw/randrw", "rwmixwrite", "percent writes in rw/randrw",
            "bs", "block size, or read,write", "blocksize", "alias of bs", "bssplit", "block size mix, 4k/50:64k/50",
            "blockalign", "alignment of random offsets (default: the block size)", "ba", "alias of blockalign",
            "iodepth", "I/Os in flight per clone", "numjobs", "clones, one queue pair each",
            "size", "bytes or % of the device per job", "offset", "start of the region, bytes or %",
            "runtime", "seconds or with unit", "time_based", "run for runtime even after size",
            "ramp_time", "time before statistics are recorded", "startdelay", "delay before the job starts (s)",
            "loops", "repeat the job's I/O this many times", "stonewall", "wait for the jobs before; new group",
            "wait_for_previous", "alias of stonewall", "new_group", "start a new reporting group",
            "random_distribution", "random|zipf:t|pareto:h|normal:dev|zoned:...|zoned_abs:...",
            "randrepeat", "same random sequence every run (default 1)", "randseed", "seed of the random sequence",
            "random_generator", "accepted: tausworthe|lfsr|tausworthe64; SplitMix64 is used (a notice says so)",
            "latency_target", "fio's queue-depth search: max latency (us)", "latency_window", "sample window (us)",
            "latency_percentile", "percent of I/Os within the target (default 100)",
            "rate", "bandwidth cap, bytes/s, read,write", "rate_iops", "IOPS cap, read,write",
            // issue 41, I/O pattern (PatternOptions)
            "rw_sequencer", "sequential|identical: the I/Os after a random offset of rw=rand*:<n>",
            "rate_process", "linear|poisson (exponential inter-arrival times)", "io_submit_mode",
            "inline|offload (a submitter thread per clone)", "flow", "flow weight 0..1000 among jobs of a flow_id",
            "flow_id", "flow of the job (default 0)", "flow_sleep", "wait after being held back by its flow (us)",
            "fill_device", "end, without error, at the volume's end (as fio at ENOSPC)",
            "fill_fs", "alias of fill_device",
            "rate_min", "minimum bytes/s, read,write: the job fails (EIO) below it", "ratemin", "alias of rate_min",
            "rate_iops_min", "minimum IOPS, read,write", "rate_cycle", "window of rate_min in ms (default 1000)",
            "ratecycle", "alias of rate_cycle",
            "thinktime", "pause after thinktime_blocks I/Os (us)", "thinktime_blocks", "I/Os between pauses (default 1)",
            "verify", "md5|crc64|crc32|crc32c|crc16|crc7|sha1|sha256|sha512|sha3-224..512|xxhash|meta|pattern|0",
            "verify_pattern", "fill pattern: 0x hex, decimal, \"string\", %o (block offset); checked by meta and pattern",
            "verify_interval", "bytes per verify header (default: bs)", "verify_offset", "header position in the unit",
            "do_verify", "read back after writing", "verify_fatal", "stop at the first verify failure",
            "verify_backlog", "verify after this many written blocks", "verify_state_save",
            "save the per-block write generations at the end", "verify_state_load",
            "check reads against saved generations", "percentile_list", "latency percentiles, 50:99:99.9",
            "group_reporting", "one result per group",
            "steadystate", "iops|bw|iops_slope|bw_slope:LIMIT[%]: end the job at steady state", "ss", "alias of steadystate",
            "steadystate_duration", "rolling window of the steady-state check (s)", "ss_dur", "alias",
            "steadystate_ramp_time", "time before steady-state data collection (s)", "ss_ramp", "alias",
            "steadystate_check_interval", "steady-state sample period (s, >= 1)", "ss_interval", "alias",
            "write_bw_log", "bandwidth log <prefix>_bw.N.log", "write_lat_log", "latency logs <prefix>_clat|slat|lat.N.log",
            "write_iops_log", "IOPS log <prefix>_iops.N.log", "log_avg_msec", "average log entries over this window (ms)",
            "log_offset", "add the I/O offset to log lines", "per_job_logs", "0 = leave .N out of log file names",
            // issue 41, second wave (IoLimits, IoBatching)
            "bsrange", "block size range min-max[,min-max]", "blocksize_range", "alias of bsrange",
            "timeout", "alias of runtime", "offset_increment", "clone k starts at offset + k x this (bytes or %)",
            "io_size", "bytes of I/O per loop, independent of size", "io_limit", "alias of io_size",
            "number_ios", "end the clone after this many I/Os",
            "iodepth_batch", "I/Os submitted together (default 1)", "iodepth_batch_submit", "alias of iodepth_batch",
            "iodepth_batch_complete_min", "completions a reap waits for (default 1)",
            "iodepth_batch_complete", "alias of iodepth_batch_complete_min",
            "iodepth_batch_complete_max", "most completions per reap (at least the min)",
            "iodepth_low", "refill a full queue only once this few are in flight (default iodepth)");

    /** Accepted and without effect, with the reason. */
    static final Map<String, String> NO_EFFECT = table(
            "direct", "I/O always bypasses any cache (direct=0 says so in a warning)",
            "buffered", "I/O always bypasses any cache (buffered=1 says so in a warning)",
            "thread", "jobs are threads (always: bench runs every clone in this process)",
            "invalidate", "there is no page cache to invalidate", "norandommap", "random offsets never use a map",
            "enable_sgl", "data always travels in SGLs",
            "threads", "fio's tiobench profile option, which fio accepts in any job and uses only in that profile");

    /** Target options of other engines: ignored with one warning, the target is the command line's device. */
    static final Set<String> TARGET = Set.of("filename", "directory", "uri", "hostname", "port", "spdk_conf",
            "clientname", "pool", "rbdname", "namespace", "exportname", "verb", "bindname", "filename_format");

    /** Issue 41 part B: reporting, job control, placement (warned), buffer contents; their classes document them. */
    static final Set<String> PART_B = union(ReportOptions.OPTIONS, JobControl.OPTIONS, Placement.OPTIONS,
            BufferContent.OPTIONS);

    private static Set<String> union(Set<String> a, Set<String> b, Set<String> c, Set<String> d) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        all.addAll(c);
        all.addAll(d);
        return all;
    }

    private JobOptions() {
    }

    private static Map<String, String> table(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static boolean known(String k) {
        return k.equals("ioengine") || SUPPORTED.containsKey(k) || PART_B.contains(k) || NO_EFFECT.containsKey(k) || TARGET.contains(k);
    }

    /** Every accepted option name, sorted, for error messages and --help. */
    static String acceptedList() {
        Set<String> all = new TreeSet<>(SUPPORTED.keySet());
        all.addAll(NO_EFFECT.keySet());
        all.addAll(PART_B);
        all.add("ioengine");
        return String.join(", ", all);
    }

    static String targetList() {
        return String.join(", ", new TreeSet<>(TARGET));
    }

    /** Classes of fio options a block volume cannot have: name prefix or name, and the reason (docs/bench.md). */
    private static final String[][] CANNOT_APPLY = {
            {"file-system option: a block volume has no files", "nrfiles", "filesize", "file_service_type",
                    "openfiles", "create_", "fallocate", "unlink", "opendir", "lockfile", "allow_file_create",
                    "allow_mounted_write", "file_append", "fadvise_hint", "sync_file_range", "pre_read",
                    "ioscheduler", "overwrite", "unique_filename", "nr_files"},
            {"network engine option: the target is an NVMe-oF volume", "protocol", "listen", "ttl", "pingpong",
                    "interface", "nodelay", "window_size", "mss", "hostname_", "verb"},
            {"GPU option: data moves between host memory and the volume", "gpu_dev_id", "cuda_io", "rocm_io"},
            {"zoned-device option: rdmablock volumes are not zoned", "zonemode", "zonesize", "zonerange",
                    "zonecapacity", "zoneskip", "max_open_zones", "job_max_open_zones", "zone_reset_",
                    "read_beyond_wp", "ignore_zone_limits"},
            {"option of the sg / io_uring passthrough / xnvme engines", "cmd_type", "sg_write_mode", "pi_act",
                    "pi_chk", "apptag", "md_per_io_size", "fdp", "write_mode", "sqthread_poll", "registerfiles",
                    "nonvectored", "xnvme_", "hipri", "fixedbufs", "num_range"},
            {"another engine's own option", "libblkio_", "cpuload", "cpumode", "cpuchunks", "program", "arguments",
                    "grace_time", "std_redirect", "busy_poll", "nfs_url", "cont", "volume", "brick", "conf",
                    "dev-dax", "pmem", "donorname", "inplace", "http_", "https", "s3_", "swift_", "webdav"}};

    /**
     * Why a refused option cannot apply to a block volume, for the refusal message; null when it is one that could
     * (then it is "not supported yet", listed in docs/bench.md).
     */
    static String cannotApply(String option) {
        for (String[] c : CANNOT_APPLY) {
            for (int i = 1; i < c.length; i++) {
                if (c[i].endsWith("_") ? option.startsWith(c[i]) : option.equals(c[i])) {
                    return c[0];
                }
            }
        }
        return null;
    }
}
