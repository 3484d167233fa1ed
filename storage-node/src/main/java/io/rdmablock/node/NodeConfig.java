package io.rdmablock.node;

import io.rdmablock.node.target.TargetOptions;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;

/**
 * Configuration of a {@link StorageNode}.
 *
 * @param dataDir        volume store directory (created if missing)
 * @param listen         fabric listen address; port 0 picks a free port
 * @param provider       verbs provider: auto | soft | ffm | memory (memory: initiators in the same JVM only)
 * @param mgmtUrls       management server base URLs (several: a highly available management plane, docs/ha.md;
 *                       the heartbeats fail over among them), or empty to serve the volumes already in the store
 * @param token          bearer token for the management server (null without mgmtUrls)
 * @param nodeId         node id registered with the management server
 * @param advertiseHost  host name/address put in the registration's fabric address (null: the listen host, or the
 *                       local host name when listening on the wildcard address)
 * @param metricsListen  metrics HTTP address, or null for no endpoint
 * @param heartbeatMs    heartbeat interval, 10..600000 ms
 * @param createVolumes  volumes to create at start when missing, {@code name:size[:lbaSize[:hosts]]} (size with
 *                       K/M/G/T; hosts {@code *} or NQNs separated by commas; without, no host is admitted)
 * @param target         target options
 * @param capacityBytes  capacity registered with the management server; 0 = the store's file system size
 * @param replicaTimeoutMs a primary drops a secondary that has not answered a forwarded command within this, ms
 *                       (100..60000, default {@value #DEFAULT_REPLICA_TIMEOUT_MS}; docs/replication.md)
 * @param resyncMibS     ceiling of the node's background budget (resyncs, rebuilds and verifies together), the rate
 *                       while its foreground I/O is idle or fast, MiB/s (1..100000, default
 *                       {@value io.rdmablock.node.qos.BackgroundBudget#DEFAULT_CEILING_MIB_S}; docs/qos.md
 *                       "Background budget")
 * @param resyncMinMibS  floor of the same budget, the least rate however slow the foreground gets, MiB/s
 *                       (1..resyncMibS, default {@value io.rdmablock.node.qos.BackgroundBudget#DEFAULT_FLOOR_MIB_S})
 * @param resyncRetryMs  pause before a resync that failed or found its copy unreachable is tried again, ms
 *                       (100..3600000, default {@value #DEFAULT_RESYNC_RETRY_MS})
 */
