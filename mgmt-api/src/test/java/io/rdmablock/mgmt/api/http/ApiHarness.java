package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.Volume;
import io.vertx.core.Vertx;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A management verticle on port 0 over a store of a {@link StoreKind} (the REST contract suite runs on RocksDB and
 * etcd; the HTTP hygiene tests on an in-memory store) with a manual clock, and a raw HTTP client. The store is
 * closed when the test's Vert.x closes (a helper verticle's stop).
 */
final class ApiHarness {
    static final String TOKEN = "test-token";
    /** The read-only token: GET routes only. */
    static final String READ_TOKEN = "test-read-token";
    static final long NODE_TIMEOUT_MS = 5_000;

    final AtomicLong nowMs = new AtomicLong(1_800_000_000_000L);
    final MetadataStore store;
    final ClusterService cluster;
    static final long REQUEST_TIMEOUT_MS = 2_000;
    static final long IDLE_TIMEOUT_MS = 4_000;
    final MgmtVerticle verticle;

    /** In memory (the HTTP hygiene tests). */
    ApiHarness() {
        this(StoreKind.inMemory(), ClusterService.DEFAULT_REBUILD_AFTER_MS);
    }

    /** On a new store of {@code kind}. */
    ApiHarness(StoreKind kind) {
        this(kind.open(), ClusterService.DEFAULT_REBUILD_AFTER_MS);
    }

    /** On a new store of {@code kind}, copies rebuilt after {@code rebuildAfterMs} (see below). */
    ApiHarness(StoreKind kind, long rebuildAfterMs) {
        this(kind.open(), rebuildAfterMs);
    }

    /**
     * A harness whose copies are rebuilt after their node is silent for {@code rebuildAfterMs} (manual clock); its
     * verticle sweeps only once an hour, so the test's own {@link ClusterService#sweep} calls are the only ones.
     */
    ApiHarness(MetadataStore store, long rebuildAfterMs) {
        this(store, rebuildAfterMs, rebuildAfterMs == ClusterService.DEFAULT_REBUILD_AFTER_MS
                ? MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS : 3_600_000);
    }

    /**
     * On a new store of {@code kind} whose verticle sweeps only once an hour: the test's own
     * {@link ClusterService#sweep} calls are the only ones (no race with the verticle's timer over who promotes).
     */
    static ApiHarness manualSweep(StoreKind kind) {
        return new ApiHarness(kind.open(), ClusterService.DEFAULT_REBUILD_AFTER_MS, 3_600_000);
    }

