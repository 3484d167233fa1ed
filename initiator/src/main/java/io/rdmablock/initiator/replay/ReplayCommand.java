package io.rdmablock.initiator.replay;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.cli.ConnectOptions;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rdmablock replay --volume NAME --trace FILE}: replays a block trace through the initiator library and
 * verifies every read against a model of what the replay wrote (see {@link TraceReplay}). Exit code 0 when every read
 * verified and no request failed, 1 otherwise, 2 for bad arguments.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = "Replay a block trace (time_ms dev start_sector size_sectors rw) on a fresh volume, "
                + "verifying every read against a model of what was written.")
public final class ReplayCommand implements Callable<Integer> {
    static final int MAX_REQUEST_BYTES = 4 << 20;

    @Mixin
    ConnectOptions connect = new ConnectOptions();

    @Option(names = "--trace", required = true, paramLabel = "FILE", description = "Trace file.")
    Path trace;

    @Option(names = "--iodepth", defaultValue = "16", description = "Requests in flight, 1..256 (default: ${DEFAULT-VALUE}).")
    int iodepth;

    @Option(names = "--limit", defaultValue = "2147483647", description = "Replay at most this many requests.")
    int limit;

    @Option(names = "--timeout-s", defaultValue = "900", description = "Bound on the whole replay in seconds (default: ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
            description = "text or json (one object; the exit code stays 1 on a verification failure).")
    String output;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (!"text".equals(output) && !"json".equals(output)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "invalid --output: --output=" + output + ", must be one of text, json");
        }
        if (iodepth < 1 || iodepth > 256) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "invalid --iodepth: --iodepth=" + iodepth + ", min=1, max=256");
        }
        try (BlockDevice dev = connect.open()) {
            Trace t = Trace.load(trace, dev.capacityBytes(), dev.lbaSize(), MAX_REQUEST_BYTES, limit);
            TraceReplay.Result r = new TraceReplay(dev, iodepth, timeoutS * 1_000_000_000L).run(t, MAX_REQUEST_BYTES);
            if ("json".equals(output)) { // the record's components plus the derived numbers
                var m = new java.util.LinkedHashMap<String, Object>(io.rdmablock.mgmt.client.Json.MAPPER.convertValue(
                        r, java.util.Map.class));
                m.put("iops", r.iops());
                m.put("ok", r.ok());
                out.println(io.rdmablock.mgmt.client.Json.pretty(m));
                out.flush();
                return r.ok() ? 0 : 1;
            }
            out.printf("replay: %d requests (%d reads, %d writes) in %.2f s: %.0f IOPS, read %.1f MiB, written %.1f MiB%n",
                    r.requests(), r.reads(), r.writes(), r.elapsedNs() / 1e9, r.iops(), r.bytesRead() / 1048576.0,
                    r.bytesWritten() / 1048576.0);
            out.printf("replay: latency p50 %.1f us, p99 %.1f us, max %.1f us%n", r.p50Ns() / 1e3, r.p99Ns() / 1e3,
                    r.maxNs() / 1e3);
            out.printf("replay: verification %s: %d reads matched the model, %d mismatches, %d errors%n",
                    r.ok() ? "OK" : "FAILED", r.readsVerified(), r.mismatches(), r.errors());
            r.firstProblems().forEach(p -> out.println("replay:   " + p));
            out.flush();
            return r.ok() ? 0 : 1;
        }
    }
}
