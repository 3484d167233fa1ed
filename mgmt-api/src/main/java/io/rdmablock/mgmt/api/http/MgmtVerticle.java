package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.cluster.HostCredentials;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.api.metrics.ApiMetrics;
import io.rdmablock.mgmt.api.metrics.MetricsScraper;
import io.rdmablock.mgmt.api.metrics.VolumeStats;
import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.ha.LeaderView;
import io.rdmablock.mgmt.api.ha.NotLeaderException;
import io.rdmablock.mgmt.api.store.MetadataStoreUnavailableException;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.ext.web.handler.PlatformHandler;
import io.vertx.ext.web.openapi.router.OpenAPIRoute;
import io.vertx.ext.web.openapi.router.RequestExtractor;
import io.vertx.ext.web.openapi.router.RouterBuilder;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.validation.ValidatorException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The management REST server. Routes come from the OpenAPI contract {@value #CONTRACT} (every request is validated
 * against it before a handler runs; see {@link ContractLoader} for the one adaptation made for the validator);
 * {@code /openapi.yaml} (the contract as written), {@code /health} and {@code /metrics} are added beside.
 * Handler order per request: metrics timing, {@link BearerAuth}, body (limit {@code bodyLimitBytes}, larger → 413),
 * validation, the operation handler ({@link VolumeRoutes}, {@link NodeRoutes}, {@link HostRoutes},
 * {@link HostCredentialRoutes}). Cluster calls
 * run on a worker ({@code executeBlocking}), never on the event loop, because the store fsyncs. Every error goes
 * through one failure handler that answers problem+json.
 */
public final class MgmtVerticle extends VerticleBase {
    /** Classpath location of the OpenAPI contract. */
    public static final String CONTRACT = "io/rdmablock/mgmt/api/http/openapi.yaml";
    private static final Logger LOG = LoggerFactory.getLogger(MgmtVerticle.class);
    private static final String OPERATION = "rdmablock.operation";
    /** Longest accepted request line (a longer one is 414). */
    static final int MAX_INITIAL_LINE_BYTES = 16 * 1024;
    /** Largest accepted request headers (larger is 431; Vert.x's default). */
    static final int MAX_HEADER_BYTES = 8 * 1024;
    /** Default time within which a request must arrive whole (else 408, connection closed). */
    public static final long DEFAULT_REQUEST_TIMEOUT_MS = MgmtHttpOptions.DEFAULT_REQUEST_TIMEOUT_MS;
    /** Default idle timeout: a connection that sends and receives nothing for this long is closed. */
    static final long IDLE_TIMEOUT_MS = MgmtHttpOptions.DEFAULT_IDLE_TIMEOUT_MS;

    private final ClusterService cluster;
    private final MgmtHttpOptions http;
    private final String host;
    private final int port;
    private final long bodyLimitBytes;
    private final long sweepIntervalMs;
    /** Who leads (null until start: then the single server's {@link LeaderView#always}). */
    private volatile LeaderView leader;
    private long sweepTimer = -1;
    private ApiMetrics metrics;
    private String contractText;
    private Dashboard dashboard;
    private HttpServer server;
    /** The router, once started (read by the contract test, {@code OpenApiConformanceTest}). */
    private volatile Router routes;
    private final VolumeStats stats = new VolumeStats(STATS_SAMPLES, STATS_INTERVAL_MS);
    private MetricsScraper scraper;
    /** Interval of the nodes' {@code /metrics} scrape behind {@code /v1/stats/volumes}. */
    static final long STATS_INTERVAL_MS = 2_000;
    /** Default interval of the liveness sweep ({@link ClusterService#sweep}), ms. */
    public static final long DEFAULT_SWEEP_INTERVAL_MS = 200;
    /** Samples kept per volume (5 minutes at {@link #STATS_INTERVAL_MS}). */
    static final int STATS_SAMPLES = 150;

    /**
     * @param cluster        the cluster logic
     * @param token          cluster bearer token (non-empty)
     * @param host           listen address, e.g. {@code 127.0.0.1} or {@code 0.0.0.0}
     * @param port           listen port, 0 = any free port (see {@link #actualPort()})
     * @param bodyLimitBytes largest accepted request body
     */
    public MgmtVerticle(ClusterService cluster, String token, String host, int port, long bodyLimitBytes) {
        this(cluster, token, host, port, bodyLimitBytes, DEFAULT_REQUEST_TIMEOUT_MS);
    }

