package io.rdmablock.tools.bench;

import io.rdmablock.tools.device.DeviceSource;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rdmablock bench}: fio's options on the block-device library.
 *
 * <pre>
 * rdmablock bench --volume vol1 --rw=randread --bs=4k --iodepth=32 --runtime=10 --time_based --name=rr
 * rdmablock bench --volume vol1 --output-format=json job.fio          (ioengine=rdmablock in the file)
 * rdmablock bench --volume vol1 --replay=msn-fs-30s.trace --iodepth=32 --runtime=30
 * </pre>
 *
 * Options given on the command line together with a job file override the file's values for every job (unlike fio,
 * where they act as defaults), so a long job file can be shortened with {@code --runtime=10}. A job file runs as
 * written apart from its engine line, which must say {@code ioengine=rdmablock}; other engines' target options
 * ({@link JobOptions#TARGET}: filename, directory, ...) are ignored with one warning line, the target being the
 * command line's device. Options outside {@link JobOptions} fail, listed for every job of the file.
 * Exit status: 0, or 1 when a job had an I/O or verify error, 2 on bad arguments (a missing job file included).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"fio-style benchmark on a volume (fio option names and meanings, fio JSON output).",
                "Job files: fio's format, unchanged apart from the engine line: ioengine=rdmablock. The target is the"
                        + " command line's --volume NAME, --address HOST:PORT --subnqn NQN, or --file PATH; the job"
                        + " file's target options (filename, directory, uri, hostname, ...) are ignored with a warning.",
                "Supported fio options: stonewall/new_group phases, random_distribution (random, zipf, pareto,"
                        + " normal, zoned, zoned_abs), randrepeat/randseed, blockalign, random_generator (accepted;"
                        + " offsets come from SplitMix64), latency_target/latency_window/latency_percentile (fio's"
                        + " queue-depth search), rate/rate_iops, thinktime, loops, startdelay, verify with per-block"
                        + " write generations (verify_backlog, verify_state_save/verify_state_load in --aux-path),"
                        + " verify=meta with verify_pattern/verify_interval/verify_offset, steadystate, write_bw_log/"
                        + "write_lat_log/write_iops_log with log_avg_msec; --plot DIR draws SVG plots from the logs."})
public final class BenchCommand implements Callable<Integer> {

    @Mixin
    DeviceSource deviceOptions = new DeviceSource();

    @Parameters(paramLabel = "JOBFILE", arity = "0..*", description = "fio job files limited to the supported subset.")
    List<Path> jobFiles = new ArrayList<>();

