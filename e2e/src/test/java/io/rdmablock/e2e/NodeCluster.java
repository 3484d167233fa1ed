package io.rdmablock.e2e;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.testing.Await;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A management server in this JVM and storage nodes as separate processes ({@code NodeMain}, soft provider,
 * loopback), so a node can be killed with SIGKILL and restarted on the same data directory. Node {@code k} is
 * {@code n<k>} with data in {@code <dir>/n<k>} and its log in {@code <dir>/n<k>.log}. Every wait is bounded.
 */
final class NodeCluster implements AutoCloseable {
    static final String TOKEN = "e2e-token";
    private final Path dir;
    /** The management server in this JVM, or null with an external (highly available) management plane. */
    private final MgmtServer mgmt;
    /** Every management URL, comma-separated: the nodes' {@code --mgmt-url}. */
    private final String mgmtUrls;
    private final MgmtClient client;
    private final Process[] nodes;
    private final List<String> extraArgs;
    private final String provider;
    private final Placement placement;
    /** Each node's Prometheus listener port on loopback, fixed for the cluster's life (so restarts keep it). */
    private final int[] metricsPorts;

    /**
     * Where the processes live: the management server's listen host, each node's listen host and port, and a
     * command prefix that launches node {@code k} (e.g. {@code ip netns exec NS}: it execs the JVM, so the process
     * handle is the JVM's and SIGKILL/SIGSTOP reach it). {@link #loopback()} is the default.
     */
    interface Placement {
        String mgmtHost();

        String nodeHost(int k);

        /** 0 = any free port (changes at every restart). */
        int nodePort(int k);

        List<String> launchPrefix(int k);

        static Placement loopback() {
            return new Placement() {
                public String mgmtHost() {
                    return "127.0.0.1";
                }

                public String nodeHost(int k) {
                    return host();
                }

                public int nodePort(int k) {
                    return 0;
                }

                public List<String> launchPrefix(int k) {
                    return List.of();
                }
            };
        }
    }

    /** Soft provider on loopback. */
    NodeCluster(Path dir, int nodeCount, List<String> extraNodeArgs) throws IOException, InterruptedException {
        this(dir, nodeCount, "soft", extraNodeArgs);
    }

    /**
     * @param provider the nodes' verbs provider ({@code soft}, {@code ffm}); they listen on
     *                 {@code rdmablock.test.address} (default 127.0.0.1), as the VM runner sets it
     */
    NodeCluster(Path dir, int nodeCount, String provider, List<String> extraNodeArgs)
            throws IOException, InterruptedException {
        // a node timeout of 3 s; 30 s in the VM runner's TCG guest, where a heartbeat can be late by seconds
        this(dir, nodeCount, provider, extraNodeArgs, Placement.loopback(), provider.equals("soft") ? 3_000 : 30_000);
    }

    /** @param nodeTimeoutMs the management server's node timeout (a node without a heartbeat this long is down) */
    NodeCluster(Path dir, int nodeCount, String provider, List<String> extraNodeArgs, Placement placement,
                long nodeTimeoutMs) throws IOException, InterruptedException {
        // the TCG guest of the VM runner (providers other than soft) is ~50x slower: heartbeats there may lapse a 2 s
        // lease with nothing wrong, and a promotion nobody asked for would change what the test sees
        this(dir, nodeCount, provider, extraNodeArgs, placement, nodeTimeoutMs,
                provider.equals("soft") ? io.rdmablock.mgmt.api.cluster.ClusterService.DEFAULT_LEASE_MS : 15_000);
    }

    /** @param leaseMs the management server's primary lease (docs/failover.md) */
    NodeCluster(Path dir, int nodeCount, String provider, List<String> extraNodeArgs, Placement placement,
                long nodeTimeoutMs, long leaseMs) throws IOException, InterruptedException {
        this(dir, nodeCount, provider, extraNodeArgs, placement, nodeTimeoutMs, leaseMs,
                io.rdmablock.mgmt.api.cluster.ClusterService.DEFAULT_REBUILD_AFTER_MS);
    }

    /** Soft provider on loopback, with the management server's rebuild delay {@code rebuildAfterMs} (docs/resync.md). */
    static NodeCluster withRebuildAfter(Path dir, int nodeCount, List<String> extraNodeArgs, long rebuildAfterMs)
            throws IOException, InterruptedException {
        return new NodeCluster(dir, nodeCount, "soft", extraNodeArgs, Placement.loopback(), 3_000,
                io.rdmablock.mgmt.api.cluster.ClusterService.DEFAULT_LEASE_MS, rebuildAfterMs);
    }

