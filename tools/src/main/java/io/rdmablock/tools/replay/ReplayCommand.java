package io.rdmablock.tools.replay;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.tools.device.DeviceSource;
import io.rdmablock.tools.device.TableOrJson;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rdmablock replay --volume NAME --trace FILE}: replays a block trace exactly as written through the
 * initiator library and verifies every read against a model of what the replay wrote (see {@link TraceReplay}).
 * Before the first I/O it prints what it does to the trace: the format, lines skipped, requests folded into a smaller
 * volume, requests not aligned to the LBA size (carried out with read-modify-write). Exit code 0 when every read
 * verified and no request failed, 1 otherwise, 2 for bad arguments (a missing or malformed trace included).
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Replay a block trace on a fresh volume exactly as written, verifying every read against a"
                + " model of what the trace wrote.",
                "Trace formats (--trace-format): msn = 'time_ms device start_sector size_sectors rw' (512-byte"
                        + " sectors, rw 1 = read); msr = SNIA/MSR Cambridge CSV 'Timestamp,Hostname,DiskNumber,Type,"
                        + "Offset,Size,ResponseTime' (FILETIME 100 ns, bytes); blkparse = blktrace's blkparse text"
                        + " output (Q events, else D, else C); auto detects from the first line.",
                "Requests not aligned to the volume's LBA size are carried out exactly (read-modify-write of the"
                        + " partial blocks) and counted; offsets beyond the volume are folded (offset mod capacity)"
                        + " and counted."})
public final class ReplayCommand implements Callable<Integer> {

    @Mixin
    DeviceSource device = new DeviceSource();

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Trace file.")
    Path trace;

    @Option(names = "--trace-format", defaultValue = "auto", paramLabel = "FORMAT",
            description = "auto, msn, msr or blkparse (default: ${DEFAULT-VALUE}).")
    String traceFormat;

    @Option(names = "--replay-time-scale", defaultValue = "100", paramLabel = "PERCENT",
            description = "Issue requests at PERCENT of the trace's rate, as fio's replay_time_scale: 100 = the"
                    + " trace's pace, 200 = twice as fast, 50 = half as fast; 0 = as fast as possible (default:"
                    + " ${DEFAULT-VALUE}).")
    int timeScalePercent;

    @Option(names = "--iodepth", paramLabel = "N", defaultValue = "16",
            description = "Requests in flight, 1..256 (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "2147483647",
            description = "Replay at most N requests.")
    int limit;

    @Option(names = "--timeout-s", paramLabel = "S", defaultValue = "900",
            description = "Bound on the whole replay in seconds (default: ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = "table or json (one object on stdout; the notes on what was done to the trace then go to"
                    + " stderr; the exit code stays 1 on a verification failure) (default: ${DEFAULT-VALUE}).")
    String output;

    @Spec
    CommandSpec spec;

    static TraceFormat format(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "auto" -> null;
            case "msn" -> TraceFormat.MSN;
            case "msr", "snia" -> TraceFormat.MSR;
            case "blkparse" -> TraceFormat.BLKPARSE;
            default -> throw new IllegalArgumentException("invalid --trace-format: '" + v
                    + "', allowed=auto|msn|msr|blkparse");
        };
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (!TableOrJson.valid(output)) { // text: the old word for table, still accepted
            throw new IllegalArgumentException(TableOrJson.invalid(output));
        }
        boolean json = TableOrJson.json(output);
        PrintWriter notes = json ? spec.commandLine().getErr() : out; // never silent about the trace, JSON or not
        if (iodepth < 1 || iodepth > 256) {
            throw new IllegalArgumentException("invalid --iodepth: --iodepth=" + iodepth + ", min=1, max=256");
        }
        if (timeScalePercent < 0 || timeScalePercent > 100_000) {
            throw new IllegalArgumentException("invalid --replay-time-scale: " + timeScalePercent + ", min=0, max=100000");
        }
        Trace loaded = Trace.load(trace, format(traceFormat), limit);
        try (BlockDevice dev = device.open(device.ioQueues())) {
            Trace t = loaded.foldedInto(dev.capacityBytes());
            TraceReplay.check(t, dev.capacityBytes());
            int mis = t.misaligned(dev.lbaSize());
            notes.printf("replay: %s: %d requests (%s format), %d lines skipped%n", trace.getFileName(), t.count(),
                    t.format().cliName(), t.skipped());
            notes.printf("replay: %d requests folded into the %d-byte volume (offset mod capacity)%n", t.folded(),
                    dev.capacityBytes());
            if (mis > 0) {
                int i = t.firstMisaligned(dev.lbaSize());
                notes.printf("replay: %d requests not aligned to the %d-byte LBA size, carried out with read-modify-write"
                        + " of their partial blocks (first: line %d, offset=%d length=%d)%n", mis, dev.lbaSize(),
                        t.lines()[i], t.offsets()[i], t.lengths()[i]);
            } else {
                notes.printf("replay: 0 requests not aligned to the %d-byte LBA size%n", dev.lbaSize());
            }
            notes.printf("replay: timing: %s%n", timeScalePercent == 0 ? "as fast as possible (--replay-time-scale=0)"
                    : timeScalePercent + "% of the trace's rate (--replay-time-scale)");
            notes.flush();
            TraceReplay.Result r = new TraceReplay(dev, iodepth, timeoutS * 1_000_000_000L, timeScalePercent).run(t);
            if (json) { // the record's components, the derived numbers, and what was done to the trace
                var m = new java.util.LinkedHashMap<String, Object>(io.rdmablock.mgmt.client.Json.MAPPER.convertValue(
                        r, java.util.Map.class));
                m.put("iops", r.iops());
                m.put("ok", r.ok());
                m.put("traceFormat", t.format().cliName());
                m.put("linesSkipped", t.skipped());
                m.put("folded", t.folded());
                m.put("misaligned", mis);
                m.put("lbaSize", dev.lbaSize());
                m.put("timeScalePercent", timeScalePercent);
                out.println(io.rdmablock.mgmt.client.Json.pretty(m));
                out.flush();
                return r.ok() ? 0 : 1;
            }
            out.printf("replay: %d requests (%d reads, %d writes) in %.2f s: %.0f IOPS, read %.1f MiB, written %.1f MiB%n",
                    r.requests(), r.reads(), r.writes(), r.elapsedNs() / 1e9, r.iops(), r.bytesRead() / 1048576.0,
                    r.bytesWritten() / 1048576.0);
            out.printf("replay: latency p50 %.1f us, p99 %.1f us, max %.1f us%n", r.p50Ns() / 1e3, r.p99Ns() / 1e3,
                    r.maxNs() / 1e3);
            if (timeScalePercent > 0) {
                out.printf("replay: %d requests issued more than 1 ms after their scaled timestamp%n", r.late());
            }
            out.printf("replay: verification %s: %d reads matched the trace's bytes, %d mismatches, %d errors%n",
                    r.ok() ? "OK" : "FAILED", r.readsVerified(), r.mismatches(), r.errors());
            r.firstProblems().forEach(p -> out.println("replay:   " + p));
            out.flush();
            return r.ok() ? 0 : 1;
        }
    }
}
