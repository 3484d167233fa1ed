package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 16: reads need a credential (the read-only token or the cluster token); scopes per RFC 6750. */
@ExtendWith(VertxExtension.class)
class HttpHygieneAuthTest {
    private static final long MIB = 1L << 20;
    private static final List<String> READS = List.of("/v1/volumes", "/v1/volumes/v", "/v1/nodes", "/v1/stats/volumes");
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        api.register("n1", 1L << 30);
        assertEquals(201, api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":" + MIB
                + ",\"allowedHosts\":[\"nqn.2014-08.org.example:h1\"]}").statusCode());
    }

    @Test
    void shouldAnswerAReadWithoutATokenWith401() throws Exception {
        for (String path : READS) {
            var r = api.send("GET", path, null, null, null);
            var p = assertProblem(r, 401, ProblemTypes.UNAUTHORIZED);
            assertEquals("Bearer realm=\"rdmablock\"", r.headers().firstValue("WWW-Authenticate").orElse(""), path);
            assertFalse(r.body().contains("nqn.2014-08.org.example:h1"), r.body());
            assertTrue(p.detail().contains("read token"), p.detail());
        }
    }

    @Test
    void shouldAnswerAReadWithTheReadOrTheClusterToken() throws Exception {
        for (String path : READS) {
            var read = api.send("GET", path, null, ApiHarness.READ_TOKEN, null);
            assertEquals(200, read.statusCode(), path + ": " + read.body());
            assertEquals("read", read.headers().firstValue(BearerAuth.SCOPE_HEADER).orElse(""), path);
            var admin = api.send("GET", path, null, ApiHarness.TOKEN, null);
            assertEquals(200, admin.statusCode(), path + ": " + admin.body());
            assertEquals("admin", admin.headers().firstValue(BearerAuth.SCOPE_HEADER).orElse(""), path);
        }
        assertTrue(api.get("/v1/volumes/v").body().contains("nqn.2014-08.org.example:h1"));
    }

    @Test
    void shouldAnswerAReadWithAWrongTokenWith401InvalidToken() throws Exception {
        for (String path : READS) {
            var r = api.send("GET", path, null, "wrong", null);
            assertProblem(r, 401, ProblemTypes.UNAUTHORIZED);
            assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").contains("error=\"invalid_token\""),
                    path);
        }
    }

    @Test
    void shouldAnswerTheReadTokenOnAMutatingRouteWith403InsufficientScope() throws Exception {
        var create = api.send("POST", "/v1/volumes", "{\"name\":\"w\",\"sizeBytes\":" + MIB + "}",
                ApiHarness.READ_TOKEN, "application/json");
        assertProblem(create, 403, ProblemTypes.FORBIDDEN);
        String challenge = create.headers().firstValue("WWW-Authenticate").orElse("");
        assertTrue(challenge.contains("error=\"insufficient_scope\""), challenge);
        assertEquals(404, api.get("/v1/volumes/w").statusCode(), "nothing created");
        assertProblem(api.send("DELETE", "/v1/volumes/v", null, ApiHarness.READ_TOKEN, null), 403,
                ProblemTypes.FORBIDDEN);
        assertProblem(api.send("PATCH", "/v1/volumes/v", "{\"sizeBytes\":" + 2 * MIB + "}", ApiHarness.READ_TOKEN,
                "application/json"), 403, ProblemTypes.FORBIDDEN);
        // node endpoints as before: the cluster token only
        assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", "{\"freeBytes\":0,\"volumes\":[]}",
                ApiHarness.READ_TOKEN, "application/json"), 403, ProblemTypes.FORBIDDEN);
        assertProblem(api.send("POST", "/v1/nodes/n1/drain", null, ApiHarness.READ_TOKEN, null), 403,
                ProblemTypes.FORBIDDEN);
        assertEquals(200, api.get("/v1/volumes/v").statusCode(), "still there");
    }

    @Test
    void shouldKeepHealthMetricsContractAndDashboardFilesOpen() throws Exception {
        for (String path : List.of("/health", "/metrics", "/openapi.yaml", "/ui/", "/ui/app.js", "/ui/style.css")) {
            var r = api.send("GET", path, null, null, null);
            assertEquals(200, r.statusCode(), path + ": " + r.body());
            assertFalse(r.body().contains("nqn.2014-08.org.example:h1"), path);
        }
        assertEquals(302, api.send("GET", "/", null, null, null).statusCode());
    }

    @Test
    void shouldNotOpenAReadRouteThroughADashboardPath() throws Exception {
        for (String path : List.of("/ui/..%2Fv1%2Fvolumes", "/ui/../v1/volumes", "/ui/%2e%2e/v1/volumes",
                "/health/../v1/volumes", "/v1/volumes/../../ui/")) {
            var r = api.send("GET", path, null, null, null);
            assertFalse(r.body().contains("nqn.2014-08.org.example:h1"), path + ": " + r.body());
            assertTrue(r.statusCode() >= 400 || r.statusCode() == 200 && r.body().contains("<html"),
                    path + ": " + r.statusCode() + " " + r.body());
        }
    }

    @Test
    void shouldNeedTheClusterTokenForReadsWhenThereIsNoReadToken(Vertx vertx) throws Exception {
        var cluster = new ClusterService(new io.rdmablock.mgmt.api.store.InMemoryMetadataStore(),
                System::currentTimeMillis, ApiHarness.NODE_TIMEOUT_MS);
        var verticle = new MgmtVerticle(cluster, ApiHarness.TOKEN, "127.0.0.1", 0, 4096);
        vertx.deployVerticle(verticle).toCompletionStage().toCompletableFuture().get();
        var http = java.net.http.HttpClient.newHttpClient();
        var uri = java.net.URI.create("http://127.0.0.1:" + verticle.actualPort() + "/v1/volumes");
        var none = http.send(java.net.http.HttpRequest.newBuilder(uri).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertProblem(none, 401, ProblemTypes.UNAUTHORIZED);
        var admin = http.send(java.net.http.HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + ApiHarness.TOKEN).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, admin.statusCode(), admin.body());
    }

    @Test
    void shouldRefuseAReadTokenEqualToTheClusterToken() {
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MgmtHttpOptions.of("same").withReadToken("same"));
        assertTrue(e.getMessage().contains("readToken"), e.getMessage());
    }
}
