package io.rdmablock.node;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.NodeAgent;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.metrics.CapacitySource;
import io.rdmablock.node.store.BlockQueue;
import io.rdmablock.node.store.VolumeEvent;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeInfo;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.node.target.Target;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A storage node in one object: volume store, fabric target, {@code /metrics} endpoint and (with a management URL)
 * the heartbeat agent that makes the node match its desired state. Usable in-process from tests
 * ({@code new StorageNode(NodeConfig.local(dir)).start()}, then {@link #fabricAddress()}).
 *
 * <p>Start order: metrics, provider, store, target (every stored volume exported under {@link
 * io.rdmablock.node.target.Subsystem#nqnFor} of its name with its stored allow-list, before the listener accepts),
 * agent. {@link #close()} reverses it: agent,
 * target (queues drained and torn down), a FLUSH of every volume, metrics endpoint, store, provider. Idempotent.
 */
public final class StorageNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageNode.class);

    private final NodeConfig config;
    /** The {@code -D} knobs, read and checked once (before anything starts). */
    private final NodeConfiguration configuration;
    private final NodeMetrics metrics = new NodeMetrics();
    private VerbsProvider provider;
    private VolumeStore store;
    private Target target;
    private HTTPServer metricsServer;
    private NodeAgent agent;
    private MgmtSync sync;
    private Replication replication;
    /** The node's background budget (made at start, its ticker stopped at close). */
    private io.rdmablock.node.qos.BackgroundBudget background;
    private boolean closed;

    /**
     * A node with the knobs of this JVM's system properties ({@link NodeConfiguration#fromSystemProperties()}).
     *
     * @throws IllegalArgumentException naming the property when one is invalid
     */
    public StorageNode(NodeConfig config) {
        this(config, NodeConfiguration.fromSystemProperties());
    }

    /** A node with these options and {@code -D} knobs ({@link NodeConfiguration}). */
    public StorageNode(NodeConfig config, NodeConfiguration configuration) {
        this.config = config;
        this.configuration = java.util.Objects.requireNonNull(configuration, "configuration");
    }

    /** The node's {@code -D} knobs. */
    public NodeConfiguration configuration() {
        return configuration;
    }

    /**
     * Starts everything; on failure, what was started is closed again and the exception is rethrown.
     *
     * @throws IllegalArgumentException for a bad {@code --create-volume} spec
     */
    /**
     * The hosts that must pass in-band authentication (DH-HMAC-CHAP) and their secrets
     * ({@code rdmablock node --dhchap-secrets FILE}); call before {@link #start}. Default: none.
     */
    public synchronized StorageNode withHostSecrets(io.rdmablock.node.target.HostSecrets secrets) {
        this.hostSecrets = java.util.Objects.requireNonNull(secrets, "secrets");
        return this;
    }

    private io.rdmablock.node.target.HostSecrets hostSecrets = io.rdmablock.node.target.HostSecrets.NONE;
    /** Where NVMe/TCP is served besides RDMA ({@code --tcp-listen}), or null; its listener once started. */
    private java.net.InetSocketAddress tcpListen;
    private io.rdmablock.node.target.TcpListener tcpListener;

    /**
     * Serves NVMe/TCP on {@code listen} too ({@code rdmablock node --tcp-listen HOST:PORT}, docs/linux-hosts.md
     * "Attach over NVMe/TCP"); call before {@link #start}. Default: RDMA only.
     */
    public synchronized StorageNode withTcpListen(java.net.InetSocketAddress listen) {
        this.tcpListen = listen;
        return this;
    }
    private io.rdmablock.node.store.StoreOptions storeOptions;

    /**
     * Opens the store with these options instead of {@link NodeConfiguration#storeOptions()}, and without its
     * {@link NodeConfiguration#STORE_FAULTS} rule ({@code rdmablock node --store null}:
     * {@link io.rdmablock.node.store.IoBackend#NULL}); call before {@link #start}. The NULL backend discards every
     * write (benchmark only): {@link #start} logs a WARN saying so and refuses it on a node with a management server,
     * where volumes may be replicated (IllegalArgumentException).
     */
    public synchronized StorageNode withStoreOptions(io.rdmablock.node.store.StoreOptions options) {
        this.storeOptions = java.util.Objects.requireNonNull(options, "options");
        return this;
    }

    public synchronized StorageNode start() {
        try {
            if (config.metricsListen() != null) {
                metricsServer = metrics.serve(config.metricsListen());
                LOG.info("metrics endpoint: http://{}:{}/metrics", config.metricsListen().getHostString(),
                        metricsServer.getPort());
            }
            provider = Providers.select(config.provider());
            if (storeOptions != null && storeOptions.backend() == io.rdmablock.node.store.IoBackend.NULL) {
                if (!config.mgmtUrls().isEmpty()) {
                    throw new IllegalArgumentException("invalid --store null with --mgmt-url: the null store discards "
                            + "writes and must not hold (replicated) volumes of a cluster; it is for stack-only "
                            + "benchmarks on a node without a management server");
                }
                LOG.warn("STORE IS NULL: every write is DISCARDED and every read returns zeros; no durability, "
                        + "benchmark only (--store null)");
            }
            store = VolumeStore.open(config.dataDir(), storeOptions == null ? configuration.storeOptions()
                    : storeOptions);
            io.rdmablock.node.store.StoreFaults faults = storeOptions == null ? configuration.storeFaultsRule() : null;
            if (faults != null) {
                store.setFaults(faults);
            }
            metrics.capacity(new StoreCapacity());
            // one budget per node, shared by its resyncs, rebuilds and verifies (docs/qos.md "Background budget")
            background = new io.rdmablock.node.qos.BackgroundBudget(
                    config.resyncMinMibS() * (1L << 20), config.resyncMibS() * (1L << 20),
                    configuration.backgroundLatencySlackPct(), metrics.foregroundLatency(), System::nanoTime)
                    .startTicker();
            metrics.background(background);
            store.addListener(e -> {
                if (e.kind() == VolumeEvent.Kind.DELETED) {
                    metrics.removeVolume(e.info().name());
                }
            });
            for (String spec : config.createVolumes()) {
                createIfMissing(spec);
            }
            target = new Target(provider, store, config.target(), metrics, configuration.target(),
                    io.rdmablock.node.io.LocalVolumeIo::open);
            target.hostSecrets(hostSecrets);
            Target t = target;
            metrics.qos(() -> t.subsystems().stream().map(s -> new io.rdmablock.node.metrics.QosSource.Sample(
                    s.volume().name(), s.qos().heldCommands(), s.qos().delayedSeconds())).toList());
            // Export what the store holds before the listener accepts, so a restarted node serves its volumes
            // at once; with a management server, MgmtSync then reconciles (delete, grow, allow-list, subnqn).
            for (VolumeInfo info : store.list()) {
                if (config.mgmtUrl() != null && store.epoch(info.id()) > 0) {
                    // a copy of a replicated volume: its role (primary, or secondary admitting only its primary)
                    // comes with the first heartbeat answer; exported plain, hosts could write to a secondary
                    continue;
                }
                target.addVolume(store.get(info.id()), null);
                if (config.mgmtUrl() == null && info.allowedHosts().isEmpty()) {
                    LOG.warn("volume {} admits no host (empty allow-list; before 2026-12 that meant any host): give "
                            + "its hosts with --create-volume {}:SIZE:LBA:NQN[,NQN...] or any host with ...:*",
                            info.id(), info.id());
                }
                if (info.allowedHosts().contains(VolumeSpec.ANY_HOST)) {
                    LOG.warn("volume {} admits any host (*): anyone reaching the fabric port can read and write it",
                            info.id());
                }
            }
            target.start(config.listen());
            if (tcpListen != null) {
                tcpListener = io.rdmablock.node.target.TcpListener.start(target, tcpListen);
            }
            if (config.mgmtUrl() != null) {
                // several URLs: each call (heartbeats included) fails over to the next and follows a follower's 307
                MgmtClient client = new MgmtClient(config.mgmtUrls(), config.token(), java.time.Duration.ofSeconds(10),
                        io.rdmablock.mgmt.client.TlsTrust.fromOptionOrEnv(null)); // --ca-cert / RDMABLOCK_CA_CERT
                replication = new Replication(config.nodeId(), provider, client,
                        config.dataDir().resolve("replica"), config.replicaTimeoutMs() * 1_000_000L,
                        background,
                        config.resyncRetryMs(), metrics.resyncBytes(), configuration.replicaOpenTimeoutNs());
                sync = new MgmtSync(store, target, this::freeBytes, replication);
                agent = new NodeAgent(client, this::registration, sync, config.heartbeatMs(),
                        new NodeCredentialFile(config.dataDir())).start(); // the cluster token bootstraps it
            }
            LOG.info("storage node started: nodeId={}, fabric={}, dataDir={}, volumes={}, mgmt={}", config.nodeId(),
                    fabricAddress(), config.dataDir(), store.list().size(),
                    config.mgmtUrl() == null ? "none" : config.mgmtUrls());
            return this;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The fabric address hosts connect to. */
    public InetSocketAddress fabricAddress() {
        return target.localAddress();
    }

    /** The bound NVMe/TCP address ({@link #withTcpListen}; the real port when 0 was asked for), or null. */
    public InetSocketAddress tcpAddress() {
        return tcpListener == null ? null : tcpListener.localAddress();
    }

    /** The metrics port, or -1 without an endpoint. */
    public int metricsPort() {
        return metricsServer == null ? -1 : metricsServer.getPort();
    }

    public VolumeStore store() {
        return store;
    }

    public Target target() {
        return target;
    }

    public NodeMetrics metrics() {
        return metrics;
    }

    /** The management agent, or null without a management URL. */
    public NodeAgent agent() {
        return agent;
    }

    /** Creates a volume in the store and exports it (tests, quickstart). */
    public StoreVolume createVolume(String name, long sizeBytes, int lbaSizeBytes, Set<String> allowedHosts) {
        StoreVolume v = store.create(new VolumeSpec(name, name, sizeBytes, lbaSizeBytes, allowedHosts));
        target.addVolume(v, null);
        return v;
    }

    private RegisterNodeRequest registration() {
        InetSocketAddress a = target.localAddress();
        String host = config.advertiseHost();
        if (host == null) {
            host = a.getAddress() != null && a.getAddress().isAnyLocalAddress() ? localHostName() : a.getHostString();
        }
        String metricsUrl = metricsServer == null ? "" : "http://" + host + ":" + metricsServer.getPort() + "/metrics";
        return new RegisterNodeRequest(config.nodeId(), host + ":" + a.getPort(), metricsUrl, capacityBytes(),
                freeBytes());
    }

    /** Capacity offered for volumes: {@code --capacity}, or the store's file system size. */
    public long capacityBytes() {
        return config.capacityBytes() > 0 ? config.capacityBytes() : store.capacityBytes();
    }

    /**
     * Bytes a new volume may still be promised: capacity minus the sizes of the volumes held, and at most the file
     * system's free space minus the space the volumes may still take (their size minus the blocks their files hold,
     * {@link VolumeStore#unallocatedBytes()}:
     * volume files are sparse, so the file system's free space alone would let volumes be promised more than it can
     * ever hold, and their writers would later fail with "capacity exceeded").
     */
    public long freeBytes() {
        long promised = 0;
        for (VolumeInfo v : store.list()) {
            promised += v.sizeBytes();
        }
        return Math.max(0, Math.min(capacityBytes() - promised, store.freeBytes() - store.unallocatedBytes()));
    }

    /** The capacity gauges' view of this node (read at scrape time). */
    private final class StoreCapacity implements CapacitySource {
        @Override
        public long capacityBytes() {
            return StorageNode.this.capacityBytes();
        }

        @Override
        public long freeBytes() {
            return StorageNode.this.freeBytes();
        }

        @Override
        public List<VolumeUsage> volumes() {
            var out = new java.util.ArrayList<VolumeUsage>();
            for (VolumeInfo info : store.list()) {
                store.find(info.id()).ifPresent(v -> {
                    var snaps = store.snapshots().list(v.id());
                    out.add(new VolumeUsage(v.name(), v.sizeBytes(), v.allocatedBytes(), snaps.size(),
                            snaps.stream().mapToLong(io.rdmablock.node.store.SnapshotInfo::exclusiveBytes).sum()));
                });
            }
            return out;
        }

        @Override
        public long lastSnapshotBarrierNs() {
            return store.snapshots().lastBarrierNs();
        }
    }

    private static String localHostName() {
        return NodeIdentity.localHostName();
    }

    /**
     * {@code --create-volume name:size[:lbaSize[:hosts]]}: creates the volume when missing; {@code hosts} is
     * {@code *} (any host) or host NQNs separated by commas (NQNs are everything after the third colon, so they may
     * hold colons, not commas), and is applied to an existing volume too. Without it a new volume admits no host.
     */
    private void createIfMissing(String spec) {
        String[] parts = spec.split(":", 4);
        if (parts.length < 2) {
            throw new IllegalArgumentException("invalid --create-volume: value=" + spec
                    + ", expected name:size[:lbaSize[:hosts]]");
        }
        String name = parts[0];
        long size = parseSize(parts[1]);
        int lba = parts.length >= 3 ? Integer.parseInt(parts[2]) : 4096;
        Set<String> hosts = parts.length == 4 ? Set.of(parts[3].split(",")) : null;
        if (store.isUnavailable(name)) {
            LOG.error("volume not created: id={}: the store holds it but its data or metadata was lost; "
                    + "restore the data directory, or delete the volume", name);
            return;
        }
        if (store.find(name).isPresent()) {
            LOG.info("volume exists: id={}, sizeBytes={}", name, store.get(name).sizeBytes());
            if (hosts != null && !store.get(name).allowedHosts().equals(hosts)) {
                store.setAllowedHosts(name, hosts);
                LOG.info("volume allowed hosts set: id={}, allowedHosts={}", name, hosts);
            }
            return;
        }
        store.create(new VolumeSpec(name, name, size, lba, hosts == null ? Set.of() : hosts));
    }

    /** Parses {@code 123}, {@code 64K}, {@code 512M}, {@code 1G}, {@code 2T} (binary units, optional "iB"). */
    static long parseSize(String s) {
        String v = s.trim().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        long mul = 1;
        char last = v.isEmpty() ? '0' : v.charAt(v.length() - 1);
        switch (last) {
            case 'K' -> mul = 1L << 10;
            case 'M' -> mul = 1L << 20;
            case 'G' -> mul = 1L << 30;
            case 'T' -> mul = 1L << 40;
            default -> {
            }
        }
        String num = mul == 1 ? v : v.substring(0, v.length() - 1);
        try {
            return Math.multiplyExact(Long.parseLong(num), mul);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("invalid size: value=" + s + ", expected bytes or K/M/G/T suffix");
        }
    }

    /** Flushes every volume (FLUSH = fdatasync) through a short-lived store queue. */
    private void flushAll() {
        List<VolumeInfo> vols = store.list();
        if (vols.isEmpty()) {
            return;
        }
        try (BlockQueue q = store.newQueue(Math.min(4096, vols.size()))) {
            for (VolumeInfo v : vols) {
                q.submitFlush(store.get(v.id()), 0);
            }
            long[] ud = new long[vols.size()];
            int[] res = new int[vols.size()];
            int done = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (done < vols.size() && System.nanoTime() < deadline) {
                q.awaitCompletion(100_000_000L);
                int n = q.reap(ud, res, ud.length);
                for (int i = 0; i < n; i++) {
                    if (res[i] < 0) {
                        LOG.warn("flush at shutdown failed: errno={}", -res[i]);
                    }
                }
                done += n;
            }
            LOG.info("volumes flushed: count={}, completed={}", vols.size(), done);
        } catch (RuntimeException e) {
            LOG.warn("flush at shutdown failed: {}", e.toString());
        }
    }

    /** Stops in reverse order of start. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOG.info("storage node stopping: nodeId={}", config.nodeId());
        if (agent != null) {
            agent.close();
        }
        if (tcpListener != null) {
            tcpListener.close(); // no new NVMe/TCP queue; the target tears down those it has
        }
        if (target != null) {
            target.close();
        }
        if (replication != null) {
            replication.close(); // after the target: no queue forwards any more
        }
        if (background != null) {
            background.close();
        }
        if (store != null) {
            flushAll();
        }
        if (metricsServer != null) {
            metricsServer.close();
        }
        if (store != null) {
            store.close();
        }
        if (provider != null) {
            provider.close();
        }
        LOG.info("storage node stopped: nodeId={}", config.nodeId());
    }
}
