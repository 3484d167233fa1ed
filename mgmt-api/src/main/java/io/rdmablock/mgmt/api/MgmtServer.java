package io.rdmablock.mgmt.api;

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
    private boolean closed;

    private MgmtServer(Vertx vertx, MetadataStore store, MgmtVerticle verticle, String host) {
        this.vertx = vertx;
        this.store = store;
        this.verticle = verticle;
        this.host = host;
    }

    /**
     * Opens the RocksDB store under {@code dataDir/metadata} and starts the server.
     *
     * @throws IllegalStateException when the server does not start within {@link #START_TIMEOUT_S} or the port is taken
     */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs) {
        return start(dataDir, host, port, token, nodeTimeoutMs, ClusterService.DEFAULT_LEASE_MS);
    }

    /** As {@link #start(Path, String, int, String, long)} with the primary lease {@code leaseMs}. */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs) {
        return start(dataDir, host, port, token, nodeTimeoutMs, leaseMs, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS);
    }

    /**
     * As {@link #start(Path, String, int, String, long)} with the primary lease {@code leaseMs} and the liveness
     * sweep's interval {@code sweepIntervalMs} (docs/failover.md).
     */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs, long sweepIntervalMs) {
        return start(dataDir, host, port, token, nodeTimeoutMs, leaseMs, sweepIntervalMs,
                ClusterService.DEFAULT_REBUILD_AFTER_MS);
    }

    /** Starts a server over a given store (closed by {@link #close()}). */
    public static MgmtServer start(MetadataStore store, String host, int port, String token, long nodeTimeoutMs) {
        return start(store, host, port, token, nodeTimeoutMs, ClusterService.DEFAULT_LEASE_MS,
                MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS);
    }

    /** Starts a server over a given store (closed by {@link #close()}) with a lease and sweep interval. */
    public static MgmtServer start(MetadataStore store, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs, long sweepIntervalMs) {
        return start(store, host, port, token, nodeTimeoutMs, leaseMs, sweepIntervalMs,
                ClusterService.DEFAULT_REBUILD_AFTER_MS);
    }

    /**
     * As {@link #start(Path, String, int, String, long, long, long)} with the rebuild delay {@code rebuildAfterMs}: a
     * copy whose node has not heartbeated for longer is rebuilt on another node (docs/resync.md), &gt; 0.
     */
    public static MgmtServer start(Path dataDir, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs, long sweepIntervalMs, long rebuildAfterMs) {
        MetadataStore store = new RocksMetadataStore(dataDir.resolve("metadata"));
        try {
            return start(store, host, port, token, nodeTimeoutMs, leaseMs, sweepIntervalMs, rebuildAfterMs);
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    /**
     * Starts a server over a given store (closed by {@link #close()}) with a lease, sweep interval and rebuild delay.
     * Liveness and the lease run on {@link System#nanoTime()}; the wall clock only stamps displayed times.
     */
    public static MgmtServer start(MetadataStore store, String host, int port, String token, long nodeTimeoutMs,
                                   long leaseMs, long sweepIntervalMs, long rebuildAfterMs) {
        Objects.requireNonNull(store, "store");
        var cluster = new ClusterService(store, System::currentTimeMillis, System::nanoTime, nodeTimeoutMs, leaseMs,
                rebuildAfterMs);
        var verticle = new MgmtVerticle(cluster, token, host, port, DEFAULT_BODY_LIMIT_BYTES,
                MgmtVerticle.DEFAULT_REQUEST_TIMEOUT_MS, sweepIntervalMs);
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
        return new MgmtServer(vertx, store, verticle, host);
    }

    /** @return the bound port */
    public int port() {
        return verticle.actualPort();
    }

    /** @return {@code http://host:port} (0.0.0.0 shown as 127.0.0.1) */
    public String url() {
        String shown = "0.0.0.0".equals(host) || "::".equals(host) ? "127.0.0.1" : host;
        if (shown.contains(":")) {
            shown = "[" + shown + "]";
        }
        return "http://" + shown + ":" + port();
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
