package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.http.MgmtHttpOptions;
import io.rdmablock.mgmt.api.http.MgmtVerticle;
import io.rdmablock.mgmt.api.ha.LeaderOnlyStore;
import io.rdmablock.mgmt.api.ha.LeaderView;
import io.rdmablock.mgmt.api.ha.Leadership;
import io.rdmablock.mgmt.api.store.EtcdMetadataStore;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.RocksMetadataStore;
import io.rdmablock.mgmt.api.store.SecretCipher;
import io.vertx.core.Vertx;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
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
    /** Bound of the start, s ({@link MgmtConfiguration#START_TIMEOUT_SECONDS}). */
    public static final long START_TIMEOUT_S = MgmtConfiguration.current().startTimeoutSeconds();

    private final Vertx vertx;
    private final MetadataStore store;
    private final MgmtVerticle verticle;
    private final String host;
    private final boolean tls;
    /** The election (etcd store only), else null. */
    private final Leadership leadership;
    private boolean closed;

    private MgmtServer(Vertx vertx, MetadataStore store, MgmtVerticle verticle, String host, boolean tls,
                       Leadership leadership) {
        this.tls = tls;
        this.leadership = leadership;
        this.vertx = vertx;
        this.store = store;
        this.verticle = verticle;
        this.host = host;
    }

    /**
     * How a server runs: where it listens, its HTTP options (tokens, TLS, timeouts), liveness and lease, sweep
     * interval and rebuild delay, and (several servers on etcd) its advertised URL and the leader lease.
     *
     * @param host            listen address (e.g. 127.0.0.1)
     * @param port            listen port, 0 = any free port
     * @param http            tokens, TLS, HTTP timeouts
     * @param nodeTimeoutMs   a node without a heartbeat this long is down, ms
     * @param leaseMs         the primary lease, ms (docs/failover.md)
     * @param sweepIntervalMs how often liveness, promotions and rebuilds are looked at, ms
     * @param rebuildAfterMs  a copy whose node has not heartbeated this long is rebuilt elsewhere, ms (docs/resync.md)
     * @param advertiseUrl    this server's base URL as clients reach it (the target of the followers' 307s), e.g.
     *                        {@code http://10.0.0.5:8080}; null: {@link #url()} of the listener
     * @param leaderTtl       TTL of the management leader's etcd lease ({@link Leadership.Config#ttl()}: whole
     *                        seconds, 2..60); only with an etcd store
     */
    public record Settings(String host, int port, MgmtHttpOptions http, long nodeTimeoutMs, long leaseMs,
                           long sweepIntervalMs, long rebuildAfterMs, String advertiseUrl, Duration leaderTtl) {
        public Settings {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(http, "http");
            Objects.requireNonNull(leaderTtl, "leaderTtl");
            if (advertiseUrl != null) {
                advertiseUrl = checkAdvertiseUrl(advertiseUrl);
            }
        }

        /** Defaults for everything but the listener and the cluster token. */
        public static Settings of(String host, int port, String token) {
            return new Settings(host, port, MgmtHttpOptions.of(token), DEFAULT_NODE_TIMEOUT_MS,
                    ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS,
                    ClusterService.DEFAULT_REBUILD_AFTER_MS, null, Leadership.DEFAULT_TTL);
        }

        public Settings withHttp(MgmtHttpOptions v) {
            return new Settings(host, port, v, nodeTimeoutMs, leaseMs, sweepIntervalMs, rebuildAfterMs, advertiseUrl,
                    leaderTtl);
        }

        public Settings withNodeTimeoutMs(long v) {
            return new Settings(host, port, http, v, leaseMs, sweepIntervalMs, rebuildAfterMs, advertiseUrl,
                    leaderTtl);
        }

        public Settings withLeaseMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, v, sweepIntervalMs, rebuildAfterMs, advertiseUrl,
                    leaderTtl);
        }

        public Settings withSweepIntervalMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, v, rebuildAfterMs, advertiseUrl, leaderTtl);
        }

        public Settings withRebuildAfterMs(long v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, sweepIntervalMs, v, advertiseUrl, leaderTtl);
        }

        public Settings withAdvertiseUrl(String v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, sweepIntervalMs, rebuildAfterMs, v,
                    leaderTtl);
        }

        public Settings withLeaderTtl(Duration v) {
            return new Settings(host, port, http, nodeTimeoutMs, leaseMs, sweepIntervalMs, rebuildAfterMs,
                    advertiseUrl, v);
        }
    }

    /**
     * @return {@code url} without a trailing slash
     * @throws IllegalArgumentException unless an absolute {@code http://} or {@code https://} URL with a host and no
     *                                  query, fragment or path beyond "/"
     */
    static String checkAdvertiseUrl(String url) {
        String why = "must be http://HOST:PORT or https://HOST:PORT (no path, query or fragment)";
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid advertiseUrl: advertiseUrl=\"" + url + "\", " + why);
        }
        boolean ok = ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null
                && uri.getRawQuery() == null && uri.getRawFragment() == null
                && (uri.getRawPath() == null || uri.getRawPath().isEmpty() || "/".equals(uri.getRawPath()));
        if (!ok) {
            throw new IllegalArgumentException("invalid advertiseUrl: advertiseUrl=\"" + url + "\", " + why);
        }
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    /**
     * The store a server runs on: etcd when {@code etcd} is given (several management servers may share it; one of
     * them leads and takes the writes, see {@link #start(MetadataStore, Settings)}), else the embedded RocksDB
     * store under {@code dataDir/metadata} (the single-server default, needing nothing else).
     *
     * @param etcd null for RocksDB
     * @throws io.rdmablock.mgmt.api.store.MetadataStoreException when the store cannot be opened (RocksDB: the
     *         directory is locked or unreadable; etcd: {@link io.rdmablock.mgmt.api.store.MetadataStoreUnavailableException}
     *         when it does not answer within its call timeout)
     */
    public static MetadataStore openStore(Path dataDir, EtcdMetadataStore.Config etcd) {
        return openStore(dataDir, etcd, etcd != null ? etcd.secrets() : SecretCipher.NONE);
    }

    /**
     * As {@link #openStore(Path, EtcdMetadataStore.Config)}, the secrets (hosts' DH-HMAC-CHAP secrets, node keys)
     * sealed with {@code secrets} in either store ({@link SecretCipher#NONE}: in clear).
     *
     * @throws io.rdmablock.mgmt.api.store.MetadataStoreException as there
     * @throws IllegalArgumentException when etcd's TLS or password files cannot be used (naming the option)
     */
    public static MetadataStore openStore(Path dataDir, EtcdMetadataStore.Config etcd, SecretCipher secrets) {
        return etcd != null ? new EtcdMetadataStore(etcd.withSecrets(secrets))
                : new RocksMetadataStore(dataDir.resolve("metadata"), secrets);
    }

    /**
     * Opens the store {@link #openStore} picks (etcd when {@code etcd} is not null, else RocksDB under
     * {@code dataDir/metadata}) and starts the server on it.
     *
     * @throws IllegalStateException when the server does not start within {@link #START_TIMEOUT_S}, the port is
     *                               taken or the TLS files cannot be read
     */
    public static MgmtServer start(Path dataDir, EtcdMetadataStore.Config etcd, Settings settings) {
        return start(dataDir, etcd, etcd != null ? etcd.secrets() : SecretCipher.NONE, settings);
    }

    /**
     * As {@link #start(Path, EtcdMetadataStore.Config, Settings)} on {@link #openStore(Path,
     * EtcdMetadataStore.Config, SecretCipher)}: the stored secrets sealed with {@code secrets}.
     *
     * @throws IllegalStateException    as there
     * @throws IllegalArgumentException when etcd's TLS or password files cannot be used (naming the option)
     */
    public static MgmtServer start(Path dataDir, EtcdMetadataStore.Config etcd, SecretCipher secrets,
                                   Settings settings) {
        MetadataStore store = openStore(dataDir, etcd, secrets);
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
     * {@link System#nanoTime()}; the wall clock only stamps displayed times. On an {@link EtcdMetadataStore} the server
     * campaigns for the management leadership ({@link Leadership}, value: its advertised URL) once it listens: only
     * while it leads does it write to the store (every write checked, {@link LeaderOnlyStore}) and run the sweep; on
     * gaining it every node counts as last seen then ({@link ClusterService#takeOver}). Any other store: always the
     * leader.
     *
     * @throws IllegalStateException when the server does not start within {@link #START_TIMEOUT_S}, the port is
     *                               taken or the TLS files cannot be read
     */
    public static MgmtServer start(MetadataStore store, Settings settings) {
        Objects.requireNonNull(store, "store");
        String host = settings.host();
        int port = settings.port();
        MgmtHttpOptions http = settings.http();
        EtcdMetadataStore etcd = store instanceof EtcdMetadataStore e ? e : null;
        if (etcd != null) { // a bad TTL fails before anything starts
            new Leadership.Config(electionOf(etcd.config()), "checked", settings.leaderTtl());
        }
        var holder = new LeaderHolder(etcd);
        MetadataStore used = etcd == null ? store : new LeaderOnlyStore(store, holder::isLeader);
        var cluster = new ClusterService(used, System::currentTimeMillis, System::nanoTime, settings.nodeTimeoutMs(),
                settings.leaseMs(), settings.rebuildAfterMs());
        if (etcd != null) {
            cluster.leading(holder::isLeader);
        }
        var verticle = new MgmtVerticle(cluster, http, host, port, DEFAULT_BODY_LIMIT_BYTES,
                settings.sweepIntervalMs(), etcd == null ? null : holder);
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
        Leadership leadership = null;
        if (etcd != null) {
            String self = settings.advertiseUrl() != null ? settings.advertiseUrl()
                    : MgmtVerticle.ownUrl(http.tls(), host, verticle.actualPort());
            leadership = new Leadership(etcd.client(), new Leadership.Config(electionOf(etcd.config()), self,
                    settings.leaderTtl()), new Leadership.Listener() {
                @Override
                public void gained() {
                    cluster.takeOver();
                    holder.termReady.set(true);
                }

                @Override
                public void lost(String why) {
                    holder.termReady.set(false);
                }
            });
            holder.leadership = leadership;
            leadership.start();
        }
        return new MgmtServer(vertx, store, verticle, host, http.tls(), leadership);
    }

    /**
     * The {@link LeaderView} of a server on etcd: leader while {@link Leadership#isLeader()} and the term's takeover
     * is done; the leader's URL from etcd, cached for {@value #LEADER_CACHE_MS} ms.
     */
    private static final class LeaderHolder implements LeaderView {
        private final EtcdMetadataStore etcd;
        final AtomicBoolean termReady = new AtomicBoolean();
        volatile Leadership leadership;
        private volatile String cachedUrl;
        private volatile long cachedAtNanos;

        LeaderHolder(EtcdMetadataStore etcd) {
            this.etcd = etcd;
        }

        @Override
        public boolean isLeader() {
            Leadership l = leadership;
            return l != null && termReady.get() && l.isLeader();
        }

        @Override
        public Optional<String> leaderUrl() {
            Leadership l = leadership;
            if (l == null) {
                return Optional.empty();
            }
            if (isLeader()) {
                return Optional.of(l.config().advertisedUrl());
            }
            long now = System.nanoTime();
            String cached = cachedUrl;
            if (cached != null && now - cachedAtNanos < TimeUnit.MILLISECONDS.toNanos(LEADER_CACHE_MS)) {
                return Optional.of(cached);
            }
            Optional<String> asked = l.leader();
            cachedUrl = asked.orElse(null);
            cachedAtNanos = now;
            return asked;
        }

        @Override
        public String storeKind() {
            return "etcd";
        }

        @Override
        public String selfUrl() {
            Leadership l = leadership;
            return l != null ? l.config().advertisedUrl() : "(starting)";
        }
    }

    /**
     * @return the election name of the management servers sharing {@code etcd}'s key prefix:
     *         {@code <prefix>mgmt-leader} (beside {@code <prefix>volumes/} and {@code <prefix>nodes/})
     */
    public static String electionOf(EtcdMetadataStore.Config etcd) {
        return etcd.prefix() + "mgmt-leader";
    }

    /** How long a follower reuses the leader's URL it read from etcd, ms. */
    static final long LEADER_CACHE_MS = 250;

    /** @return who leads as this server knows it (always itself without etcd) */
    public LeaderView leaderView() {
        return verticle.leader();
    }

    /** @return the election of a server on etcd, else empty (tests: crash it) */
    public Optional<Leadership> leadership() {
        return Optional.ofNullable(leadership);
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
        if (leadership != null) {
            leadership.close(); // resign first: another server leads at once instead of after the lease TTL
        }
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
