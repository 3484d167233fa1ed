package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.EtcdMetadataStore;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.RocksMetadataStore;
import io.vertx.core.Vertx;

import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A running management server: its own Vert.x instance, the metadata store and the deployed
 * {@link MgmtVerticle}. {@link #close()} undeploys, closes Vert.x, then the store (reverse order of creation).
 */
public final class MgmtServer implements AutoCloseable {
    /** Default largest request body (64 KiB: a create with 64 allowed hosts is about 15 KiB). */
    public static final long DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;
    /** Default node timeout: no heartbeat for this long → node down. */
    public static final long DEFAULT_NODE_TIMEOUT_MS = 6_000;
    /**
     * Bound of the start, s: {@code -Drdmablock.mgmt.startTimeoutSeconds}, default 120 (a taken port fails at once;
     * a start under emulation, e.g. the QEMU TCG guest of ops/rdma-vm on a loaded host, took over 30 s).
     */
    public static final long START_TIMEOUT_S = Long.getLong("rdmablock.mgmt.startTimeoutSeconds", 120);

    private final Vertx vertx;
    private final MetadataStore store;
    private final MgmtVerticle verticle;
    private final String host;
    private final boolean tls;
    private boolean closed;

    private MgmtServer(Vertx vertx, MetadataStore store, MgmtVerticle verticle, String host, boolean tls) {
        this.tls = tls;
        this.vertx = vertx;
        this.store = store;
        this.verticle = verticle;
        this.host = host;
    }

    /**
     * How a server runs: where it listens, its HTTP options (tokens, TLS, timeouts), liveness and lease, sweep
     * interval and rebuild delay.
     *
     * @param host            listen address (e.g. 127.0.0.1)
     * @param port            listen port, 0 = any free port
     * @param http            tokens, TLS, HTTP timeouts
     * @param nodeTimeoutMs   a node without a heartbeat this long is down, ms
     * @param leaseMs         the primary lease, ms (docs/failover.md)
     * @param sweepIntervalMs how often liveness, promotions and rebuilds are looked at, ms
     * @param rebuildAfterMs  a copy whose node has not heartbeated this long is rebuilt elsewhere, ms (docs/resync.md)
     */
    public record Settings(String host, int port, MgmtHttpOptions http, long nodeTimeoutMs, long leaseMs,
                           long sweepIntervalMs, long rebuildAfterMs) {
        public Settings {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(http, "http");
        }

        /** Defaults for everything but the listener and the cluster token. */
        public static Settings of(String host, int port, String token) {
            return new Settings(host, port, MgmtHttpOptions.of(token), DEFAULT_NODE_TIMEOUT_MS,
                    ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS,
                    ClusterService.DEFAULT_REBUILD_AFTER_MS);
        }

        public Settings withHttp(MgmtHttpOptions v) {
            return new Settings(host, port, v, nodeTimeoutMs, leaseMs, sweepIntervalMs, rebuildAfterMs);
        }

        public Settings withNodeTimeoutMs(long v) {
            return new Settings(host, port, http, v, leaseMs, sweepIntervalMs, rebuildAfterMs);
        }

        public Settings withLeaseMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, v, sweepIntervalMs, rebuildAfterMs);
        }

        public Settings withSweepIntervalMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, v, rebuildAfterMs);
        }

        public Settings withRebuildAfterMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, sweepIntervalMs, v);
        }
    }

    /**
     * The store a server runs on: etcd when {@code etcd} is given (several management servers may share it; until
     * leader election is wired into the cluster service only one of them may take writes), else the embedded RocksDB
     * store under {@code dataDir/metadata} (the single-server default, needing nothing else).
     *
     * @param etcd null for RocksDB
     * @throws io.rdmablock.mgmt.api.store.MetadataStoreException when the store cannot be opened (RocksDB: the
     *         directory is locked or unreadable; etcd: {@link io.rdmablock.mgmt.api.store.MetadataStoreUnavailableException}
     *         when it does not answer within its call timeout)
     */
    public static MetadataStore openStore(Path dataDir, EtcdMetadataStore.Config etcd) {
        return etcd != null ? new EtcdMetadataStore(etcd) : new RocksMetadataStore(dataDir.resolve("metadata"));
    }

    /**
     * Opens the store {@link #openStore} picks (etcd when {@code etcd} is not null, else RocksDB under
     * {@code dataDir/metadata}) and starts the server on it.
     *
     * @throws IllegalStateException when the server does not start within {@link #START_TIMEOUT_S}, the port is
     *                               taken or the TLS files cannot be read
     */
    public static MgmtServer start(Path dataDir, EtcdMetadataStore.Config etcd, Settings settings) {
        MetadataStore store = openStore(dataDir, etcd);
        try {
            return start(store, settings);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /** RocksDB under {@code dataDir/metadata}, the cluster token {@code token}, defaults otherwise. */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs) {
        return start(dataDir, null, Settings.of(host, port, token).withNodeTimeoutMs(nodeTimeoutMs));
    }

    /** As {@link #start(Path, String, int, String, long)} with the primary lease {@code leaseMs}. */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs) {
        return start(dataDir, null, Settings.of(host, port, token).withNodeTimeoutMs(nodeTimeoutMs)
                .withLeaseMs(leaseMs));
    }

    /** As {@link #start(Path, String, int, String, long, long)} with the store etcd or RocksDB and a sweep interval. */
    public static MgmtServer start(Path dataDir, EtcdMetadataStore.Config etcd, String host, int port, String token,
                                   long nodeTimeoutMs, long leaseMs, long sweepIntervalMs) {
        return start(dataDir, etcd, Settings.of(host, port, token).withNodeTimeoutMs(nodeTimeoutMs)
                .withLeaseMs(leaseMs).withSweepIntervalMs(sweepIntervalMs));
    }

    /** Starts a server over a given store (closed by {@link #close()}) with the HTTP options {@code http}. */
    public static MgmtServer start(MetadataStore store, String host, int port, MgmtHttpOptions http,
                                   long nodeTimeoutMs, long leaseMs, long sweepIntervalMs) {
        return start(store, Settings.of(host, port, "unused").withHttp(http).withNodeTimeoutMs(nodeTimeoutMs)
                .withLeaseMs(leaseMs).withSweepIntervalMs(sweepIntervalMs));
    }

    /**
     * Starts a server over a given store (closed by {@link #close()}). Liveness and the lease run on
     * {@link System#nanoTime()}; the wall clock only stamps displayed times.
     *
     * @throws IllegalStateException when the server does not start within {@link #START_TIMEOUT_S}, the port is
     *                               taken or the TLS files cannot be read
     */
    public static MgmtServer start(MetadataStore store, Settings settings) {
        Objects.requireNonNull(store, "store");
        String host = settings.host();
        int port = settings.port();
        MgmtHttpOptions http = settings.http();
        var cluster = new ClusterService(store, System::currentTimeMillis, System::nanoTime, settings.nodeTimeoutMs(),
                settings.leaseMs(), settings.rebuildAfterMs());
        var verticle = new MgmtVerticle(cluster, http, host, port, DEFAULT_BODY_LIMIT_BYTES,
                settings.sweepIntervalMs());
        Vertx vertx = Vertx.vertx();
        try {
            vertx.deployVerticle(verticle).toCompletionStage().toCompletableFuture().get(START_TIMEOUT_S,
                    TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            vertx.close();
            throw new IllegalStateException("interrupted while starting the management server", e);
        } catch (ExecutionException | TimeoutException e) {
            vertx.close();
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException("management server did not start on " + host + ":" + port + ": "
                    + cause, cause);
        }
        return new MgmtServer(vertx, store, verticle, host, http.tls());
    }

    /** @return the bound port */
    public int port() {
        return verticle.actualPort();
    }

    /** @return {@code http://host:port}, {@code https://} with TLS (0.0.0.0 shown as 127.0.0.1) */
    public String url() {
        String shown = "0.0.0.0".equals(host) || "::".equals(host) ? "127.0.0.1" : host;
        if (shown.contains(":")) {
            shown = "[" + shown + "]";
        }
        return (tls ? "https://" : "http://") + shown + ":" + port();
    }

    /** Stops the server and closes the store; waits up to 10 s for Vert.x. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // keep going: the store must still be closed
        } finally {
            store.close();
        }
    }

}
