package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.BackgroundInEffect;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's background budget set from the management plane (docs/qos.md, "Background budget"): {@code PATCH
 * /v1/nodes/{nodeId} {"background": ...}} stores it in the node record, GET shows it with what the node reported in
 * effect, the heartbeat answer carries it (start-up values as 0/0), null resets; bad bounds are 400 naming the field
 * and change nothing.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class NodeBackgroundRoutesTest {
    private static final long MIB = 1L << 20;

    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
    }

    private Node node(String id) throws Exception {
        var r = api.get("/v1/nodes/" + id);
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), Node.class);
    }

    @Test
    void shouldSetShowSendAndResetTheBackgroundBudget() throws Exception {
        assertNull(node("n1").background(), "none set: the start-up values");
        assertFalse(new JsonObject(api.get("/v1/nodes/n1").body()).containsKey("background"), "absent from the JSON");
        assertEquals(NodeBackground.STARTUP, api.heartbeat("n1", "[]").background(), "0/0 = start-up values");

        var r = api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":100,\"minMiBps\":10}}");
        assertEquals(200, r.statusCode(), r.body());
        NodeBackground want = new NodeBackground(100, 10);
        assertEquals(want, Json.read(r.body(), Node.class).background());
        assertEquals(want, node("n1").background());
        JsonArray all = new JsonArray(api.get("/v1/nodes").body());
        assertEquals(100, all.getJsonObject(0).getJsonObject("background").getInteger("maxMiBps"), "in the list");
        assertEquals(want, api.heartbeat("n1", "[]").background(), "the node gets it in the next answer");
        assertEquals(want, api.store.node("n1").orElseThrow().background(), "in the stored record");

        // what the node reports is shown as in effect
        var hb = api.send("POST", "/v1/nodes/n1/heartbeat", "{\"freeBytes\":1,\"volumes\":[],\"background\":"
                + "{\"rateBytesPerSec\":52428800,\"ceilingBytesPerSec\":104857600,\"floorBytesPerSec\":10485760}}",
                api.credentials.getOrDefault("n1", ApiHarness.TOKEN), "application/json");
        assertEquals(200, hb.statusCode(), hb.body());
        assertEquals(new BackgroundInEffect(50 * MIB, 100 * MIB, 10 * MIB), node("n1").backgroundInEffect());

        // a new leader over the same store (its runtime state empty) shows the setting, not yet the node's report
        var successor = new ClusterService(api.store, api.nowMs::get, () -> api.nowMs.get() * 1_000_000L,
                ApiHarness.NODE_TIMEOUT_MS, ClusterService.DEFAULT_LEASE_MS, ClusterService.DEFAULT_REBUILD_AFTER_MS);
        Node there = successor.nodes().node("n1");
        assertEquals(want, there.background(), "kept in the metadata store");
        assertNull(there.backgroundInEffect(), "runtime state: until the node's next heartbeat there");

        r = api.send("PATCH", "/v1/nodes/n1", "{\"background\":null}");
        assertEquals(200, r.statusCode(), r.body());
        assertNull(Json.read(r.body(), Node.class).background(), "null resets");
        assertNull(api.store.node("n1").orElseThrow().background());
        assertEquals(NodeBackground.STARTUP, api.heartbeat("n1", "[]").background());
        assertEquals(new BackgroundInEffect(50 * MIB, 100 * MIB, 10 * MIB), node("n1").backgroundInEffect(),
                "a heartbeat without a report keeps the last one");
    }

    @Test
    void shouldRefuseBadBoundsNamingTheFieldAndChangeNothing() throws Exception {
        assertEquals(200, api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":40,\"minMiBps\":4}}")
                .statusCode());
        String[][] bad = {
                {"{\"maxMiBps\":-1,\"minMiBps\":1}", "background.maxMiBps"},
                {"{\"maxMiBps\":0,\"minMiBps\":0}", "background.maxMiBps"},
                {"{\"maxMiBps\":100001,\"minMiBps\":1}", "background.maxMiBps"},
                {"{\"maxMiBps\":10,\"minMiBps\":-4}", "background.minMiBps"},
                {"{\"maxMiBps\":10,\"minMiBps\":20}", "background.minMiBps"},
                {"{\"maxMiBps\":10}", "minMiBps"},
                {"{\"maxMiBps\":1e12,\"minMiBps\":1}", "background.maxMiBps"},
        };
        for (String[] b : bad) {
            var p = assertProblem(api.send("PATCH", "/v1/nodes/n1", "{\"background\":" + b[0] + "}"), 400,
                    ProblemTypes.VALIDATION);
            assertTrue(p.detail().contains(b[1]), b[0] + " -> " + p.detail());
        }
        var p = assertProblem(api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":10,\"minMiBps\":20}}"),
                400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("max") || p.detail().contains("ceiling"), "says the bound: " + p.detail());
        p = assertProblem(api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":100001,\"minMiBps\":1}}"),
                400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("100000"), "says the bound: " + p.detail());
        assertEquals(400, api.send("PATCH", "/v1/nodes/n1", "{}").statusCode(), "nothing to change");
        assertEquals(new NodeBackground(40, 4), node("n1").background(), "nothing changed");
        assertProblem(api.send("PATCH", "/v1/nodes/nope", "{\"background\":{\"maxMiBps\":1,\"minMiBps\":1}}"), 404,
                ProblemTypes.NODE_NOT_FOUND);
        assertProblem(api.get("/v1/nodes/nope"), 404, ProblemTypes.NODE_NOT_FOUND);
        var readOnly = api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":1,\"minMiBps\":1}}",
                ApiHarness.READ_TOKEN, "application/json");
        assertEquals(403, readOnly.statusCode(), readOnly.body());
        var asNode = api.send("PATCH", "/v1/nodes/n1", "{\"background\":{\"maxMiBps\":1,\"minMiBps\":1}}",
                api.credentials.get("n1"), "application/json");
        assertEquals(403, asNode.statusCode(), "a node credential may not set it: " + asNode.body());
        assertEquals(new NodeBackground(40, 4), node("n1").background(), "nothing changed");
    }
}