    /** @param rebuildAfterMs the management server's rebuild delay (docs/resync.md) */
    NodeCluster(Path dir, int nodeCount, String provider, List<String> extraNodeArgs, Placement placement,
                long nodeTimeoutMs, long leaseMs, long rebuildAfterMs) throws IOException, InterruptedException {
        this(dir, nodeCount, provider, extraNodeArgs, placement, MgmtServer.start(dir.resolve("mgmt"), null,
                MgmtServer.Settings.of(placement.mgmtHost(), 0, TOKEN).withNodeTimeoutMs(nodeTimeoutMs)
                        .withLeaseMs(leaseMs).withRebuildAfterMs(rebuildAfterMs)
                        .withHttp(io.rdmablock.mgmt.api.http.MgmtHttpOptions.of(TOKEN)
                                .withPlaintextSecrets(labPlaintextSecrets(placement.mgmtHost())))), null);
    }

    /**
     * @return true when the management server listens on a non-loopback address (ops/chaos/failover's network
     *         namespaces): the nodes then reach it over plain HTTP on a throwaway bridge, and need their node keys
     *         (replicated volumes), so the test plane runs with the lab flag ({@code --allow-plaintext-secrets},
     *         docs/authentication.md "Secrets only over TLS")
     */
    static boolean labPlaintextSecrets(String mgmtHost) {
        return !(mgmtHost.startsWith("127.") || "::1".equals(mgmtHost) || "localhost".equals(mgmtHost));
    }

    /**
     * Nodes reporting to an external management plane (several servers, docs/ha.md): {@code mgmtUrls} is every
     * server's URL, comma-separated; the nodes and {@link #client()} fail over among them. Its servers' token must be
     * {@link #TOKEN}.
     */
    NodeCluster(Path dir, int nodeCount, List<String> extraNodeArgs, Placement placement, String mgmtUrls)
            throws IOException, InterruptedException {
        this(dir, nodeCount, "soft", extraNodeArgs, placement, null, mgmtUrls);
    }

