package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
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

@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class NodeRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private static final String REGISTER = """
            {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","metricsUrl":"http://127.0.0.1:9100/metrics",
             "capacityBytes":1073741824,"freeBytes":1073741824}""";
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
    }

    private String heartbeat(String volumesJson) {
        return "{\"freeBytes\":1073741824,\"volumes\":" + volumesJson + "}";
    }

    private Volume createVolume(String name) throws Exception {
        var r = api.send("POST", "/v1/volumes", "{\"name\":\"" + name + "\",\"sizeBytes\":2097152}");
        assertEquals(201, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    @Test
    void shouldRegisterThenReRegister() throws Exception {
        var first = api.send("POST", "/v1/nodes", REGISTER);
        assertEquals(201, first.statusCode(), first.body());
        assertEquals("/v1/nodes/n1", first.headers().firstValue("Location").orElse(""));
        Node n = Json.read(first.body(), Node.class);
        assertEquals(NodeState.UP, n.state());
        assertEquals(1L << 30, n.capacityBytes());
        assertEquals("http://127.0.0.1:9100/metrics", n.metricsUrl());
        assertEquals(200, api.send("POST", "/v1/nodes", REGISTER).statusCode());
    }

    @Test
    void shouldRejectInvalidRegistration() throws Exception {
        var address = assertProblem(api.send("POST", "/v1/nodes", REGISTER.replace("127.0.0.1:4420", "nohost")),
                400, ProblemTypes.VALIDATION);
        assertTrue(address.detail().startsWith("invalid fabricAddress: fabricAddress=\"nohost\""), address.detail());
        var free = assertProblem(api.send("POST", "/v1/nodes",
                REGISTER.replace("\"freeBytes\":1073741824", "\"freeBytes\":1073741825")), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid freeBytes: freeBytes=1073741825, min=0, max=capacityBytes=1073741824", free.detail());
        var id = assertProblem(api.send("POST", "/v1/nodes", REGISTER.replace("\"n1\"", "\"N 1\"")), 400,
                ProblemTypes.VALIDATION);
        assertTrue(id.detail().startsWith("invalid nodeId:"), id.detail());
        assertProblem(api.send("POST", "/v1/nodes", "{\"nodeId\":\"n1\"}"), 400, ProblemTypes.VALIDATION);
    }

    @Test
    void shouldRequireTokenOnNodeRoutes() throws Exception {
        assertProblem(api.send("POST", "/v1/nodes", REGISTER, null, "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes", REGISTER, "bad", "application/json"), 401, ProblemTypes.UNAUTHORIZED);
        api.send("POST", "/v1/nodes", REGISTER);
        assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]"), null, "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]"), "bad", "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes/n1/drain", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes/n1/drain", null, "bad", null), 401, ProblemTypes.UNAUTHORIZED);
    }

    @Test
    void shouldAnswerDesiredStateAndMarkVolumeReady() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        Volume v = createVolume("a");
        var r = api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]"));
        assertEquals(200, r.statusCode(), r.body());
        HeartbeatResponse desired = Json.read(r.body(), HeartbeatResponse.class);
        assertFalse(desired.draining());
        assertEquals(1, desired.volumes().size());
        var d = desired.volumes().getFirst();
        assertEquals(v.id(), d.id());
        assertEquals("a", d.name());
        assertEquals(2 * MIB, d.sizeBytes());
        assertEquals(4096, d.lbaSize());
        assertEquals("nqn.2026-11.io.rdmablock:volume:a", d.subnqn());
        assertEquals(VolumeState.CREATING, d.state());

        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("""
                [{"id":"%s","sizeBytes":2097152,"state":"ready","connectedHosts":["nqn.2026-11.io.rdmablock:h"]}]"""
                .formatted(v.id())));
        Volume ready = Json.read(api.get("/v1/volumes/a").body(), Volume.class);
        assertEquals(VolumeState.READY, ready.state());
        assertEquals(List.of("nqn.2026-11.io.rdmablock:h"), ready.connectedHosts());
    }

    @Test
    void shouldReportAVolumeUnavailableWhileItsNodeIsDown() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        Volume v = createVolume("a");
        String report = """
                [{"id":"%s","sizeBytes":2097152,"state":"ready","connectedHosts":[]}]""".formatted(v.id());
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat(report));
        assertEquals(VolumeState.READY, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());

        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1); // no heartbeat for longer than the node timeout
        assertEquals(VolumeState.UNAVAILABLE, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());
        assertEquals(VolumeState.UNAVAILABLE, Json.read(api.get("/v1/volumes").body(), Volume[].class)[0].state());
        assertEquals(1L, api.cluster.volumeCounts().get(VolumeState.UNAVAILABLE));
        var grown = api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}");
        assertEquals(200, grown.statusCode(), grown.body());
        assertEquals(VolumeState.UNAVAILABLE, Json.read(grown.body(), Volume.class).state(), "accepted, still down");

        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat(report)); // back, old size: the resize is pending
        assertEquals(VolumeState.CREATING, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());
        var deleted = api.send("DELETE", "/v1/volumes/a", null);
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1);
        assertEquals(VolumeState.DELETING, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state(),
                "deleting stays deleting while the node is down: " + deleted.body());
    }

    @Test
    void shouldMarkAVolumeProvisionedAndUnavailableWhenItsNodeStopsHoldingIt() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        Volume v = createVolume("a");
        var first = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(),
                HeartbeatResponse.class);
        assertFalse(first.volumes().getFirst().provisioned(), "never reported: the node may create it");
        String report = """
                [{"id":"%s","sizeBytes":2097152,"state":"ready","connectedHosts":[]}]""".formatted(v.id());
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat(report));
        assertEquals(VolumeState.READY, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());

        // the node comes back with an empty data directory: it reports nothing
        var lost = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(),
                HeartbeatResponse.class);
        assertTrue(lost.volumes().getFirst().provisioned(), "the node is told not to recreate it empty");
        assertEquals(VolumeState.UNAVAILABLE, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());
        api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}"); // a resize keeps it provisioned
        var afterResize = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(),
                HeartbeatResponse.class);
        assertEquals(VolumeState.CREATING, afterResize.volumes().getFirst().state());
        assertTrue(afterResize.volumes().getFirst().provisioned());

        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat(report)); // data restored: held again
        assertEquals(VolumeState.CREATING, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state(),
                "held again, resize pending");
    }

    @Test
    void shouldStayCreatingUntilNodeReportsDesiredSize() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        Volume v = createVolume("a");
        api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}");
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("""
                [{"id":"%s","sizeBytes":2097152,"state":"ready","connectedHosts":[]}]""".formatted(v.id())));
        assertEquals(VolumeState.CREATING, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("""
                [{"id":"%s","sizeBytes":4194304,"state":"ready","connectedHosts":[]}]""".formatted(v.id())));
        assertEquals(VolumeState.READY, Json.read(api.get("/v1/volumes/a").body(), Volume.class).state());
    }

    @Test
    void shouldForgetDeletedVolumeOnceNodeStopsReportingIt() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        Volume v = createVolume("a");
        String report = heartbeat("""
                [{"id":"%s","sizeBytes":2097152,"state":"ready","connectedHosts":[]}]""".formatted(v.id()));
        api.send("POST", "/v1/nodes/n1/heartbeat", report);
        api.send("DELETE", "/v1/volumes/a", null);
        var r = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", report).body(), HeartbeatResponse.class);
        assertEquals(VolumeState.DELETING, r.volumes().getFirst().state());
        assertEquals(200, api.get("/v1/volumes/a").statusCode());
        var after = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(),
                HeartbeatResponse.class);
        assertTrue(after.volumes().isEmpty());
        assertProblem(api.get("/v1/volumes/a"), 404, ProblemTypes.VOLUME_NOT_FOUND);
    }

    @Test
    void shouldRejectBadHeartbeats() throws Exception {
        assertProblem(api.send("POST", "/v1/nodes/n9/heartbeat", heartbeat("[]")), 404, ProblemTypes.NODE_NOT_FOUND);
        api.send("POST", "/v1/nodes", REGISTER);
        var free = assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat",
                "{\"freeBytes\":2073741824,\"volumes\":[]}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid freeBytes: freeBytes=2073741824, min=0, max=capacityBytes=1073741824", free.detail());
        assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", "{\"freeBytes\":1}"), 400, ProblemTypes.VALIDATION);
        var state = assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("""
                [{"id":"x","sizeBytes":1,"state":"gone"}]""")), 400, ProblemTypes.VALIDATION);
        assertTrue(state.detail().contains("volumes[0].state"), state.detail());
        assertProblem(api.send("POST", "/v1/nodes/BAD/heartbeat", heartbeat("[]")), 400, ProblemTypes.VALIDATION);
    }

    @Test
    void shouldDrainNode() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        var r = api.send("POST", "/v1/nodes/n1/drain", null);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(NodeState.DRAINING, Json.read(r.body(), Node.class).state());
        var hb = Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(), HeartbeatResponse.class);
        assertTrue(hb.draining());
        assertEquals(200, api.send("POST", "/v1/nodes", REGISTER).statusCode());
        assertEquals(NodeState.DRAINING, Json.read(api.get("/v1/nodes").body(), Node[].class)[0].state(),
                "re-registration keeps draining");
        assertProblem(api.send("POST", "/v1/nodes/n9/drain", null), 404, ProblemTypes.NODE_NOT_FOUND);
    }

    @Test
    void shouldUndrainNode() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        api.send("POST", "/v1/nodes/n1/drain", null);
        var r = api.send("POST", "/v1/nodes/n1/undrain", null);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(NodeState.UP, Json.read(r.body(), Node.class).state());
        assertFalse(Json.read(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")).body(),
                HeartbeatResponse.class).draining());
        createVolume("after-undrain"); // placement takes the node again
        assertProblem(api.send("POST", "/v1/nodes/n1/undrain", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes/n9/undrain", null), 404, ProblemTypes.NODE_NOT_FOUND);
    }

    @Test
    void shouldRemoveANodeThatNeverHeartbeats() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        api.nowMs.addAndGet(10 * ApiHarness.NODE_TIMEOUT_MS); // registered, then silent: down
        assertProblem(api.send("DELETE", "/v1/nodes/n1", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
        var r = api.send("DELETE", "/v1/nodes/n1", null);
        assertEquals(204, r.statusCode(), r.body());
        assertEquals(0, Json.read(api.get("/v1/nodes").body(), Node[].class).length);
        assertProblem(api.send("DELETE", "/v1/nodes/n1", null), 404, ProblemTypes.NODE_NOT_FOUND);
        assertProblem(api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]")), 404, ProblemTypes.NODE_NOT_FOUND);
    }

    @Test
    void shouldRefuseToRemoveANodeHoldingVolumes() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        createVolume("held");
        var p = assertProblem(api.send("DELETE", "/v1/nodes/n1", null), 409, ProblemTypes.NODE_IN_USE);
        assertTrue(p.detail().contains("held"), p.detail());
        assertEquals(1, Json.read(api.get("/v1/nodes").body(), Node[].class).length, "still registered");
    }

    @Test
    void shouldListNodesWithLiveness() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        api.send("POST", "/v1/nodes", REGISTER.replace("\"n1\"", "\"n0\""));
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS / 2);
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]"));
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS / 2 + 1);
        var r = api.get("/v1/nodes");
        assertEquals(200, r.statusCode());
        Node[] nodes = Json.read(r.body(), Node[].class);
        assertEquals("n0", nodes[0].nodeId());
        assertEquals(NodeState.DOWN, nodes[0].state());
        assertEquals("n1", nodes[1].nodeId());
        assertEquals(NodeState.UP, nodes[1].state());
    }

    @Test
    void shouldCountPlacedVolumesAgainstFreeCapacity() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        createVolume("a");
        Node n = Json.read(api.get("/v1/nodes").body(), Node[].class)[0];
        assertEquals((1L << 30) - 2 * MIB, n.freeBytes());
    }

    @Test
    void shouldNotPlaceMoreThanTheReportedFreeSpaceBetweenHeartbeats() throws Exception {
        // capacity 4 GiB, but the file system has 1 GiB free; the node reports that and then nothing for a while
        api.send("POST", "/v1/nodes", REGISTER.replace("\"capacityBytes\":1073741824", "\"capacityBytes\":4294967296"));
        api.send("POST", "/v1/nodes/n1/heartbeat", heartbeat("[]"));
        String body = "{\"name\":\"%s\",\"sizeBytes\":629145600,\"lbaSize\":4096}"; // 600 MiB
        assertEquals(201, api.send("POST", "/v1/volumes", body.formatted("big1")).statusCode());
        var second = api.send("POST", "/v1/volumes", body.formatted("big2"));
        assertEquals(409, second.statusCode(), "the first 600 MiB is not in the node's last report yet: "
                + second.body());
        assertProblem(second, 409, ProblemTypes.NO_CAPACITY);
    }
}