    /**
     * @param requestTimeoutMs a request whose body has not arrived whole within this is answered 408 and its
     *                         connection closed, &gt; 0 (see {@link HttpFaults})
     */
    public MgmtVerticle(ClusterService cluster, String token, String host, int port, long bodyLimitBytes,
                        long requestTimeoutMs) {
        this(cluster, token, host, port, bodyLimitBytes, requestTimeoutMs, DEFAULT_SWEEP_INTERVAL_MS);
    }

    /**
     * @param sweepIntervalMs interval of the liveness sweep that promotes a new primary when one is lost
     *                        (docs/failover.md), &gt; 0
     */
    public MgmtVerticle(ClusterService cluster, String token, String host, int port, long bodyLimitBytes,
                        long requestTimeoutMs, long sweepIntervalMs) {
        this(cluster, MgmtHttpOptions.of(token).withTimeouts(MgmtHttpOptions.DEFAULT_IDLE_TIMEOUT_MS,
                requestTimeoutMs), host, port, bodyLimitBytes, sweepIntervalMs);
    }

    /**
     * @param http            tokens (admin and read-only), TLS and the idle and request timeouts
     * @param sweepIntervalMs interval of the liveness sweep, &gt; 0
     */
    public MgmtVerticle(ClusterService cluster, MgmtHttpOptions http, String host, int port, long bodyLimitBytes,
                        long sweepIntervalMs) {
        this(cluster, http, host, port, bodyLimitBytes, sweepIntervalMs, null);
    }