    private ApiHarness(MetadataStore store, long rebuildAfterMs, long sweepIntervalMs) {
        this.store = store;
        cluster = new ClusterService(store, nowMs::get, () -> nowMs.get() * 1_000_000L, NODE_TIMEOUT_MS,
                ClusterService.DEFAULT_LEASE_MS, rebuildAfterMs);
        verticle = new MgmtVerticle(cluster, MgmtHttpOptions.of(TOKEN).withReadToken(READ_TOKEN)
                .withTimeouts(IDLE_TIMEOUT_MS, REQUEST_TIMEOUT_MS), "127.0.0.1", 0, 4096, sweepIntervalMs);
    }
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * Deploys the verticle as the child of a helper verticle whose stop closes the store: Vert.x undeploys a child
     * before its parent's stop, so the store is closed after the management verticle stopped.
     */
    ApiHarness deploy(Vertx vertx) throws Exception {
        vertx.deployVerticle(new io.vertx.core.VerticleBase() {
            @Override
            public io.vertx.core.Future<?> start() {
                return vertx.deployVerticle(verticle);
            }

            @Override
            public io.vertx.core.Future<?> stop() {
                return vertx.executeBlocking(() -> {
                    // a grace, not an assertion: a sweep or request the child started may still be on a worker
                    // thread, and nothing the harness can see says when it left the store
                    Thread.sleep(100);
                    store.close();
                    return null;
                });
            }
        }).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return this;
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + verticle.actualPort());
    }

    HttpResponse<String> send(String method, String path, String body, String token, String contentType)
            throws Exception {
        var builder = HttpRequest.newBuilder(URI.create(uri() + path)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            builder.header("Content-Type", contentType);
            builder.method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            builder.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return http.send(builder.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> send(String method, String path, String body) throws Exception {
        return send(method, path, body, TOKEN, "application/json");
    }

    /** GET with the read token. */
    HttpResponse<String> get(String path) throws Exception {
        return send("GET", path, null, READ_TOKEN, null);
    }

    /** Registers node {@code id} with the given capacity (all free). */
    void register(String id, long capacityBytes) throws Exception {
        var r = send("POST", "/v1/nodes", """
                {"nodeId":"%s","fabricAddress":"127.0.0.1:%d","metricsUrl":"","capacityBytes":%d,"freeBytes":%d}"""
                .formatted(id, 4420 + Math.abs(id.hashCode() % 1000), capacityBytes, capacityBytes));
        assertTrue(r.statusCode() == 201 || r.statusCode() == 200, r.body());
        credentials.put(id, new io.vertx.core.json.JsonObject(r.body()).getString("credential"));
    }

    /** The node credentials {@link #register} (cluster token) was issued, by node id. */
    final java.util.Map<String, String> credentials = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Heartbeat of {@code nodeId} reporting {@code volumesJson} (a JSON array), with the node's credential when
     * {@link #register} got one (as a node sends it; the answer then has its secrets), else the cluster token;
     * asserts 200.
     */
    HeartbeatResponse heartbeat(String nodeId, String volumesJson) throws Exception {
        var r = send("POST", "/v1/nodes/" + nodeId + "/heartbeat",
                "{\"freeBytes\":1048576000,\"volumes\":" + volumesJson + "}",
                credentials.getOrDefault(nodeId, TOKEN), "application/json");
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), HeartbeatResponse.class);
    }

    /** @return a one-volume report array: {@code v} ready at its size, with extra members (e.g. resyncs) */
    static String ready(Volume v, String extra) {
        return "[{\"id\":\"" + v.id() + "\",\"sizeBytes\":" + v.sizeBytes() + ",\"state\":\"ready\""
                + (extra.isEmpty() ? "" : "," + extra) + "}]";
    }

    /** Creates a 2 MiB volume with {@code replicas} copies and has every copy's node report it ready. */
    Volume createReady(String name, int replicas) throws Exception {
        var r = send("POST", "/v1/volumes", """
                {"name":"%s","sizeBytes":%d,"replicas":%d}""".formatted(name, 2L << 20, replicas));
        assertEquals(201, r.statusCode(), r.body());
        Volume v = Json.read(r.body(), Volume.class);
        for (var c : v.copies()) {
            heartbeat(c.nodeId(), ready(v, ""));
        }
        return volume(name);
    }

    /** @return the volume as GET answers it (asserts 200) */
    Volume volume(String name) throws Exception {
        var r = get("/v1/volumes/" + name);
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    /** @return each copy as "node role state", the primary first */
    static java.util.List<String> roles(Volume v) {
        return v.copies().stream().map(c -> c.nodeId() + " " + c.role().wireName() + " " + c.state().wireName())
                .toList();
    }

    /** Asserts a problem+json answer and returns it. */
    static Problem assertProblem(HttpResponse<String> response, int status, String type) {
        assertEquals(status, response.statusCode(), response.body());
        assertEquals(Problem.MEDIA_TYPE, response.headers().firstValue("Content-Type").orElse(""), response.body());
        Problem p = Json.read(response.body(), Problem.class);
        assertEquals(type, p.type(), response.body());
        assertEquals(status, p.status(), response.body());
        assertTrue(p.title() != null && !p.title().isEmpty(), response.body());
        assertTrue(p.detail() != null && !p.detail().isEmpty(), response.body());
        return p;
    }
}
