package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.NodeKeys;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.NodeKeyRotation;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** {@code POST /v1/nodes/{nodeId}/rotate-key} and the node key in the heartbeat answer only, on every store. */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class NodeKeyRoutesTest {
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final String REGISTER = """
            {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","capacityBytes":1073741824,"freeBytes":1073741824}""";
    private static final String HEARTBEAT = "{\"freeBytes\":1073741824,\"volumes\":[]}";
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
    }

    private String storedKey() {
        return api.store.node("n1").orElseThrow().nodeKey();
    }

    @Test
    void shouldRotateTheKeyAnsweringItsFingerprintOnly() throws Exception {
        var registered = api.send("POST", "/v1/nodes", REGISTER);
        assertEquals(201, registered.statusCode(), registered.body());
        String before = storedKey();
        assertNotNull(before);
        assertFalse(registered.body().contains(before), "registration answer without the key");
        assertFalse(api.get("/v1/nodes").body().contains(before), "node list without the key");
        String credential = new io.vertx.core.json.JsonObject(registered.body()).getString("credential");
        var beat = api.send("POST", "/v1/nodes/n1/heartbeat", HEARTBEAT, credential, "application/json");
        assertEquals(before, Json.read(beat.body(), HeartbeatResponse.class).nodeKey());

        var r = api.send("POST", "/v1/nodes/n1/rotate-key", null);
        assertEquals(200, r.statusCode(), r.body());
        String after = storedKey();
        assertNotEquals(before, after);
        assertFalse(r.body().contains(after), r.body());
        assertEquals(new NodeKeyRotation("n1", NodeKeys.fingerprint(after)), Json.read(r.body(),
                NodeKeyRotation.class));
        beat = api.send("POST", "/v1/nodes/n1/heartbeat", HEARTBEAT, credential, "application/json");
        assertEquals(after, Json.read(beat.body(), HeartbeatResponse.class).nodeKey());
    }

    @Test
    void shouldAnswerNoNodeKeyToAHeartbeatWithTheClusterToken() throws Exception {
        api.send("POST", "/v1/nodes", REGISTER);
        var beat = api.send("POST", "/v1/nodes/n1/heartbeat", HEARTBEAT);
        assertEquals(200, beat.statusCode(), beat.body());
        assertEquals(null, Json.read(beat.body(), HeartbeatResponse.class).nodeKey());
        assertFalse(beat.body().contains(storedKey()));
    }

    @Test
    void shouldRefuseARotationOfAnUnknownNodeOrWithoutTheClusterToken() throws Exception {
        assertProblem(api.send("POST", "/v1/nodes/n9/rotate-key", null), 404, ProblemTypes.NODE_NOT_FOUND);
        api.send("POST", "/v1/nodes", REGISTER);
        assertProblem(api.send("POST", "/v1/nodes/n1/rotate-key", null, null, null), 401, ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("POST", "/v1/nodes/n1/rotate-key", null, ApiHarness.READ_TOKEN, null), 403,
                ProblemTypes.FORBIDDEN);
    }
}
