package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
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
class VolumeRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
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

    @Test
    void shouldNameFieldInSchemaErrors() throws Exception {
        var missing = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\"}"), 400, ProblemTypes.VALIDATION);
        var unknown = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,\"size\":1}"),
                400, ProblemTypes.VALIDATION);
        var type = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":\"big\"}"),
                400, ProblemTypes.VALIDATION);
        assertEquals("invalid sizeBytes: missing, required fields=[name, sizeBytes]", missing.detail());
        assertEquals("invalid size: unknown field, allowed fields=[name, sizeBytes, lbaSize, replicas, minInSync, "
                + "allowedHosts, requireAuth, qos]",
                unknown.detail());
        assertEquals("invalid sizeBytes: sizeBytes=\"big\", must be an integer", type.detail());
    }

    @Test
    void shouldRejectLbaSizeReplicasAndHostsOutOfBounds() throws Exception {
        var lba = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576,\"lbaSize\":1024}"),
                400, ProblemTypes.VALIDATION);
        assertEquals("invalid lbaSize: lbaSize=1024, must be one of [512, 4096]", lba.detail());
        var replicas = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"v\",\"sizeBytes\":1048576,\"replicas\":6}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid replicas: replicas=6, min=1, max=5", replicas.detail());
        var hosts = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"v\",\"sizeBytes\":1048576,\"allowedHosts\":[\"host-1\"]}"), 400, ProblemTypes.VALIDATION);
        assertTrue(hosts.detail().startsWith("invalid allowedHosts[0]: allowedHosts[0]=\"host-1\""), hosts.detail());
        var tooBig = assertProblem(api.send("POST", "/v1/volumes", create("v", (64L << 40) + MIB)), 400,
                ProblemTypes.VALIDATION);
        assertTrue(tooBig.detail().contains("max=70368744177664"), tooBig.detail());
    }

    @Test
    void shouldKeepLbaSizeAndAllowedHosts() throws Exception {
        var r = api.send("POST", "/v1/volumes", """
                {"name":"v","sizeBytes":2097152,"lbaSize":512,"replicas":1,
                 "allowedHosts":["nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"]}""");
        assertEquals(201, r.statusCode(), r.body());
        Volume v = Json.read(r.body(), Volume.class);
        assertEquals(512, v.lbaSize());
        assertEquals(java.util.List.of("nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
                v.allowedHosts());
    }

    @Test
    void shouldAnswerConflictForExistingName() throws Exception {
        assertEquals(201, api.send("POST", "/v1/volumes", create("v", MIB)).statusCode());
        assertProblem(api.send("POST", "/v1/volumes", create("v", MIB)), 409, ProblemTypes.VOLUME_EXISTS);
    }

    @Test
    void shouldRequireTokenToCreate() throws Exception {
        var missing = api.send("POST", "/v1/volumes", create("v", MIB), null, "application/json");
        assertProblem(missing, 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(missing.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
        assertProblem(api.send("POST", "/v1/volumes", create("v", MIB), "wrong", "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertEquals("[]", api.get("/v1/volumes").body());
    }

    @Test
    void shouldPlaceOnUpNodeWithMostFreeCapacity() throws Exception {
        api.register("n2", 2048 * MIB);
        api.register("n3", 4096 * MIB);
        api.send("POST", "/v1/nodes/n3/drain", null);
        var a = Json.read(api.send("POST", "/v1/volumes", create("a", 1536 * MIB)).body(), Volume.class);
        assertEquals("n2", a.nodeId());
        var b = Json.read(api.send("POST", "/v1/volumes", create("b", 64 * MIB)).body(), Volume.class);
        assertEquals("n1", b.nodeId(), "n2 has 512 MiB left, n1 1024 MiB");
    }

    @Test
    void shouldAnswerNoCapacityWhenNoNodeHasRoom() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes", create("v", 2048 * MIB)), 409, ProblemTypes.NO_CAPACITY);
        assertTrue(p.detail().contains("n1"), p.detail());
    }

    @Test
    void shouldNotOvercommitANodeWhenCreatesRace() throws Exception {
        // n1 has 1024 MiB: of 8 concurrent creates of 768 MiB exactly one fits
        var pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            var start = new java.util.concurrent.CountDownLatch(1);
            var answers = new java.util.ArrayList<java.util.concurrent.Future<Integer>>();
            for (int i = 0; i < 8; i++) {
                String name = "race" + i;
                answers.add(pool.submit(() -> {
                    start.await();
                    return api.send("POST", "/v1/volumes", create(name, 768 * MIB)).statusCode();
                }));
            }
            start.countDown();
            int created = 0;
            int refused = 0;
            for (var f : answers) {
                int status = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                created += status == 201 ? 1 : 0;
                refused += status == 409 ? 1 : 0;
            }
            assertEquals(1, created, "creates placed on a node without room for them");
            assertEquals(7, refused);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldAnswerNoCapacityWhenNodesAreDownOrDraining() throws Exception {
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1);
        assertProblem(api.send("POST", "/v1/volumes", create("v", MIB)), 409, ProblemTypes.NO_CAPACITY);
        api.register("n1", 1024 * MIB);
        api.send("POST", "/v1/nodes/n1/drain", null);
        assertProblem(api.send("POST", "/v1/volumes", create("v", MIB)), 409, ProblemTypes.NO_CAPACITY);
    }

    @Test
    void shouldListVolumesOrderedByName() throws Exception {
        api.send("POST", "/v1/volumes", create("b", MIB));
        api.send("POST", "/v1/volumes", create("a", MIB));
        var r = api.get("/v1/volumes");
        assertEquals(200, r.statusCode());
        Volume[] list = Json.read(r.body(), Volume[].class);
        assertEquals(2, list.length);
        assertEquals("a", list[0].name());
        assertEquals("b", list[1].name());
    }

    @Test
    void shouldGetVolumeOrAnswerNotFound() throws Exception {
        api.send("POST", "/v1/volumes", create("a", MIB));
        var r = api.get("/v1/volumes/a");
        assertEquals(200, r.statusCode());
        assertEquals("a", Json.read(r.body(), Volume.class).name());
        assertProblem(api.get("/v1/volumes/b"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.get("/v1/volumes/BAD"), 400, ProblemTypes.VALIDATION);
        assertProblem(api.get("/v1/volumes/" + "a".repeat(5000)), 400, ProblemTypes.VALIDATION); // not a bare 414
        var patch = assertProblem(api.send("PATCH", "/v1/volumes/BAD", "{\"sizeBytes\":2097152}"), 400,
                ProblemTypes.VALIDATION);
        assertTrue(patch.detail().startsWith("invalid path parameter name"), patch.detail());
    }

    @Test
    void shouldGrowVolumeAndRejectShrink() throws Exception {
        api.send("POST", "/v1/volumes", create("a", 2 * MIB));
        var grown = api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}");
        assertEquals(200, grown.statusCode(), grown.body());
        assertEquals(4 * MIB, Json.read(grown.body(), Volume.class).sizeBytes());
        assertEquals(200, api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}").statusCode());
        var shrink = assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":1048576}"), 400,
                ProblemTypes.SHRINK_NOT_ALLOWED);
        assertEquals("invalid sizeBytes: sizeBytes=1048576, volumes only grow, min=4194304 (the current size)",
                shrink.detail());
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194305}"), 400, ProblemTypes.VALIDATION);
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{}"), 400, ProblemTypes.VALIDATION);
        assertProblem(api.send("PATCH", "/v1/volumes/zz", "{\"sizeBytes\":4194304}"), 404,
                ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":1099511627776}"), 409,
                ProblemTypes.NO_CAPACITY);
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":8388608}", null, "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":8388608}", "x", "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
    }

    @Test
    void shouldDeleteVolumeUnlessHostConnected() throws Exception {
        var v = Json.read(api.send("POST", "/v1/volumes", create("a", MIB)).body(), Volume.class);
        api.send("POST", "/v1/nodes/n1/heartbeat", """
                {"freeBytes":0,"volumes":[{"id":"%s","sizeBytes":1048576,"state":"ready",
                 "connectedHosts":["nqn.2026-11.io.rdmablock:host-1"]}]}""".formatted(v.id()));
        var inUse = assertProblem(api.send("DELETE", "/v1/volumes/a", null), 409, ProblemTypes.VOLUME_IN_USE);
        assertTrue(inUse.detail().contains("nqn.2026-11.io.rdmablock:host-1"), inUse.detail());
        assertProblem(api.send("DELETE", "/v1/volumes/a", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("DELETE", "/v1/volumes/a", null, "x", null), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("DELETE", "/v1/volumes/a?force=maybe", null), 400, ProblemTypes.VALIDATION);
        var forced = api.send("DELETE", "/v1/volumes/a?force=true", null);
        assertEquals(202, forced.statusCode(), forced.body());
        assertEquals(VolumeState.DELETING, Json.read(forced.body(), Volume.class).state());
        assertEquals(202, api.send("DELETE", "/v1/volumes/a", null).statusCode(), "idempotent");
        assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}"), 409,
                ProblemTypes.VOLUME_DELETING);
        assertProblem(api.send("POST", "/v1/volumes", create("a", MIB)), 409, ProblemTypes.VOLUME_EXISTS);
        assertProblem(api.send("DELETE", "/v1/volumes/zz", null), 404, ProblemTypes.VOLUME_NOT_FOUND);
    }

    @Test
    void shouldDeleteIdleVolume() throws Exception {
        api.send("POST", "/v1/volumes", create("a", MIB));
        var r = api.send("DELETE", "/v1/volumes/a", null);
        assertEquals(202, r.statusCode(), r.body());
        assertEquals(VolumeState.DELETING, Json.read(r.body(), Volume.class).state());
    }
}
