package io.rdmablock.cli;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.TargetOptions;
import io.rdmablock.node.store.IoBackend;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rdmablock stack-bench}: the cost of rdmablock's own stack per I/O, apart from TCP and disk. Starts a storage
 * node with the <b>null store</b> ({@link IoBackend#NULL}: writes discarded, reads zero) and the <b>memory</b> verbs
 * provider, and an initiator on it, in this one JVM; runs 4 KiB random reads and writes at queue depth 1 and 32
 * (one I/O queue, one node poller by default), each row a ramp then a measured window; prints IOPS, p50/p99
 * completion latency, node and client CPU per I/O ({@link StackBenchRun}: per-thread CPU time by thread name),
 * context switches per I/O, and IOPS per node core = 1e6 / node CPU us per I/O beside SPDK's published ~1.37M 4K
 * IOPS per target core over RDMA (SPDK NVMe-oF RDMA performance report, the figure as issue 19 gives it).
 *
 * <p>Bounded: every row runs {@code --ramp + --runtime} seconds; the node's data directory is a temporary directory
 * removed at the end. Exit 0, 1 when a row had I/O errors or no I/O, 2 for bad arguments.
 */
@Command(name = "stack-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Stack-only benchmark: node (null store, memory or soft verbs provider) and initiator in this JVM.",
                "4K randread/randwrite at QD1 and QD32; node and client CPU per I/O by thread; IOPS per node core "
                        + "vs SPDK's ~1.37M 4K IOPS per core over RDMA. Benchmark only: the null store discards data."})
public final class StackBenchCommand implements Callable<Integer> {
    /** SPDK NVMe-oF RDMA performance report: 4K IOPS per target core, the figure as issue 19 gives it. */
    static final double SPDK_IOPS_PER_CORE = 1.37e6;

    @Spec
    CommandSpec spec;

    @Option(names = "--runtime-s", paramLabel = "S", defaultValue = "5", description = "Measured seconds per row (1..600, default "
            + "${DEFAULT-VALUE}).")
    double runtimeS;

    @Option(names = "--ramp-s", paramLabel = "S", defaultValue = "1", description = "Unmeasured seconds before each row (0..60, default "
            + "${DEFAULT-VALUE}).")
    double rampS;

    /** {@code --runtime} and {@code --ramp}: the old spellings of {@code --runtime-s} and {@code --ramp-s}. */
    @Option(names = "--runtime", paramLabel = "S", hidden = true)
    Double runtimeAlias;

    @Option(names = "--ramp", paramLabel = "S", hidden = true)
    Double rampAlias;

    @Option(names = "--rows", paramLabel = "ROWS", defaultValue = "randread:1,randread:32,randwrite:1,randwrite:32",
            description = "rw:iodepth list (rw: randread|randwrite; iodepth 1..128; default ${DEFAULT-VALUE}).")
    String rows;

    @Option(names = "--provider", paramLabel = "PROVIDER", defaultValue = "memory", description = "Verbs provider of node and initiator: "
            + "memory (RDMA READ/WRITE as memory copies: the stack alone) or soft (RDMA over loopback TCP: the stack "
            + "and the soft transport, without a disk); default ${DEFAULT-VALUE}.")
    String provider;

    @Option(names = "--pollers", paramLabel = "N", defaultValue = "1", description = "Node poller threads (default ${DEFAULT-VALUE}).")
    int pollers;

    @Option(names = "--idle-spin-us", paramLabel = "US", defaultValue = "200", description = "Node pollers' spin after their last work "
            + "(0..1000000 us, default ${DEFAULT-VALUE}; as rdmablock node --idle-spin-us).")
    long idleSpinUs;

    @Option(names = "--profile", description = "Sample the node pollers' stacks every 2 ms and print the top frames.")
    boolean profile;

    @Option(names = "--output-format", paramLabel = "FORMAT", defaultValue = "normal", description = "normal or json (default: normal).")
    String outputFormat;

    @Override
    public Integer call() throws Exception {
        runtimeS = runtimeAlias != null ? runtimeAlias : runtimeS;
        rampS = rampAlias != null ? rampAlias : rampS;
        if (runtimeS < 0.1 || runtimeS > 600 || rampS < 0 || rampS > 60) {
            throw new IllegalArgumentException("invalid --runtime-s/--ramp-s: runtime=" + runtimeS + " (0.1..600), ramp="
                    + rampS + " (0..60)");
        }
        if (!outputFormat.equals("normal") && !outputFormat.equals("json")) {
            throw new IllegalArgumentException("invalid --output-format: " + outputFormat + ", allowed=normal|json");
        }
        if (!provider.equals("memory") && !provider.equals("soft")) {
            throw new IllegalArgumentException("invalid --provider: " + provider + ", allowed=memory|soft");
        }
        long spinNs = TargetOptions.idleSpinNsOfMicros("--idle-spin-us", idleSpinUs);
        List<Object[]> plan = parseRows(rows);
        String load = loadAverage();
        Path dir = Files.createTempDirectory("rdmablock-stack-bench-");
        List<StackBenchRun.Row> results = new ArrayList<>();
        boolean failed = false;
        NodeConfig cfg = new NodeConfig(dir, new InetSocketAddress("127.0.0.1", 0), provider, (URI) null, null,
                // a node of its own on loopback: its volume admits any host
                "stack-bench", null, null, NodeConfig.DEFAULT_HEARTBEAT_MS, List.of("stack:1G:4096:*"),
                TargetOptions.defaults().withPollers(pollers).withIdleSpinNs(spinNs));
        try (StorageNode node = new StorageNode(cfg).withStoreOptions(
                io.rdmablock.node.NodeConfiguration.fromSystemProperties().storeOptions().withBackend(IoBackend.NULL)).start();
             NvmeBlockDevice dev = NvmeBlockDevice.open(node.fabricAddress(), Subsystem.nqnFor("stack"), null,
                     DeviceOptions.defaults().providerMode(provider).ioQueues(1))) {
            for (Object[] r : plan) {
                StackBenchRun run = new StackBenchRun(dev, (Boolean) r[0], (Integer) r[1]);
                StackBenchRun.Row row = run.run((long) (rampS * 1e9), (long) (runtimeS * 1e9), profile);
                if (run.firstError() != null || row.ios() == 0) {
                    spec.commandLine().getErr().println("rdmablock stack-bench: " + row.rw() + " QD" + row.iodepth() + ": "
                            + (row.ios() == 0 ? "no I/O completed" : "I/O error: " + run.firstError()));
                    failed = true;
                }
                results.add(row);
            }
        } finally {
            deleteTree(dir);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(outputFormat.equals("json") ? json(results, load, provider) : human(results, load, provider));
        out.flush();
        return failed ? 1 : 0;
    }

    static List<Object[]> parseRows(String spec) {
        List<Object[]> plan = new ArrayList<>();
        for (String item : spec.split(",")) {
            String[] p = item.strip().split(":");
            if (p.length != 2 || !(p[0].equals("randread") || p[0].equals("randwrite"))) {
                throw new IllegalArgumentException("invalid --rows item: '" + item + "', expected randread:QD or "
                        + "randwrite:QD");
            }
            int qd;
            try {
                qd = Integer.parseInt(p[1]);
            } catch (NumberFormatException e) {
                qd = -1;
            }
            if (qd < 1 || qd > 128) {
                throw new IllegalArgumentException("invalid --rows iodepth: '" + p[1] + "', min=1, max=128");
            }
            plan.add(new Object[] {p[0].equals("randwrite"), qd});
        }
        return plan;
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "unknown";
        }
    }

    static String human(List<StackBenchRun.Row> rows, String load, String provider) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "stack-only bench: %s verbs provider, NULL store (data discarded), "
                + "node and initiator in one JVM; %d CPUs, load average %s%n", provider, Runtime.getRuntime()
                .availableProcessors(), load));
        b.append(String.format(Locale.ROOT, "%-14s %9s %8s %8s %10s %10s %9s %8s %8s %9s %9s %12s %8s%n", "row",
                "IOPS", "p50 us", "p99 us", "node us/io", "cli us/io", "oth us/io", "node cs", "cli cs", "node B/io",
                "cli B/io", "IOPS/nodecore", "vs SPDK"));
        for (StackBenchRun.Row r : rows) {
            b.append(String.format(Locale.ROOT, "%-14s %9.0f %8.1f %8.1f %10.2f %10.2f %9.2f %8.2f %8.2f %9.0f "
                            + "%9.0f %12.0f %8.3f%n", r.rw() + " QD" + r.iodepth(), r.iops(), r.p50Us(), r.p99Us(),
                    r.nodeCpuNsPerIo() / 1000, r.clientCpuNsPerIo() / 1000, r.otherCpuNsPerIo() / 1000,
                    r.nodeCtxPerIo(), r.clientCtxPerIo(), r.nodeAllocPerIo(), r.clientAllocPerIo(),
                    r.iopsPerNodeCore(),
                    r.iopsPerNodeCore() / SPDK_IOPS_PER_CORE));
        }
        b.append("node = rdmablock-poller-* threads, cli = rdmablock-ioq-* threads, oth = every other thread; cs = "
                + "context switches per I/O; B/io = Java heap bytes allocated per I/O (cli includes the bench's own "
                + "whenComplete callback, ~60 B); IOPS/nodecore = 1e6 / node us per I/O; vs SPDK = that / 1.37M (SPDK "
                + "NVMe-oF RDMA performance report, 4K IOPS per target core, as given in issue 19)\n");
        for (StackBenchRun.Row r : rows) {
            if (r.profileSamples() > 0) {
                b.append(String.format(Locale.ROOT, "profile %s QD%d: %d node-poller stacks%n", r.rw(), r.iodepth(),
                        r.profileSamples()));
                for (Map.Entry<String, Integer> e : r.profile()) {
                    b.append(String.format(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * e.getValue() / r.profileSamples(),
                            e.getKey()));
                }
            }
        }
        return b.toString();
    }

    static String json(List<StackBenchRun.Row> rows, String load, String provider) {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"bench\": \"stack-only\",\n  \"provider\": \"").append(provider)
                .append("\",\n  \"store\": \"null\",\n")
                .append("  \"cpus\": ").append(Runtime.getRuntime().availableProcessors()).append(",\n")
                .append("  \"load_average\": \"").append(load).append("\",\n")
                .append("  \"spdk_iops_per_core\": 1370000,\n")
                .append("  \"spdk_source\": \"SPDK NVMe-oF RDMA performance report, 4K IOPS per target core, as "
                        + "given in issue 19\",\n")
                .append("  \"cpu_attribution\": {\"node\": \"rdmablock-poller-*\", \"client\": \"rdmablock-ioq-*\", "
                        + "\"other\": \"all other threads\"},\n  \"rows\": [");
        for (int i = 0; i < rows.size(); i++) {
            StackBenchRun.Row r = rows.get(i);
            b.append(i == 0 ? "\n" : ",\n").append(String.format(Locale.ROOT, "    {\"rw\": \"%s\", \"bs\": 4096, "
                            + "\"iodepth\": %d, \"runtime_s\": %.3f, \"ios\": %d, \"errors\": %d, \"iops\": %.1f, "
                            + "\"lat_p50_us\": %.2f, \"lat_p99_us\": %.2f, \"node_cpu_ns_per_io\": %.1f, "
                            + "\"client_cpu_ns_per_io\": %.1f, \"other_cpu_ns_per_io\": %.1f, \"node_ctx_per_io\": "
                            + "%.3f, \"client_ctx_per_io\": %.3f, \"node_alloc_bytes_per_io\": %.1f, "
                            + "\"client_alloc_bytes_per_io\": %.1f, \"iops_per_node_core\": %.0f, "
                            + "\"ratio_vs_spdk\": %.4f}", r.rw(), r.iodepth(), r.seconds(), r.ios(), r.errors(),
                    r.iops(), r.p50Us(), r.p99Us(), r.nodeCpuNsPerIo(), r.clientCpuNsPerIo(), r.otherCpuNsPerIo(),
                    r.nodeCtxPerIo(), r.clientCtxPerIo(), r.nodeAllocPerIo(), r.clientAllocPerIo(),
                    r.iopsPerNodeCore(), r.iopsPerNodeCore() / SPDK_IOPS_PER_CORE));
        }
        return b.append("\n  ]\n}\n").toString();
    }

    private static void deleteTree(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (Exception ignored) {
            // a temporary directory; best effort
        }
    }
}
