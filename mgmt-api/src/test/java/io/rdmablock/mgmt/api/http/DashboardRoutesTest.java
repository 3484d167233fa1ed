package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.testing.Await;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class DashboardRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
    }

    @Test
    void shouldRedirectRootAndUiToTheDashboard() throws Exception {
        for (String path : new String[] {"/", "/ui"}) {
            var r = api.get(path);
            assertEquals(302, r.statusCode(), path);
            assertEquals("/ui/", r.headers().firstValue("Location").orElse(""), path);
        }
    }

    @Test
    void shouldServeThePageWithoutToken() throws Exception {
        var r = api.get("/ui/");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/html"));
        assertTrue(r.body().contains("<table id=\"volumes\">"), r.body());
        assertTrue(r.body().contains("<script src=\"app.js\""), r.body());
        String csp = r.headers().firstValue("Content-Security-Policy").orElse("");
        assertTrue(csp.contains("default-src 'self'"), csp);
    }

    @Test
    void shouldServeScriptsAndStyles() throws Exception {
        var js = api.get("/ui/app.js");
        assertEquals(200, js.statusCode());
        assertTrue(js.headers().firstValue("Content-Type").orElse("").startsWith("text/javascript"));
        assertTrue(js.body().contains("/v1/stats/volumes"));
        assertEquals(200, api.get("/ui/plot.js").statusCode());
        assertTrue(api.get("/ui/style.css").headers().firstValue("Content-Type").orElse("").startsWith("text/css"));
    }

    @Test
    void shouldAnswerProblemForAnUnknownDashboardFile() throws Exception {
        assertProblem(api.get("/ui/secret.txt"), 404, ProblemTypes.NOT_FOUND);
        assertProblem(api.get("/ui/..%2Fopenapi.yaml"), 404, ProblemTypes.NOT_FOUND);
    }

    @Test
    void shouldAnswerEmptyStatsBeforeAnyScrape() throws Exception {
        var r = api.get("/v1/stats/volumes");
        assertEquals(200, r.statusCode());
        assertEquals("{\"intervalMs\":2000,\"volumes\":[],\"nodes\":[]}", r.body());
    }

    @Test
    void shouldComputeVolumeRatesFromTheNodesMetrics(Vertx vertx) throws Exception {
        var reads = new AtomicLong();
        HttpServer node = vertx.createHttpServer().requestHandler(req -> {
            long n = reads.addAndGet(1000);
            req.response().putHeader("Content-Type", "text/plain; version=0.0.4").end(
                    "rdmablock_volume_commands_total{opcode=\"read\",volume=\"v1\"} " + n + "\n"
                    + "rdmablock_volume_used_bytes{volume=\"v1\"} 4096.0\nrdmablock_node_used_bytes 4096.0\n");
        }).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        var r = api.send("POST", "/v1/nodes", """
                {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","metricsUrl":"http://127.0.0.1:%d/metrics",
                 "capacityBytes":1073741824,"freeBytes":1073741824}""".formatted(node.actualPort()));
        assertEquals(201, r.statusCode(), r.body());
        String body = Await.value(() -> {
            try {
                return api.get("/v1/stats/volumes").body();
            } catch (Exception e) {
                throw new IllegalStateException("GET /v1/stats/volumes", e);
            }
        }, b -> b.contains("\"readIops\""), Duration.ofSeconds(20), "readIops in /v1/stats/volumes after two scrapes");
        assertTrue(body.contains("\"volume\":\"v1\",\"nodeId\":\"n1\",\"usedBytes\":4096"), body);
        assertTrue(body.contains("{\"nodeId\":\"n1\",\"usedBytes\":4096,\"provisionedBytes\":-1}"), body);
        assertTrue(body.matches(".*\"readIops\":[1-9].*"), body);
    }
}
