package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class ServiceRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
    }

    @Test
    void shouldServeOpenApiContractAsWritten() throws Exception {
        var r = api.get("/openapi.yaml");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/yaml"));
        assertTrue(r.body().startsWith("openapi: 3.1.0"), r.body());
        assertTrue(r.body().contains("application/problem+json"));
        assertTrue(r.body().contains("operationId: createVolume"));
    }

    @Test
    void shouldAnswerHealth() throws Exception {
        var r = api.get("/health");
        assertEquals(200, r.statusCode());
        assertEquals("{\"status\":\"up\"}", r.body());
    }

    @Test
    void shouldExposePrometheusMetrics() throws Exception {
        api.get("/v1/volumes");
        api.register("n1", 1L << 30);
        var r = api.get("/metrics");
        assertEquals(200, r.statusCode());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        String body = r.body();
        assertTrue(body.contains("rdmablock_mgmt_requests_total{operation=\"listVolumes\",status=\"200\"} 1"), body);
        assertTrue(body.contains("rdmablock_mgmt_requests_total{operation=\"registerNode\",status=\"201\"} 1"), body);
        assertTrue(body.contains("rdmablock_nodes{state=\"up\"} 1"), body);
        assertTrue(body.contains("rdmablock_volumes{state=\"ready\"} 0"), body);
        assertTrue(body.contains("jvm_memory_used_bytes"), body);
        assertTrue(body.contains("rdmablock_volume_copies{state=\"in_sync\"} 0"), body);
        assertTrue(body.contains("rdmablock_build_info{commit=\""), body);
    }

    @Test
    void shouldAnswerProblemForUnknownRoute() throws Exception {
        var p = assertProblem(api.get("/v2/volumes"), 404, ProblemTypes.NOT_FOUND);
        assertTrue(p.detail().contains("/v2/volumes"), p.detail());
        assertEquals("/v2/volumes", p.instance());
    }

    @Test
    void shouldAnswerProblemForWrongMethod() throws Exception {
        assertProblem(api.send("PUT", "/v1/volumes", "{}"), 405, ProblemTypes.METHOD_NOT_ALLOWED);
    }
}
