package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
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

/** A management verticle on port 0 over an in-memory store with a manual clock, and a raw HTTP client. */
final class ApiHarness {
    static final String TOKEN = "test-token";
    /** The read-only token: GET routes only. */
    static final String READ_TOKEN = "test-read-token";
    static final long NODE_TIMEOUT_MS = 5_000;

    final AtomicLong nowMs = new AtomicLong(1_800_000_000_000L);
    final InMemoryMetadataStore store = new InMemoryMetadataStore();
    final ClusterService cluster = new ClusterService(store, nowMs::get, NODE_TIMEOUT_MS);
    static final long REQUEST_TIMEOUT_MS = 2_000;
    static final long IDLE_TIMEOUT_MS = 4_000;
    final MgmtVerticle verticle = new MgmtVerticle(cluster, MgmtHttpOptions.of(TOKEN).withReadToken(READ_TOKEN)
            .withTimeouts(IDLE_TIMEOUT_MS, REQUEST_TIMEOUT_MS), "127.0.0.1", 0, 4096,
            MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ApiHarness deploy(Vertx vertx) throws Exception {
        vertx.deployVerticle(verticle).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
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