    /**
     * @param leader who leads: writes under {@code /v1/} run only while {@link LeaderView#isLeader()}, else 307 to
     *               the leader or 503 no-leader; the sweep runs only on the leader. Null: this server alone, always
     *               the leader ({@link LeaderView#always} of its own URL)
     */
    public MgmtVerticle(ClusterService cluster, MgmtHttpOptions http, String host, int port, long bodyLimitBytes,
                        long sweepIntervalMs, LeaderView leader) {
        this.leader = leader;
        if (sweepIntervalMs <= 0) {
            throw new IllegalArgumentException("invalid sweepIntervalMs: sweepIntervalMs=" + sweepIntervalMs
                    + ", min=1");
        }
        this.sweepIntervalMs = sweepIntervalMs;
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.http = Objects.requireNonNull(http, "http");
        this.host = Objects.requireNonNull(host, "host");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("invalid port: port=" + port + ", min=0, max=65535");
        }
        this.port = port;
        this.bodyLimitBytes = bodyLimitBytes;
    }

    @Override
    public Future<?> start() {
        // off the event loop: JVM metrics initialise platform MBeans and logging (seconds under emulation)
        return vertx.executeBlocking(() -> {
                    metrics = new ApiMetrics(cluster, () -> {
                        LeaderView l = leader; // null until listening: the single server, or nobody yet
                        return l != null && l.isLeader();
                    });
                    contractText = readContract();
                    dashboard = new Dashboard();
                    return ContractLoader.forValidation(contractText);
                })
                .compose(json -> OpenAPIContract.from(vertx, json))
                .compose(contract -> vertx.createHttpServer(serverOptions(new HttpServerOptions().setHost(host)
                        .setPort(port)
                        // a request line longer than 4096 bytes (e.g. an over-long volume name) would get a bare 414
                        // from the HTTP codec; let it reach validation, which answers problem+json naming the field
                        .setMaxInitialLineLength(MAX_INITIAL_LINE_BYTES)
                        .setMaxHeaderSize(MAX_HEADER_BYTES)
                        // HTTP/1.1 only: an h2c upgrade (the JDK client's default) stalled answers above the
                        // 16 KiB HTTP/2 initial window (the OpenAPI contract, 22 KB) until the idle timeout
                        .setHttp2ClearTextEnabled(false)
                        .setIdleTimeout((int) http.idleTimeoutMs()).setIdleTimeoutUnit(TimeUnit.MILLISECONDS)))
                        .connectionHandler(firstRequest::armed)
                        .requestHandler(firstRequest.then(router(contract, dashboard)))
                        .invalidRequestHandler(firstRequest.then(HttpFaults.invalidRequest()))
                        .listen())
                .onSuccess(s -> {
                    server = s;
                    if (leader == null) {
                        leader = LeaderView.always(ownUrl(http.tls(), host, s.actualPort()));
                    }
                    scraper = new MetricsScraper(vertx, cluster, stats, STATS_INTERVAL_MS);
                    scraper.start();
                    sweepTimer = vertx.setPeriodic(sweepIntervalMs, id -> sweep());
                    LOG.info("management API listening on {}://{}:{}", http.tls() ? "https" : "http", host,
                            s.actualPort());
                });
    }

    /** A connection whose first request's headers are not in within the request timeout is closed. */
    private HttpFaults.HeaderTimeout firstRequest;

    /** @return {@code options} with TLS when configured (PEM certificate chain and key) */
    private HttpServerOptions serverOptions(HttpServerOptions options) {
        firstRequest = new HttpFaults.HeaderTimeout(vertx, http.requestTimeoutMs());
        if (http.tls()) {
            options.setSsl(true).setKeyCertOptions(new PemKeyCertOptions()
                    .setCertPath(http.tlsCert().toString()).setKeyPath(http.tlsKey().toString()));
        }
        return options;
    }

    /** One liveness sweep on a worker (the store fsyncs); a failure is logged, the next tick tries again. */
    private boolean sweeping;

    /** After a failed sweep (e.g. the metadata store has no quorum), none until this time (nanoTime). */
    private long sweepPausedUntil;

    /** @return {@code scheme://host:port} of a listener (0.0.0.0 and :: shown as 127.0.0.1, IPv6 bracketed) */
    public static String ownUrl(boolean tls, String host, int port) {
        String shown = "0.0.0.0".equals(host) || "::".equals(host) ? "127.0.0.1" : host;
        if (shown.contains(":")) {
            shown = "[" + shown + "]";
        }
        return (tls ? "https://" : "http://") + shown + ":" + port;
    }

    /** @return who leads, as this server knows it (after start) */
    public LeaderView leader() {
        return leader;
    }

    private void sweep() {
        if (!leader.isLeader()) {
            return; // liveness, promotions and rebuilds are the leader's
        }
        if (sweeping || System.nanoTime() - sweepPausedUntil < 0) {
            return; // the previous one still runs (a slow store), or failed just now: never queue them up
        }
        sweeping = true;
        vertx.executeBlocking(cluster::sweep, false).onComplete(ar -> {
            sweeping = false;
            if (ar.failed()) {
                sweepPausedUntil = System.nanoTime() + ClusterService.SWEEP_BACKOFF_NS;
                LOG.warn("liveness sweep failed (retried in {} ms): {}", ClusterService.SWEEP_BACKOFF_NS / 1_000_000,
                        ar.cause().toString());
            }
        });
    }

    @Override
    public Future<?> stop() {
        if (sweepTimer >= 0) {
            vertx.cancelTimer(sweepTimer);
        }
        if (scraper != null) {
            scraper.stop();
        }
        return Future.succeededFuture();
    }

    /** @return the per-volume rates behind {@code /v1/stats/volumes} (tests feed it directly) */
    VolumeStats stats() {
        return stats;
    }

    /** @return the router every request goes through (after start; null before) */
    Router routes() {
        return routes;
    }

    /** @return the bound port (after start) */
    public int actualPort() {
        return server.actualPort();
    }

    private Router router(OpenAPIContract contract, Dashboard dashboard) {
        RouterBuilder builder = RouterBuilder.create(vertx, contract, RequestExtractor.withBodyHandler());
        builder.rootHandler((PlatformHandler) this::timed);
        builder.rootHandler(new BearerAuth(http.adminToken(), http.readToken()));
        builder.rootHandler(HttpFaults.armRequestTimeout(http.requestTimeoutMs()));
        builder.rootHandler(BodyHandler.create(false).setBodyLimit(bodyLimitBytes));
        builder.rootHandler(HttpFaults.disarmRequestTimeout());
        builder.rootHandler((io.vertx.ext.web.handler.InputTrustHandler) this::leaderOnly); // before validation
        builder.rootHandler(new StrictJson());
        for (OpenAPIRoute route : builder.getRoutes()) {
            route.setDoSecurity(false); // BearerAuth above answers 401/403 before validation
            String operationId = route.getOperation().getOperationId();
            route.addHandler(ctx -> {
                ctx.put(OPERATION, operationId);
                NodeCredentials.Caller caller = ctx.get(NodeCredentials.CALLER);
                if (caller != null && caller.node() && !NodeCredentials.NODE_OPERATIONS.contains(operationId)) {
                    BearerAuth.insufficientScope(ctx, "a node credential acts only as its node (registration,"
                            + " heartbeat, its copy reports, reading a volume); this route needs the cluster token");
                    return;
                }
                if (caller != null && caller.host() && !HostCredentials.HOST_OPERATIONS.contains(operationId)) {
                    BearerAuth.insufficientScope(ctx, "a host credential only reads the volumes that admit its host"
                            + " NQN and reports their copies unreachable; this route needs the cluster token");
                    return;
                }
                if (caller != null && (caller.node() || caller.host())) { // its record decides (a store read)
                    Answers.then(ctx, vertx.executeBlocking(() -> cluster.verify(caller), false), verified -> {
                        ctx.put(NodeCredentials.CALLER, verified);
                        ctx.response().putHeader(BearerAuth.SCOPE_HEADER, verified.host() ? "host" : "node");
                        ctx.next();
                    });
                    return;
                }
                ctx.next();
            });
        }
        VolumeRoutes.mount(builder, vertx, cluster);
        SnapshotRoutes.mount(builder, vertx, cluster);
        RollbackRoutes.mount(builder, vertx, cluster);
        NodeRoutes.mount(builder, vertx, cluster, new SecretChannel(http.allowPlaintextSecrets()));
        HostRoutes.mount(builder, vertx, cluster.hosts());
        HostCredentialRoutes.mount(builder, vertx, cluster.hostCredentials());
        builder.getRoute("volumeStats").addHandler(ctx -> Answers.json(ctx, 200, stats.snapshot()));
        builder.getRoute("getLeader").addHandler(this::getLeader);

        Router router = builder.createRouter();
        router.get("/openapi.yaml").handler(ctx -> {
            ctx.put(OPERATION, "openapi");
            ctx.response().putHeader("Content-Type", "application/yaml; charset=utf-8").end(contractText);
        });
        router.get("/health").handler(ctx -> {
            ctx.put(OPERATION, "health");
            Answers.then(ctx, vertx.executeBlocking(() -> cluster.nodeCounts()), counts -> ctx.response()
                    .putHeader("Content-Type", "application/json").end(new JsonObject().put("status", "up").encode()));
        });
        router.get("/metrics").handler(ctx -> {
            ctx.put(OPERATION, "metrics");
            Answers.then(ctx, vertx.executeBlocking(metrics::scrape), text -> ctx.response()
                    .putHeader("Content-Type", metrics.contentType()).end(Buffer.buffer(text)));
        });
        dashboard.mount(router, ctx -> ctx.put(OPERATION, "ui"));
        router.route().failureHandler(this::failure);
        router.errorHandler(400, Problems::badPath);
        router.errorHandler(404, Problems::notFound);
        router.errorHandler(405, Problems::methodNotAllowed);
        routes = router;
        return router;
    }

    /**
     * The HA contract (see {@link LeaderView}): on a follower, every request under {@code /v1/} but GET/HEAD (and
     * GET/HEAD of runtime state, {@link #runtimeState}, too while a leader is known) is answered 307 to the leader (problem+json not-leader, member {@code leader}) or, with no leader known, 503
     * no-leader ({@code Retry-After: 1}); it is not executed. On the leader it goes on.
     */
    private void leaderOnly(RoutingContext ctx) {
        HttpMethod method = ctx.request().method();
        String path = ctx.request().path();
        LeaderView l = leader; // null only in the instant between listen and its callback: the single server
        boolean read = method == HttpMethod.GET || method == HttpMethod.HEAD;
        boolean runtimeRead = read && runtimeState(path);
        if ((read && !runtimeRead) || !path.startsWith("/v1/") || l == null || l.isLeader()) {
            ctx.next();
            return;
        }
        vertx.executeBlocking(this::knownLeader, false).onComplete(ar -> {
            if (leader.isLeader()) { // elected meanwhile
                ctx.next();
                return;
            }
            String url = ar.succeeded() ? ar.result() : null;
            if ((url == null || url.equals(leader.selfUrl())) && runtimeRead) {
                ctx.next(); // no leader: this server's own view (node states from its memory: no heartbeats here)
                return;
            }
            if (url == null || url.equals(leader.selfUrl())) {
                noLeader(ctx, "no management server leads now (an election is in progress, or etcd is unreachable):"
                        + " nothing was executed; retry in a second, here or on another server");
                return;
            }
            var body = new JsonObject().put("type", ProblemTypes.NOT_LEADER).put("title", "not the leader")
                    .put("status", 307).put("detail", "this management server (" + leader.selfUrl()
                            + ") is not the leader: send the same request to " + url + " (not executed here)")
                    .put("instance", ctx.request().path()).put("leader", url);
            ctx.response().setStatusCode(307).putHeader("Location", url + ctx.request().uri())
                    .putHeader("Content-Type", io.rdmablock.mgmt.client.Problem.MEDIA_TYPE).end(body.encode());
        });
    }

    /**
     * True for the reads whose answer comes from runtime state only the leader has (node liveness from heartbeats,
     * per-volume I/O statistics, the latest verify run of a volume as its primary reported it): {@code /v1/nodes},
     * {@code /v1/nodes/...}, {@code /v1/stats/...}, {@code /v1/volumes/NAME/verify}. A follower redirects them to
     * the leader like writes; with no leader known it answers them itself.
     */
    static boolean runtimeState(String path) {
        return path.equals("/v1/nodes") || path.startsWith("/v1/nodes/") || path.startsWith("/v1/stats/")
                || path.startsWith("/v1/volumes/") && path.endsWith("/verify");
    }

    /** @return the leader's URL, or null when none is known or etcd cannot say (blocking: a worker) */
    private String knownLeader() {
        try {
            return leader.leaderUrl().orElse(null);
        } catch (MetadataStoreUnavailableException e) {
            LOG.debug("leader unknown: {}", e.getMessage());
            return null;
        }
    }

    private static void noLeader(RoutingContext ctx, String detail) {
        ctx.response().putHeader("Retry-After", "1");
        Problems.send(ctx, 503, ProblemTypes.NO_LEADER, "No leader", detail);
    }

    /**
     * {@code GET /v1/leader}: who leads, this server's URL, and whether this server reads its metadata store now
     * ({@code metadataStore}: {@code kind} etcd or local, {@code reachable}, {@code detail} the error when not).
     */
    private void getLeader(RoutingContext ctx) {
        Future<String> known = vertx.executeBlocking(this::knownLeader, false);
        Future<String> store = vertx.executeBlocking(this::storeProblem, false); // both bounded by etcd's timeout
        Future.join(known, store).onComplete(ar -> {
            String url = known.succeeded() ? known.result() : null;
            String storeError = store.succeeded() ? store.result() : String.valueOf(store.cause());
            boolean self = leader.isLeader();
            ctx.response().setStatusCode(200).putHeader("Content-Type", "application/json")
                    .end(new JsonObject().put("leader", self ? leader.selfUrl() : url).put("self", leader.selfUrl())
                            .put("isLeader", self).put("metadataStore", new JsonObject()
                                    .put("kind", leader.storeKind()).put("reachable", storeError == null)
                                    .put("detail", storeError)).encode());
        });
    }

    /** @return null when one read of the metadata store (the node list) succeeds, else why not (blocking: a worker) */
    private String storeProblem() {
        try {
            cluster.nodeCounts();
            return null;
        } catch (RuntimeException e) {
            MetadataStoreUnavailableException down = unavailable(e);
            return down != null ? down.getMessage() : e.toString();
        }
    }

    private void timed(RoutingContext ctx) {
        long startNs = System.nanoTime();
        ctx.addEndHandler(v -> metrics.observe(ctx.get(OPERATION, "other"), ctx.response().getStatusCode(),
                System.nanoTime() - startNs));
        ctx.next();
    }

    private void failure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        int status = ctx.statusCode();
        // the client hung up: nobody to answer, not our fault. (An unavailable etcd's cause chain holds a
        // ConnectException too: that one is answered, 503.)
        if (ctx.response().closed() || (unavailable(failure) == null && clientGone(failure))) {
            LOG.debug("{} {}: client closed the connection before the answer ({})", ctx.request().method(),
                    ctx.request().path(), failure == null ? "status " + status : failure.toString());
            return;
        }
        if (failure instanceof HttpException http) {
            status = http.getStatusCode();
            failure = http.getCause();
        }
        if (failure instanceof NotLeaderException lost) {
            LOG.warn("{} {}: {}", ctx.request().method(), ctx.request().path(), lost.getMessage());
            noLeader(ctx, lost.getMessage());
        } else if (failure instanceof ApiException api) {
            if (api.wwwAuthenticate() != null) {
                ctx.response().putHeader("WWW-Authenticate", api.wwwAuthenticate());
            }
            Problems.send(ctx, api.problem());
        } else if (failure instanceof ValidatorException invalid) {
            Problems.send(ctx, ValidationProblems.of(ctx, invalid));
        } else if (failure instanceof IllegalArgumentException bad) {
            Problems.send(ctx, 400, ProblemTypes.MALFORMED_BODY, "Malformed body", bad.getMessage());
        } else if (unavailable(failure) instanceof MetadataStoreUnavailableException down) {
            // etcd without quorum (or unreachable): the metadata write or read did not happen; the client may retry
            LOG.warn("{} {}: metadata store unavailable: {}", ctx.request().method(), ctx.request().path(),
                    down.getMessage());
            ctx.response().putHeader("Retry-After", "2");
            Problems.send(ctx, 503, ProblemTypes.METADATA_UNAVAILABLE, "Metadata store unavailable",
                    down.getMessage());
        } else if (status == 413) {
            Problems.send(ctx, 413, ProblemTypes.BODY_TOO_LARGE, "Body too large",
                    "request body larger than " + bodyLimitBytes + " bytes");
        } else if (status == 404 && failure == null) {
            Problems.notFound(ctx);
        } else if (status == 405 && failure == null) {
            Problems.methodNotAllowed(ctx);
        } else if (status == 400 && failure == null) {
            Problems.send(ctx, 400, ProblemTypes.MALFORMED_BODY, "Malformed body", "the request could not be read");
        } else {
            LOG.error("{} {} failed (status {})", ctx.request().method(), ctx.request().path(), status, failure);
            Problems.send(ctx, 500, ProblemTypes.INTERNAL, "Internal error",
                    failure == null ? "status " + status : failure.toString());
        }
    }

    /** The first {@link MetadataStoreUnavailableException} in the cause chain of {@code t} (bounded), or null. */
    private static MetadataStoreUnavailableException unavailable(Throwable t) {
        for (int i = 0; t != null && i < 8; i++, t = t.getCause()) {
            if (t instanceof MetadataStoreUnavailableException u) {
                return u;
            }
        }
        return null;
    }

    /**
     * @return whether {@code failure} is the connection going away under a request (reset, broken pipe, closed while
     *         the body or the answer was in flight): the client hung up, not a server fault
     */
    static boolean clientGone(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.SocketException || t instanceof java.nio.channels.ClosedChannelException
                    || t instanceof io.vertx.core.http.HttpClosedException) {
                return true;
            }
            String m = t.getMessage();
            if (t instanceof IOException && m != null && (m.contains("Connection reset") || m.contains("Broken pipe")
                    || m.contains("Connection was closed"))) {
                return true;
            }
        }
        return false;
    }

    private static String readContract() {
        try (InputStream in = MgmtVerticle.class.getClassLoader().getResourceAsStream(CONTRACT)) {
            if (in == null) {
                throw new IllegalStateException("missing classpath resource " + CONTRACT);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + CONTRACT, e);
        }
    }
}
