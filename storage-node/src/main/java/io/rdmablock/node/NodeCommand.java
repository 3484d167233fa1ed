package io.rdmablock.node;

import io.rdmablock.node.target.TargetOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code rdmablock node}: runs a storage node until SIGTERM/SIGINT, then shuts down cleanly (queues drained, volumes
 * flushed, everything closed in reverse order). Exit code 0 after a clean stop, 1 when start-up fails, 2 for bad
 * arguments (picocli). The node's {@code -D} system-property knobs ({@link NodeConfiguration}) are read and checked
 * first, before anything starts: a bad one fails the command with a message naming the property, its value and its
 * bounds, as a bad option does. docs/configuration.md lists both.
 */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "Run a storage node: serve volumes over the NVMe-oF-style RDMA fabric.")
public final class NodeCommand implements Callable<Integer> {

    // not required=true: `rdmablock node list|drain` are subcommands of this command and need no data dir
    @Option(names = "--data-dir", paramLabel = "DIR", description = "Volume store directory (required).")
    Path dataDir;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "0.0.0.0:4420", description = "Fabric listen host:port (default ${DEFAULT-VALUE}).")
    String listen;

    @Option(names = "--tcp-listen", paramLabel = "HOST:PORT", description = "Also serve NVMe/TCP on host:port "
            + "(e.g. 0.0.0.0:4420; Linux hosts: nvme connect -t tcp); default: RDMA only.")
    String tcpListen;

    @Option(names = "--provider", paramLabel = "auto|soft|ffm|memory", description = "Verbs provider (memory: one JVM "
            + "only; default: -Drdma.provider, else env RDMABLOCK_RDMA_PROVIDER, else auto).")
    String provider;

    @Option(names = "--mgmt-url", paramLabel = "URL[,URL...]", description = "Management server URL, or a "
            + "comma-separated list of several (the heartbeats fail over among them; default env RDMABLOCK_MGMT_URL); "
            + "without either the node serves the volumes in its store.")
    String mgmtUrl;

    @Option(names = "--token-file", paramLabel = "FILE", description = "File holding the management bearer token.")
    Path tokenFile;

    @Option(names = "--token", paramLabel = "TOKEN", description = "Management bearer token (prefer --token-file; "
            + "default env RDMABLOCK_TOKEN).")
    String token;

    @Option(names = "--ca-cert", paramLabel = "PEM", description = "Trust only this CA (PEM) for an https "
            + "--mgmt-url (default env RDMABLOCK_CA_CERT, else the JDK's CAs).")
    Path caCert;

    @Option(names = "--node-id", paramLabel = "ID", description = "Node id (default: the id stored in <data-dir>/node-id, "
            + "created once as <host name>-<8 hex digits>).")
    String nodeId;

    @Option(names = "--capacity", paramLabel = "SIZE", description = "Capacity offered for volumes, e.g. 100G "
            + "(default: the data dir's file system size).")
    String capacity;

    @Option(names = "--advertise-host", paramLabel = "HOST", description = "Host put in the fabric address registered with the management server.")
    String advertiseHost;

    @Option(names = "--metrics-listen", paramLabel = "HOST:PORT", description = "Prometheus /metrics host:port (default: none).")
    String metricsListen;

    @Option(names = "--heartbeat-ms", paramLabel = "MS", defaultValue = "500", description = "Heartbeat interval in ms (10..600000, default ${DEFAULT-VALUE}; each answer renews the primary lease, docs/failover.md).")
    long heartbeatMs;

    @Option(names = "--create-volume", paramLabel = "SPEC", description = "Create a volume at start if missing: name:size[:lbaSize[:hosts]], e.g. vol1:1G:4096:* "
            + "(repeatable). hosts: * (any host, warned about) or host NQNs separated by commas, applied to an existing "
            + "volume too; without it a new volume admits no host.")
    List<String> createVolumes = new ArrayList<>();

    @Option(names = "--max-queue-entries", paramLabel = "N", defaultValue = "128", description = "Largest I/O queue, entries (2..1024, default ${DEFAULT-VALUE}).")
    int maxQueueEntries;

    @Option(names = "--replica-timeout-ms", paramLabel = "MS", defaultValue = "3000", description = "A primary drops a secondary that "
            + "does not answer a forwarded command within this, ms (100..60000, default ${DEFAULT-VALUE}).")
    long replicaTimeoutMs;

    @Option(names = "--resync-mib-s", paramLabel = "MIB_S", defaultValue = "40", description = "Ceiling of this node's background "
            + "budget: bandwidth of its resyncs, rebuilds and verifies together while its foreground I/O is idle or "
            + "within its latency slack, MiB/s (1..100000, default ${DEFAULT-VALUE}; docs/qos.md).")
    int resyncMibS;

    @Option(names = "--resync-min-mib-s", paramLabel = "MIB_S", description = "Floor of the same budget: the least rate "
            + "however slow the foreground gets (background work always finishes), MiB/s (1..--resync-mib-s, "
            + "default 4, or --resync-mib-s when lower).")
    Integer resyncMinMibS;

    @Option(names = "--resync-retry-ms", paramLabel = "MS", defaultValue = "2000", description = "Pause before a failed or unreachable "
            + "copy's resync is tried again, ms (100..3600000, default ${DEFAULT-VALUE}).")
    long resyncRetryMs;

    @Option(names = "--pollers", paramLabel = "N", defaultValue = "2", description = "Poller threads (1..64, default ${DEFAULT-VALUE}).")
    int pollers;

    @Option(names = "--idle-spin-us", paramLabel = "US", defaultValue = "200", description = "How long a poller keeps polling after its "
            + "last work before it waits on the completion channel or the store (0..1000000 us, default "
            + "${DEFAULT-VALUE}; more trades CPU for latency, docs/bench.md).")
    long idleSpinUs;

    @Option(names = "--max-pending-queues", paramLabel = "N", defaultValue = "1024", description = "Queues accepted at the CM level "
            + "without a validated Fabrics Connect yet, on the node (a few KiB each); a new connect request beyond "
            + "it evicts the oldest pending queue of the peer address holding the most (1..65536, default "
            + "${DEFAULT-VALUE}).")
    int maxPendingQueues;

    @Option(names = "--max-pending-queues-per-address", paramLabel = "N", defaultValue = "256", description = "As --max-pending-queues,"
            + " per peer IP address: beyond it the address's own oldest pending queue is evicted "
            + "(1..--max-pending-queues, default ${DEFAULT-VALUE}).")
    int maxPendingQueuesPerAddress;

    @Option(names = "--pending-connect-timeout-ms", paramLabel = "MS", defaultValue = "10000", description = "A queue with no "
            + "successful Fabrics Connect this long after its connect request is torn down (100..3600000, default "
            + "${DEFAULT-VALUE}).")
    long pendingConnectTimeoutMs;

    @Option(names = "--dhchap-secrets", paramLabel = "FILE", description = "Hosts that must pass NVMe in-band "
            + "authentication (DH-HMAC-CHAP) on every volume: one line per host, 'hostnqn secret [ctrl-secret]', "
            + "secrets in the DHHC-1 form of nvme gen-dhchap-key; '#' starts a comment. Unlisted hosts need none.")
    Path dhchapSecrets;

    @Option(names = "--store", paramLabel = "KIND", defaultValue = "file", description = "Volume store: file (default), or null: "
            + "BENCHMARK ONLY, writes are DISCARDED and reads return zeros (no durability; refused with --mgmt-url).")
    String store;

    /** {@code --resync-min-mib-s}, checked against its bounds (its default: 4 MiB/s, or the ceiling when lower). */
    int resyncFloor() {
        if (resyncMibS < 1 || resyncMibS > 100_000) {
            throw new IllegalArgumentException("invalid --resync-mib-s: value=" + resyncMibS + ", min=1, max=100000");
        }
        if (resyncMinMibS == null) {
            return Math.min(io.rdmablock.node.qos.BackgroundBudget.DEFAULT_FLOOR_MIB_S, resyncMibS);
        }
        if (resyncMinMibS < 1 || resyncMinMibS > resyncMibS) {
            throw new IllegalArgumentException("invalid --resync-min-mib-s: value=" + resyncMinMibS + ", min=1, "
                    + "max=--resync-mib-s=" + resyncMibS);
        }
        return resyncMinMibS;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (dataDir == null) {
            throw new IllegalArgumentException("missing --data-dir");
        }
        NodeConfiguration configuration = NodeConfiguration.fromSystemProperties(); // the -D knobs, checked once
        String bearer = bearer(System::getenv);
        String mgmtUrl = mgmtUrl(System::getenv);
        String provider = providerName(System::getProperty, System::getenv);
        if (caCert != null) {
            io.rdmablock.mgmt.client.TlsTrust.sslContext(caCert); // fail now, naming the file, when it is unusable
            System.setProperty(io.rdmablock.mgmt.client.TlsTrust.PROPERTY, caCert.toString());
        }
        List<URI> mgmtUrls = mgmtUrl == null ? List.of() : io.rdmablock.mgmt.client.MgmtClient.parseUrls("--mgmt-url",
                mgmtUrl);
        if (mgmtUrl != null && (bearer == null || bearer.isEmpty())) {
            throw new IllegalArgumentException("--mgmt-url (or env RDMABLOCK_MGMT_URL) needs --token-file, --token or env RDMABLOCK_TOKEN");
        }
        String id = nodeId != null ? nodeId : NodeIdentity.loadOrCreate(dataDir);
        TargetOptions opts = TargetOptions.defaults().withMaxQueueEntries(maxQueueEntries).withPollers(pollers)
                .withIdleSpinNs(TargetOptions.idleSpinNsOfMicros("--idle-spin-us", idleSpinUs))
                .withPending(new TargetOptions.PendingLimits(maxPendingQueues, maxPendingQueuesPerAddress,
                        pendingConnectTimeoutMs));
        NodeConfig cfg = new NodeConfig(dataDir, parseAddress("--listen", listen), provider, null, bearer, id,
                advertiseHost, metricsListen == null ? null : parseAddress("--metrics-listen", metricsListen),
                heartbeatMs, createVolumes, opts).withCapacityBytes(capacity == null ? 0 : StorageNode.parseSize(capacity))
                .withReplicaTimeoutMs(replicaTimeoutMs).withResync(resyncFloor(), resyncMibS, resyncRetryMs)
                .withMgmt(mgmtUrls, bearer, id);
        StorageNode node = new StorageNode(cfg, configuration);
        switch (store) {
            case "file" -> { }
            case "null" -> node.withStoreOptions(configuration.storeOptions()
                    .withBackend(io.rdmablock.node.store.IoBackend.NULL));
            default -> throw new IllegalArgumentException("invalid --store: value=" + store + ", allowed=file|null");
        }
        if (tcpListen != null) {
            node.withTcpListen(parseAddress("--tcp-listen", tcpListen));
        }
        node.withHostSecrets(dhchapSecrets == null
                ? io.rdmablock.node.target.HostSecrets.NONE : io.rdmablock.node.target.HostSecrets.load(dhchapSecrets))
                .start();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            node.close();
            stopped.countDown();
        }, "rdmablock-node-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        stopped.await();
        return 0;
    }

    /**
     * The verbs provider: {@code --provider}, else {@code -Drdma.provider}, else env {@code RDMABLOCK_RDMA_PROVIDER},
     * else {@code auto} (docs/providers.md "Choosing the RDMA provider"; {@link
     * io.rdmablock.rdma.verbs.ProviderConfiguration#from}).
     *
     * @throws IllegalArgumentException naming the property when the provider's knobs are invalid
     */
    String providerName(java.util.function.Function<String, String> properties,
                        java.util.function.Function<String, String> env) {
        return provider != null ? provider
                : io.rdmablock.rdma.verbs.ProviderConfiguration.from(properties, env).provider();
    }

    /** The management URL list: {@code --mgmt-url}, else env {@code RDMABLOCK_MGMT_URL}; null (standalone) when neither. */
    String mgmtUrl(java.util.function.Function<String, String> env) {
        return mgmtUrl != null ? mgmtUrl : blankToNull(env.apply("RDMABLOCK_MGMT_URL"));
    }

    /**
     * The management bearer token: the file of {@code --token-file} (stripped), else {@code --token}, else env
     * {@code RDMABLOCK_TOKEN} (the cluster token, as the CLI reads it); null when none.
     *
     * @throws IOException when the token file cannot be read
     */
    String bearer(java.util.function.Function<String, String> env) throws IOException {
        if (tokenFile != null) {
            return Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        }
        return token != null ? token : blankToNull(env.apply("RDMABLOCK_TOKEN"));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    /** Parses {@code host:port} ({@code [v6]:port} for IPv6). */
    static InetSocketAddress parseAddress(String option, String value) {
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1) {
            throw new IllegalArgumentException("invalid " + option + ": value=" + value + ", expected host:port");
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + option + ": value=" + value + ", port not a number");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("invalid " + option + ": port=" + port + ", min=0, max=65535");
        }
        return new InetSocketAddress(host, port);
    }
}