public record NodeConfig(Path dataDir, InetSocketAddress listen, String provider, List<URI> mgmtUrls,
                         String token, String nodeId, String advertiseHost, InetSocketAddress metricsListen, long heartbeatMs,
                         List<String> createVolumes, TargetOptions target, long capacityBytes,
                         long replicaTimeoutMs, int resyncMibS, int resyncMinMibS, long resyncRetryMs) {
    /** Default {@code --resync-retry-ms}. */
    public static final long DEFAULT_RESYNC_RETRY_MS = 2000;

    public NodeConfig(Path dataDir, InetSocketAddress listen, String provider, URI mgmtUrl, String token,
                      String nodeId, String advertiseHost, InetSocketAddress metricsListen, long heartbeatMs,
                      List<String> createVolumes, TargetOptions target, long capacityBytes, long replicaTimeoutMs) {
        this(dataDir, listen, provider, mgmtUrl == null ? List.of() : List.of(mgmtUrl), token, nodeId, advertiseHost,
                metricsListen, heartbeatMs,
                createVolumes, target, capacityBytes, replicaTimeoutMs, io.rdmablock.node.qos.BackgroundBudget.DEFAULT_CEILING_MIB_S,
                io.rdmablock.node.qos.BackgroundBudget.DEFAULT_FLOOR_MIB_S, DEFAULT_RESYNC_RETRY_MS);
    }

    /** Default replica timeout, ms. */
    public static final long DEFAULT_REPLICA_TIMEOUT_MS = 3000;
    /** Default heartbeat interval, ms ({@code rdmablock node --heartbeat-ms}; docs/failover.md "Timing defaults"). */
    public static final long DEFAULT_HEARTBEAT_MS = 500;

    public NodeConfig(Path dataDir, InetSocketAddress listen, String provider, URI mgmtUrl, String token,
                      String nodeId, String advertiseHost, InetSocketAddress metricsListen, long heartbeatMs,
                      List<String> createVolumes, TargetOptions target, long capacityBytes) {
        this(dataDir, listen, provider, mgmtUrl, token, nodeId, advertiseHost, metricsListen, heartbeatMs,
                createVolumes, target, capacityBytes, DEFAULT_REPLICA_TIMEOUT_MS);
    }

    public NodeConfig(Path dataDir, InetSocketAddress listen, String provider, URI mgmtUrl, String token,
                      String nodeId, String advertiseHost, InetSocketAddress metricsListen, long heartbeatMs,
                      List<String> createVolumes, TargetOptions target) {
        this(dataDir, listen, provider, mgmtUrl, token, nodeId, advertiseHost, metricsListen, heartbeatMs,
                createVolumes, target, 0);
    }

    public NodeConfig {
        if (dataDir == null || listen == null) {
            throw new IllegalArgumentException("invalid node config: dataDir=" + dataDir + ", listen=" + listen);
        }
        provider = provider == null ? "auto" : provider;
        mgmtUrls = mgmtUrls == null ? List.of() : List.copyOf(mgmtUrls);
        createVolumes = createVolumes == null ? List.of() : List.copyOf(createVolumes);
        target = target == null ? TargetOptions.defaults() : target;
        if (capacityBytes < 0) {
            throw new IllegalArgumentException("invalid capacityBytes: capacityBytes=" + capacityBytes + ", min=0");
        }
        if (replicaTimeoutMs < 100 || replicaTimeoutMs > 60_000) {
            throw new IllegalArgumentException("invalid replicaTimeoutMs: replicaTimeoutMs=" + replicaTimeoutMs
                    + ", min=100, max=60000");
        }
        if (resyncMibS < 1 || resyncMibS > 100_000) {
            throw new IllegalArgumentException("invalid resyncMibS: resyncMibS=" + resyncMibS + ", min=1, max=100000");
        }
        if (resyncMinMibS < 1 || resyncMinMibS > resyncMibS) {
            throw new IllegalArgumentException("invalid resyncMinMibS: resyncMinMibS=" + resyncMinMibS
                    + ", min=1, max=resyncMibS=" + resyncMibS);
        }
        if (resyncRetryMs < 100 || resyncRetryMs > 3_600_000) {
            throw new IllegalArgumentException("invalid resyncRetryMs: resyncRetryMs=" + resyncRetryMs
                    + ", min=100, max=3600000");
        }
        if (heartbeatMs < 10 || heartbeatMs > 600_000) {
            throw new IllegalArgumentException("invalid heartbeatMs: heartbeatMs=" + heartbeatMs
                    + ", min=10, max=600000");
        }
    }

    /** @return the first management URL, or null without a management server */
    public URI mgmtUrl() {
        return mgmtUrls.isEmpty() ? null : mgmtUrls.getFirst();
    }

    /** A config for tests: loopback, port 0, soft provider, no management server, no metrics endpoint. */
    public static NodeConfig local(Path dataDir) {
        return new NodeConfig(dataDir, new InetSocketAddress("127.0.0.1", 0), "soft", null, null, "node-1", null,
                null, DEFAULT_HEARTBEAT_MS, List.of(), TargetOptions.defaults());
    }

    public NodeConfig withCreateVolumes(List<String> specs) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, specs, target, capacityBytes, replicaTimeoutMs, resyncMibS, resyncMinMibS, resyncRetryMs);
    }

    public NodeConfig withTarget(TargetOptions options) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, options, capacityBytes, replicaTimeoutMs, resyncMibS, resyncMinMibS, resyncRetryMs);
    }

    public NodeConfig withMetricsListen(InetSocketAddress address) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, address,
                heartbeatMs, createVolumes, target, capacityBytes, replicaTimeoutMs, resyncMibS, resyncMinMibS, resyncRetryMs);
    }

    public NodeConfig withCapacityBytes(long bytes) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, target, bytes, replicaTimeoutMs, resyncMibS, resyncMinMibS, resyncRetryMs);
    }

    public NodeConfig withReplicaTimeoutMs(long ms) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, target, capacityBytes, ms, resyncMibS, resyncMinMibS, resyncRetryMs);
    }

    /** The ceiling and retry pause; the floor is kept, lowered to the ceiling when above it. */
    public NodeConfig withResync(int mibPerSecond, long retryMs) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, target, capacityBytes, replicaTimeoutMs, mibPerSecond,
                Math.min(resyncMinMibS, mibPerSecond), retryMs);
    }

    /**
     * @param minMibPerSecond the resync floor while the foreground is busy, MiB/s (1..{@code maxMibPerSecond})
     * @param maxMibPerSecond the resync ceiling while the foreground is idle, MiB/s (1..100000)
     */
    public NodeConfig withResync(int minMibPerSecond, int maxMibPerSecond, long retryMs) {
        return new NodeConfig(dataDir, listen, provider, mgmtUrls, token, nodeId, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, target, capacityBytes, replicaTimeoutMs, maxMibPerSecond, minMibPerSecond,
                retryMs);
    }

    public NodeConfig withMgmt(URI url, String bearerToken, String id) {
        return withMgmt(url == null ? List.of() : List.of(url), bearerToken, id);
    }

    /** @return this config with these management URLs (several: docs/ha.md), token and node id */
    public NodeConfig withMgmt(List<URI> urls, String bearerToken, String id) {
        return new NodeConfig(dataDir, listen, provider, urls, bearerToken, id, advertiseHost, metricsListen,
                heartbeatMs, createVolumes, target, capacityBytes, replicaTimeoutMs, resyncMibS, resyncMinMibS, resyncRetryMs);
    }
}