    @Option(names = "--name", paramLabel = "NAME", description = "Job name (default: rdmablock).") String name;
    @Option(names = {"--rw", "--readwrite"}, paramLabel = "MODE", description = "read, write, randread, randwrite, rw, randrw (default: read).") String rw;
    @Option(names = "--rwmixread", paramLabel = "PERCENT", description = "Percentage of reads in rw/randrw (default: 50).") String rwmixread;
    @Option(names = "--rwmixwrite", paramLabel = "PERCENT", description = "Percentage of writes in rw/randrw.") String rwmixwrite;
    @Option(names = {"--bs", "--blocksize"}, paramLabel = "SIZE", description = "Block size, or read,write sizes (default: 4k).") String bs;
    @Option(names = "--bssplit", paramLabel = "SPLIT", description = "Block size mix, e.g. 4k/50:64k/50.") String bssplit;
    @Option(names = "--iodepth", paramLabel = "N", description = "I/Os in flight per job (default: 1).") String iodepth;
    @Option(names = "--numjobs", paramLabel = "N", description = "Clones of the job, one queue pair each (default: 1).") String numjobs;
    @Option(names = "--size", paramLabel = "SIZE", description = "Bytes (or %%) of the device per job (default: all from offset); bytes beyond the device are rejected (job files' size= is clamped with a warning).") String size;
    @Option(names = "--offset", paramLabel = "OFFSET", description = "Start of the job's region, bytes or %% (default: 0).") String offset;
    @Option(names = "--runtime", paramLabel = "TIME", description = "Run time, seconds or with unit (10s, 500ms).") String runtime;
    @Option(names = "--time_based", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Run for runtime even after size.") String timeBased;
    @Option(names = "--ramp_time", paramLabel = "TIME", description = "Time before statistics are recorded.") String rampTime;
    @Option(names = "--verify", paramLabel = "METHOD", description = "crc32c, md5, pattern or 0.") String verify;
    @Option(names = "--verify_pattern", paramLabel = "PATTERN", description = "verify_pattern: 0x hex, decimal, \"string\", %%o (block offset); fio syntax.") String verifyPattern;
    @Option(names = "--do_verify", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Read back after writing (default: 1).") String doVerify;
    @Option(names = "--verify_fatal", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Stop at the first verify failure.") String verifyFatal;
    @Option(names = "--percentile_list", paramLabel = "LIST", description = "Latency percentiles, e.g. 50:99:99.9.") String percentileList;
    @Option(names = "--group_reporting", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "One result for all jobs.") String groupReporting;
    @Option(names = "--blockalign", paramLabel = "SIZE", description = "Alignment of random offsets (default: the block size).") String blockalign;
    @Option(names = "--random_distribution", paramLabel = "DIST", description = "random, zipf:theta, pareto:h, normal:dev, zoned:a/s:..., zoned_abs:a/size:...") String randomDistribution;
    @Option(names = "--randrepeat", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Same offsets every run (default: 1).") String randrepeat;
    @Option(names = "--randseed", paramLabel = "SEED", description = "Seed of the offsets.") String randseed;
    @Option(names = "--random_generator", paramLabel = "GEN", description = "tausworthe, lfsr or tausworthe64: accepted, SplitMix64 is used.") String randomGenerator;
    @Option(names = "--latency_target", paramLabel = "TIME", description = "Queue-depth search: latency target (us or with unit).") String latencyTarget;
    @Option(names = "--latency_window", paramLabel = "TIME", description = "Queue-depth search: window (us or with unit).") String latencyWindow;
    @Option(names = "--latency_percentile", paramLabel = "PERCENT", description = "Queue-depth search: percent within the target (default: 100).") String latencyPercentile;
    @Option(names = "--rate", paramLabel = "BYTES", description = "Bandwidth cap in bytes/s, read,write.") String rate;
    @Option(names = "--rate_iops", paramLabel = "IOPS", description = "IOPS cap, read,write.") String rateIops;
    @Option(names = "--thinktime", paramLabel = "TIME", description = "Pause (us or with unit) after thinktime_blocks I/Os.") String thinktime;
    @Option(names = "--thinktime_blocks", paramLabel = "N", description = "I/Os between pauses (default: 1).") String thinktimeBlocks;
    @Option(names = "--loops", paramLabel = "N", description = "Repeat the job's I/O (default: 1).") String loops;
    @Option(names = "--startdelay", paramLabel = "TIME", description = "Delay before the job starts (s or with unit).") String startdelay;
    @Option(names = "--verify_backlog", paramLabel = "N", description = "Verify after this many written blocks.") String verifyBacklog;
    @Option(names = "--verify_state_save", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Save the per-block write generations at the end.") String verifyStateSave;
    @Option(names = "--verify_state_load", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Check reads against saved generations.") String verifyStateLoad;
    @Option(names = "--steadystate", paramLabel = "SPEC", description = "iops|bw|iops_slope|bw_slope:LIMIT[%%]: end at steady state.") String steadystate;
    @Option(names = "--steadystate_duration", paramLabel = "TIME", description = "Steady-state window (s).") String ssDuration;
    @Option(names = "--steadystate_ramp_time", paramLabel = "TIME", description = "Time before steady-state data collection (s).") String ssRamp;
    @Option(names = "--steadystate_check_interval", paramLabel = "TIME", description = "Steady-state sample period (s, default 1).") String ssInterval;
    @Option(names = "--write_bw_log", paramLabel = "PREFIX", arity = "0..1", fallbackValue = "", description = "Bandwidth log PREFIX_bw.N.log (default prefix: the job name).") String bwLog;
    @Option(names = "--write_lat_log", paramLabel = "PREFIX", arity = "0..1", fallbackValue = "", description = "Latency logs PREFIX_clat|slat|lat.N.log.") String latLog;
    @Option(names = "--write_iops_log", paramLabel = "PREFIX", arity = "0..1", fallbackValue = "", description = "IOPS log PREFIX_iops.N.log.") String iopsLog;
    @Option(names = "--log_avg_msec", paramLabel = "MS", description = "Average log entries over this many ms (default 0: one line per I/O).") String logAvgMsec;
    @Option(names = "--plot", paramLabel = "DIR", description = "Write SVG plots of IOPS, bandwidth and latency percentiles over time to DIR (from the jobs' logs; logs a job does not write go to DIR).") Path plot;
    @Option(names = "--aux-path", paramLabel = "DIR", defaultValue = ".", description = "Directory of verify state files (default: the working directory).") Path auxPath;
    @Option(names = "--replay", paramLabel = "TRACE", description = "Replay a trace for performance (msn, msr CSV or blkparse, detected); requests not aligned to the LBA size are refused (rdmablock replay carries them out).") Path replay;
    @Option(names = "--replay_no_stall", paramLabel = "BOOL", arity = "0..1", fallbackValue = "1", description = "Replay as fast as possible.") String replayNoStall;
    @Option(names = "--replay_time_scale", paramLabel = "PERCENT", defaultValue = "100", description = "Replay at PERCENT of the trace's rate, as fio: 100 = the trace's pace, 200 = twice as fast, 50 = half as fast; 0 = as fast as possible, like --replay_no_stall (default: ${DEFAULT-VALUE}).") int replayTimeScale;
    @Option(names = "--output-format", paramLabel = "FORMAT", defaultValue = "normal", description = "normal or json (default: normal).") String outputFormat;
    @Option(names = "--output", paramLabel = "FILE", description = "Write the results to FILE instead of stdout.") Path output;
    @Option(names = "--eta", paramLabel = "WHEN", defaultValue = "auto", description = "Progress line: auto, always, never (default: auto).") String eta;
    @Option(names = "--node-pid", paramLabel = "PID", defaultValue = "${env:RDMABLOCK_NODE_PID}",
            description = "PID of the storage node for its CPU time per I/O (default: found when the node listens on"
                    + " a loopback address of this machine).") String nodePid;

    @Override
    public Integer call() throws Exception {
        if (!outputFormat.equals("normal") && !outputFormat.equals("json")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "invalid --output-format: " + outputFormat);
        }
        Map<String, String> cli = cliOptions();
        List<JobSpec> specs = new ArrayList<>();
        if (jobFiles.isEmpty()) {
            specs.add(JobSpec.of(name != null ? name : replay != null ? "replay" : "rdmablock", cli));
        } else {
            for (Path f : jobFiles) {
                if (!Files.isRegularFile(f)) {
                    throw new IllegalArgumentException("invalid JOBFILE: " + f + ": no such file");
                }
                for (JobFile.Section s : JobFile.parse(f)) {
                    Map<String, String> opts = new LinkedHashMap<>(s.options());
                    opts.putAll(cli);
                    specs.add(JobSpec.parse(opts.getOrDefault("name", s.name()), opts));
                }
            }
            if (specs.isEmpty()) {
                throw new IllegalArgumentException("invalid job file: no jobs in " + jobFiles);
            }
            JobSpec.checkSupported(specs);
        }
        if (replayTimeScale < 0 || replayTimeScale > 100_000) {
            throw new IllegalArgumentException("invalid --replay_time_scale: " + replayTimeScale + ", min=0, max=100000");
        }
        if (replay != null && !Files.isRegularFile(replay)) {
            throw new IllegalArgumentException("invalid --replay: " + replay + ": no such file");
        }
        java.util.Set<String> ignored = new java.util.TreeSet<>();
        specs.forEach(s -> ignored.addAll(s.ignoredTarget));
        if (!ignored.isEmpty()) {
            System.err.println("rdmablock bench: warning: " + String.join(", ", ignored) + " ignored: the target comes"
                    + " from the command line (" + deviceOptions.displayName() + ")");
        }
        for (JobSpec s : specs) {
            s.sizeStrict = size != null;
            if (s.timeBased && s.runtimeNs == 0) {
                throw new IllegalArgumentException("invalid job '" + s.name + "': time_based needs runtime");
            }
        }
        if (replay != null && specs.size() != 1) {
            throw new IllegalArgumentException("invalid --replay: replays one trace, not a job file");
        }
        if (replay != null && iodepth == null) {
            specs.getFirst().iodepth = 32;
        }
        boolean tty = System.console() != null && System.console().isTerminal();
        boolean progressOn = eta.equals("always") || eta.equals("auto") && tty;
        BenchRun.Progress progress = new BenchRun.Progress(System.err, progressOn, tty);
        String pid = nodePid == null || nodePid.isBlank() ? localNodePid() : nodePid.strip();
        BenchRun.Outcome out = BenchRun.run(specs,
                replay == null ? null : new BenchRun.Replay(replay, FioValues.bool("replay_no_stall",
                        replayNoStall == null ? "0" : replayNoStall), replayTimeScale),
                () -> deviceOptions.open(1), pid, progress, auxPath, plot);
        String text = outputFormat.equals("json")
                ? FioReport.json(out.entries(), out.cpu(), deviceOptions.displayName())
                : FioReport.human(out.entries(), out.cpu());
        if (!out.plots().isEmpty()) {
            String list = "plots: " + String.join(" ", out.plots().stream().map(Path::toString).toList()) + "\n";
            if (outputFormat.equals("json")) {
                System.err.print(list);
            } else {
                text += "\n" + list;
            }
        }
        if (output != null) {
            Files.writeString(output, text, StandardCharsets.UTF_8);
        } else {
            PrintStream o = System.out;
            o.print(text);
            o.flush();
        }
        return out.failed() ? 1 : 0;
    }

    /** The pid of the storage node when it listens on a loopback address of this machine, else null. */
    private String localNodePid() {
        String addr = deviceOptions.nodeAddress();
        int colon = addr == null ? -1 : addr.lastIndexOf(':');
        if (colon <= 0 || !ListeningProcess.isLoopback(addr.substring(0, colon))) {
            return null;
        }
        try {
            return ListeningProcess.pidListeningOn(Integer.parseInt(addr.substring(colon + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private Map<String, String> cliOptions() {
        Map<String, String> m = new LinkedHashMap<>();
        put(m, "name", name);
        put(m, "rw", rw);
        put(m, "rwmixread", rwmixread);
        put(m, "rwmixwrite", rwmixwrite);
        put(m, "bs", bs);
        put(m, "bssplit", bssplit);
        put(m, "iodepth", iodepth);
        put(m, "numjobs", numjobs);
        put(m, "size", size);
        put(m, "offset", offset);
        put(m, "runtime", runtime);
        put(m, "time_based", timeBased);
        put(m, "ramp_time", rampTime);
        put(m, "verify", verify);
        put(m, "verify_pattern", verifyPattern);
        put(m, "do_verify", doVerify);
        put(m, "verify_fatal", verifyFatal);
        put(m, "percentile_list", percentileList);
        put(m, "group_reporting", groupReporting);
        put(m, "blockalign", blockalign);
        put(m, "random_distribution", randomDistribution);
        put(m, "randrepeat", randrepeat);
        put(m, "randseed", randseed);
        put(m, "random_generator", randomGenerator);
        put(m, "latency_target", latencyTarget);
        put(m, "latency_window", latencyWindow);
        put(m, "latency_percentile", latencyPercentile);
        put(m, "rate", rate);
        put(m, "rate_iops", rateIops);
        put(m, "thinktime", thinktime);
        put(m, "thinktime_blocks", thinktimeBlocks);
        put(m, "loops", loops);
        put(m, "startdelay", startdelay);
        put(m, "verify_backlog", verifyBacklog);
        put(m, "verify_state_save", verifyStateSave);
        put(m, "verify_state_load", verifyStateLoad);
        put(m, "steadystate", steadystate);
        put(m, "steadystate_duration", ssDuration);
        put(m, "steadystate_ramp_time", ssRamp);
        put(m, "steadystate_check_interval", ssInterval);
        put(m, "write_bw_log", bwLog);
        put(m, "write_lat_log", latLog);
        put(m, "write_iops_log", iopsLog);
        put(m, "log_avg_msec", logAvgMsec);
        return m;
    }

    private static void put(Map<String, String> m, String k, String v) {
        if (v != null) {
            m.put(k, v);
        }
    }

    /** Bad arguments (IllegalArgumentException) print one line and exit 2, like picocli's own parameter errors. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            if (ex instanceof IllegalArgumentException || ex instanceof UnsupportedOperationException) {
                c.getErr().println("rdmablock bench: " + ex.getMessage());
                return 2;
            }
            throw ex;
        });
        return cl;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}