    private NodeCluster(Path dir, int nodeCount, String provider, List<String> extraNodeArgs, Placement placement,
                        MgmtServer mgmt, String mgmtUrls) throws IOException, InterruptedException {
        this.dir = dir;
        this.provider = provider;
        this.placement = placement;
        this.extraArgs = List.copyOf(extraNodeArgs);
        this.mgmt = mgmt;
        this.mgmtUrls = mgmt != null ? mgmt.url() : mgmtUrls;
        // rdmablock.mgmt.timeoutMs as the CLI's (default 10 s): the VM runner raises it, since the first requests
        // to a cold management server in the TCG guest took over 10 s (class loading on its event loop)
        this.client = new MgmtClient(MgmtClient.parseUrls("management URLs", this.mgmtUrls), TOKEN,
                Duration.ofMillis(Math.max(1, Long.getLong("rdmablock.mgmt.timeoutMs", 10_000))), null);
        this.nodes = new Process[nodeCount + 1];
        this.metricsPorts = new int[nodeCount + 1];
        for (int k = 1; k <= nodeCount; k++) {
            try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1,
                    java.net.InetAddress.getLoopbackAddress())) {
                metricsPorts[k] = probe.getLocalPort();
            }
        }
        for (int k = 1; k <= nodeCount; k++) {
            start(k);
        }
        for (int k = 1; k <= nodeCount; k++) {
            awaitNode(k, NodeState.UP, 240); // a bound: node JVMs start slowly in the TCG guest
        }
    }

    MgmtClient client() {
        return client;
    }

    static String nodeId(int k) {
        return "n" + k;
    }

    /** Node index of a node id {@code n<k>}. */
    static int index(String nodeId) {
        return Integer.parseInt(nodeId.substring(1));
    }

    Path dataDir(int k) {
        return dir.resolve(nodeId(k));
    }

    /** The data file of volume {@code id} on node {@code k}. */
    Path volumeFile(int k, String volumeId) {
        return dataDir(k).resolve("volumes").resolve(volumeId + ".vol");
    }

    /**
     * The content of volume {@code id} on node {@code k} (stopped or killed: its store is opened here, which runs
     * the recovery a restart would) as a flat image file: a mapped volume's data file is a heap of clusters, so a copy
     * is read through the store, as the node reads it.
     */
    Path copyImage(int k, String volumeId) throws IOException {
        return copyImage(k, volumeId, 0);
    }

    /**
     * As {@link #copyImage(int, String)}, of snapshot {@code snapshotId} of the copy (0: the live volume), read through
     * the store's read-only view of it.
     */
    Path copyImage(int k, String volumeId, long snapshotId) throws IOException {
        Path image = dir.resolve("image-" + nodeId(k) + "-" + volumeId + "-" + snapshotId + ".img");
        try (var store = io.rdmablock.node.store.VolumeStore.open(dataDir(k),
                io.rdmablock.node.store.StoreOptions.defaults());
             var q = store.newQueue(1);
             var arena = java.lang.foreign.Arena.ofConfined();
             var out = java.nio.channels.FileChannel.open(image, java.nio.file.StandardOpenOption.CREATE,
                     java.nio.file.StandardOpenOption.TRUNCATE_EXISTING, java.nio.file.StandardOpenOption.WRITE)) {
            var v = snapshotId == 0 ? store.get(volumeId) : store.snapshots().open(volumeId,
                    store.snapshots().list(volumeId).stream().filter(x -> x.id() == snapshotId).findFirst()
                            .orElseThrow(() -> new IOException("no snapshot " + snapshotId + " of " + volumeId
                                    + " on " + nodeId(k))).name());
            var buf = arena.allocate(1 << 20, 4096);
            long[] ud = new long[1];
            int[] res = new int[1];
            for (long off = 0; off < v.sizeBytes(); off += buf.byteSize()) {
                var slice = buf.asSlice(0, Math.min(buf.byteSize(), v.sizeBytes() - off));
                q.submitRead(v, off, slice, 1);
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (q.reap(ud, res, 1) == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("read of " + volumeId + " at " + off + " on " + nodeId(k) + " unanswered");
                    }
                    q.awaitCompletion(100_000_000L);
                }
                if (res[0] != 0) {
                    throw new IOException("read of " + volumeId + " at " + off + " on " + nodeId(k) + ": " + res[0]);
                }
                var bb = slice.asByteBuffer();
                while (bb.hasRemaining()) {
                    out.write(bb, off + bb.position());
                }
            }
        }
        return image;
    }

    String log(int k) {
        try {
            return Files.readString(dir.resolve(nodeId(k) + ".log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** The last {@code lines} lines of every node's log, for failure messages. */
    String tails(int lines) {
        StringBuilder b = new StringBuilder();
        for (int k = 1; k < nodes.length; k++) {
            String[] all = log(k).split("\n");
            b.append("\n--- ").append(nodeId(k)).append(".log (last ").append(lines).append(" lines)\n");
            for (int i = Math.max(0, all.length - lines); i < all.length; i++) {
                b.append(all[i]).append('\n');
            }
        }
        return b.toString();
    }

    /** @return the management URL, or with an external plane every URL comma-separated */
    String mgmtUrl() {
        return mgmtUrls;
    }

    int nodeCount() {
        return nodes.length - 1;
    }

    boolean alive(int k) {
        return nodes[k] != null && nodes[k].isAlive();
    }

    /** Sends {@code signal} (e.g. STOP, CONT) to node {@code k}'s process. */
    void signal(int k, String signal) throws IOException, InterruptedException {
        Process p = nodes[k];
        int rc = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new IllegalStateException("kill -" + signal + " " + nodeId(k) + " (pid " + p.pid() + "): exit " + rc);
        }
    }

    void start(int k) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(placement.launchPrefix(k));
        cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                // forward-queue set-up takes > 10 s in the TCG guest of the VM runner; a bound, not a wait
                "-Drdmablock.replica.openTimeoutMs=120000",
                "-cp", childClasspath(), "io.rdmablock.node.NodeMain", "--data-dir", dataDir(k).toString(),
                "--listen", placement.nodeHost(k) + ":" + placement.nodePort(k), "--provider", provider,
                "--mgmt-url", mgmtUrls, "--token", TOKEN,
                "--node-id", nodeId(k), "--heartbeat-ms", "300", "--capacity", "4G"));
        if (placement.launchPrefix(k).isEmpty()) { // a node in a network namespace cannot be scraped on loopback
            cmd.addAll(List.of("--metrics-listen", "127.0.0.1:" + metricsPorts[k]));
        }
        cmd.addAll(extraArgs);
        nodes[k] = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(nodeId(k) + ".log").toFile())).start();
    }

    /**
     * The sum of every sample of metric {@code name} (any labels) that node {@code k} exports now, or -1 when the
     * node cannot be scraped or does not export it.
     */
    double metric(int k, String name) {
        try {
            java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5)).build();
            String text = http.send(java.net.http.HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + metricsPorts[k] + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            double sum = 0;
            boolean found = false;
            for (String line : text.split("\n")) {
                if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    found = true;
                }
            }
            return found ? sum : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** SIGKILL, then waits for the process to be gone. */
    void kill(int k) throws InterruptedException {
        Process p = nodes[k];
        p.destroyForcibly();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(nodeId(k) + " did not die on SIGKILL");
        }
    }

    /** SIGTERM (clean shutdown: drain, flush, close), then waits. */
    void stop(int k) throws Exception {
        Process p = nodes[k];
        if (p == null || !p.isAlive()) {
            return;
        }
        new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            throw new IllegalStateException(nodeId(k) + " did not stop on SIGTERM:\n" + log(k));
        }
    }

    void awaitNode(int k, NodeState state, int seconds) throws InterruptedException {
        try {
            Await.until(() -> {
                try {
                    for (Node n : client.listNodes()) {
                        if (n.nodeId().equals(nodeId(k)) && n.state() == state) {
                            return true;
                        }
                    }
                } catch (RuntimeException e) {
                    // not yet
                }
                if (!nodes[k].isAlive() && state == NodeState.UP) {
                    throw new IllegalStateException(nodeId(k) + " exited:\n" + log(k));
                }
                return false;
            }, Duration.ofSeconds(seconds), nodeId(k) + " " + state);
        } catch (AssertionError e) { // the same exception as before for callers (and the node's log)
            throw new IllegalStateException(nodeId(k) + " not " + state + " within " + seconds + " s:\n" + log(k), e);
        }
    }

    /** Polls the volume until {@code until} holds (bounded); returns it. */
    Volume awaitVolume(String name, Predicate<Volume> until, int seconds, String what) throws InterruptedException {
        Volume[] last = {null};
        try {
            return Await.value(() -> last[0] = client.getVolume(name), until, Duration.ofSeconds(seconds),
                    "volume " + name + " " + what);
        } catch (AssertionError e) { // callers (the failover campaign) count an IllegalStateException as a timeout
            throw new IllegalStateException("volume " + name + " not " + what + " within " + seconds + " s: "
                    + last[0], e);
        }
    }

    /** The address nodes listen on: {@code rdmablock.test.address}, default 127.0.0.1. */
    static String host() {
        return System.getProperty("rdmablock.test.address", "127.0.0.1");
    }

    /** Providers to run on: {@code rdmablock.test.providers} (comma list), default {@code soft}. */
    static java.util.stream.Stream<String> providers() {
        return java.util.Arrays.stream(System.getProperty("rdmablock.test.providers", "soft").split(","))
                .map(String::trim).filter(p -> !p.isEmpty());
    }

    private static String childClasspath() {
        String cp = System.getProperty("rdmablock.test.classpath", "");
        return cp.isBlank() ? System.getProperty("java.class.path") : cp;
    }

    /** Stops the in-process management server for good (the nodes' heartbeats then fail); no-op with an external one. */
    void stopMgmt() {
        if (mgmt != null) {
            mgmt.close();
        }
    }

    @Override
    public void close() {
        for (int k = 1; k < nodes.length; k++) {
            if (nodes[k] != null) {
                nodes[k].destroyForcibly();
            }
        }
        for (int k = 1; k < nodes.length; k++) {
            try {
                if (nodes[k] != null) {
                    nodes[k].waitFor(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (mgmt != null) {
            mgmt.close();
        }
        // keep the node logs for a look after the run (the test's directory is deleted)
        try {
            Path keep = Path.of("target", "e2e-logs", dir.getFileName().toString());
            Files.createDirectories(keep);
            for (int k = 1; k < nodes.length; k++) {
                Path log = dir.resolve(nodeId(k) + ".log");
                if (Files.exists(log)) {
                    Files.copy(log, keep.resolve(nodeId(k) + ".log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (IOException e) {
            // logs are a courtesy
        }
    }
}
