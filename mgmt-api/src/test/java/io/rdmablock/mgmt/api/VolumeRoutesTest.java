package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.rdmablock.mgmt.api.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(VertxExtension.class)
class VolumeRoutesTest {
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        api.register("n1", 1024 * MIB);
    }

    private String create(String name, long sizeBytes) {
        return """
                {"name":"%s","sizeBytes":%d}""".formatted(name, sizeBytes);
    }

    @Test
    void shouldCreateVolumeWithDefaultsAndLocation() throws Exception {
        var r = api.send("POST", "/v1/volumes", create("vol-1", 64 * MIB));
        assertEquals(201, r.statusCode(), r.body());
        assertEquals("/v1/volumes/vol-1", r.headers().firstValue("Location").orElse(""));
        Volume v = Json.read(r.body(), Volume.class);
        assertEquals("vol-1", v.name());
        assertEquals(64 * MIB, v.sizeBytes());
        assertEquals(4096, v.lbaSize());
        assertEquals(1, v.replicas());
        assertEquals("n1", v.nodeId());
        assertTrue(v.fabricAddress().startsWith("127.0.0.1:"), v.fabricAddress());
        assertEquals("nqn.2026-11.io.rdmablock:volume:vol-1", v.subnqn());
        assertEquals(1, v.nsid());
        assertEquals(VolumeState.CREATING, v.state());
        assertEquals(36, v.id().length());
    }

    @Test
    void shouldRejectSizeNotMultipleOfOneMebibyte() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", create("vol-1", 4096)), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid sizeBytes: sizeBytes=4096, must be a multiple of 1048576, min=1048576, "
                + "max=70368744177664", p.detail());
    }

    @Test
    void shouldRejectBadName() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", create("Vol_1", MIB)), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().startsWith("invalid name: name=\"Vol_1\", must match"), p.detail());
    }

    @Test
    void shouldRejectMissingSize() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\"}"), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("sizeBytes"), p.detail());
    }

    @Test
    void shouldRejectUnknownField() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,\"size\":1}"),
                400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("size"), p.detail());
    }

    @Test
    void shouldRejectWrongType() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":\"big\"}"),
                400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("sizeBytes"), p.detail());
    }

    @Test
    void shouldRejectMalformedJson() throws Exception {
        assertProblem(api.send("POST", "/v1/volumes", "{\"name\":"), 400, ProblemTypes.MALFORMED_BODY);
        assertProblem(api.send("POST", "/v1/volumes", "[1]"), 400, ProblemTypes.MALFORMED_BODY);
    }

    @Test
    void shouldRejectNonJsonMediaType() throws Exception {
        assertProblem(api.send("POST", "/v1/volumes", create("v", MIB), ApiHarness.TOKEN, "text/plain"),
                415, ProblemTypes.UNSUPPORTED_MEDIA_TYPE);
    }

    @Test
    void shouldRejectBodyOverLimit() throws Exception {
        String big = "{\"name\":\"v\",\"sizeBytes\":1048576,\"allowedHosts\":[\"" + "x".repeat(5000) + "\"]}";
        assertProblem(api.send("POST", "/v1/volumes", big), 413, ProblemTypes.BODY_TOO_LARGE);
    }
}
