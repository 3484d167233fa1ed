package io.rdmablock.initiator.bench;

import io.rdmablock.initiator.local.DeviceOptions;
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
 * where they act as defaults), so a long job file can be shortened with {@code --runtime=10}.
 * Exit status: 0, or 1 when a job had an I/O or verify error, 2 on bad arguments.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "fio-style benchmark on a volume (fio option names and meanings, fio JSON output).")
public final class BenchCommand implements Callable<Integer> {

    @Mixin
    DeviceOptions deviceOptions = new DeviceOptions();

    @Parameters(paramLabel = "JOBFILE", arity = "0..*", description = "fio job files limited to the supported subset.")
    List<Path> jobFiles = new ArrayList<>();

    @Option(names = "--name", description = "Job name (default: rdmablock).") String name;
    @Option(names = {"--rw", "--readwrite"}, description = "read, write, randread, randwrite, rw, randrw (default: read).") String rw;
    @Option(names = "--rwmixread", description = "Percentage of reads in rw/randrw (default: 50).") String rwmixread;
    @Option(names = "--rwmixwrite", description = "Percentage of writes in rw/randrw.") String rwmixwrite;
    @Option(names = {"--bs", "--blocksize"}, description = "Block size, or read,write sizes (default: 4k).") String bs;
    @Option(names = "--bssplit", description = "Block size mix, e.g. 4k/50:64k/50.") String bssplit;
    @Option(names = "--iodepth", description = "I/Os in flight per job (default: 1).") String iodepth;
    @Option(names = "--numjobs", description = "Clones of the job, one queue pair each (default: 1).") String numjobs;
    @Option(names = "--size", description = "Bytes (or %%) of the device per job (default: all from offset); bytes beyond the device are rejected (job files' size= is clamped with a warning).") String size;
    @Option(names = "--offset", description = "Start of the job's region, bytes or %% (default: 0).") String offset;
    @Option(names = "--runtime", description = "Run time, seconds or with unit (10s, 500ms).") String runtime;
    @Option(names = "--time_based", arity = "0..1", fallbackValue = "1", description = "Run for runtime even after size.") String timeBased;
    @Option(names = "--ramp_time", description = "Time before statistics are recorded.") String rampTime;
    @Option(names = "--verify", description = "crc32c, md5, pattern or 0.") String verify;
    @Option(names = "--verify_pattern", description = "32-bit pattern for verify=pattern (default: 0xdeadbeef).") String verifyPattern;
    @Option(names = "--do_verify", arity = "0..1", fallbackValue = "1", description = "Read back after writing (default: 1).") String doVerify;
    @Option(names = "--verify_fatal", arity = "0..1", fallbackValue = "1", description = "Stop at the first verify failure.") String verifyFatal;
    @Option(names = "--percentile_list", description = "Latency percentiles, e.g. 50:99:99.9.") String percentileList;
    @Option(names = "--group_reporting", arity = "0..1", fallbackValue = "1", description = "One result for all jobs.") String groupReporting;
    @Option(names = "--replay", paramLabel = "TRACE", description = "Replay a trace: time_ms dev start_sector size_sectors rw.") Path replay;
    @Option(names = "--replay_no_stall", arity = "0..1", fallbackValue = "1", description = "Replay as fast as possible.") String replayNoStall;
    @Option(names = "--replay_time_scale", defaultValue = "100", description = "Replay time scale in percent (default: 100).") int replayTimeScale;
    @Option(names = "--output-format", defaultValue = "normal", description = "normal or json (default: normal).") String outputFormat;
    @Option(names = "--output", paramLabel = "FILE", description = "Write the results to FILE instead of stdout.") Path output;
    @Option(names = "--eta", defaultValue = "auto", description = "Progress line: auto, always, never (default: auto).") String eta;
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
                for (JobFile.Section s : JobFile.parse(f)) {
                    Map<String, String> opts = new LinkedHashMap<>(s.options());
                    opts.putAll(cli);
                    specs.add(JobSpec.of(opts.getOrDefault("name", s.name()), opts));
                }
            }
            if (specs.isEmpty()) {
                throw new IllegalArgumentException("invalid job file: no jobs in " + jobFiles);
            }
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
                () -> deviceOptions.open(1), pid, progress);
        String text = outputFormat.equals("json")
                ? FioReport.json(out.entries(), out.cpu(), deviceOptions.displayName())
                : FioReport.human(out.entries(), out.cpu());
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
