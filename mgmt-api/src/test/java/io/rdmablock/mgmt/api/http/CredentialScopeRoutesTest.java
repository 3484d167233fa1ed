package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.security.SecureRandom;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Node credentials and their scope (docs/authentication.md, "Credentials and scopes"). */
@ExtendWith(VertxExtension.class)
class CredentialScopeRoutesTest {
    private static final String HEARTBEAT = "{\"freeBytes\":1073741824,\"volumes\":[]}";
    private ApiHarness api;
    private String a;
    private String b;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        a = register("na", "127.0.0.1:4420", ApiHarness.TOKEN, 201);
        b = register("nb", "127.0.0.1:4421", ApiHarness.TOKEN, 201);
        assertNotNull(a);
        assertTrue(a.startsWith("rbn1:na:"), "credential names its node");
        assertNotEquals(a, b);
    }

    private HttpResponse<String> registration(String nodeId, String address, String token) throws Exception {
        return api.send("POST", "/v1/nodes", """
                {"nodeId":"%s","fabricAddress":"%s","capacityBytes":1073741824,"freeBytes":1073741824}"""
                .formatted(nodeId, address), token, "application/json");
    }

    /** @return the credential the registration answered (null when none) */
    private String register(String nodeId, String address, String token, int status) throws Exception {
        var r = registration(nodeId, address, token);
        assertEquals(status, r.statusCode(), r.body());
        return new JsonObject(r.body()).getString("credential");
    }

    private HttpResponse<String> beat(String nodeId, String token) throws Exception {
        return api.send("POST", "/v1/nodes/" + nodeId + "/heartbeat", HEARTBEAT, token, "application/json");
    }

    private static void assertInsufficientScope(HttpResponse<String> r) {
        assertProblem(r, 403, ProblemTypes.FORBIDDEN);
        assertTrue(r.headers().firstValue("WWW-Authenticate").orElse("").contains("insufficient_scope"),
                r.headers().toString());
    }

    @Test
    void shouldRefuseANodeCredentialOnEveryOperatorRoute() throws Exception {
        assertInsufficientScope(api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576}", a,
                "application/json"));
        assertInsufficientScope(api.send("GET", "/v1/nodes", null, a, null));
        assertInsufficientScope(api.send("POST", "/v1/nodes/na/drain", null, a, null));
        assertInsufficientScope(api.send("DELETE", "/v1/nodes/nb", null, a, null));
        assertInsufficientScope(api.send("POST", "/v1/nodes/na/rotate-key", null, a, null));
        assertInsufficientScope(api.send("GET", "/v1/hosts", null, a, null));
        assertEquals(2, api.store.nodes().size(), "nothing removed");
    }

    @Test
    void shouldRefuseNodeACredentialHeartbeatingAsNodeB() throws Exception {
        var r = beat("nb", a);
        assertProblem(r, 403, ProblemTypes.FORBIDDEN);
        assertTrue(r.body().contains("na"), r.body());
        var own = beat("na", a);
        assertEquals(200, own.statusCode());
        assertEquals("node", own.headers().firstValue(BearerAuth.SCOPE_HEADER).orElse(""));
    }

    @Test
    void shouldRefuseReRegisteringNodeBAtAnotherAddressWithACredential() throws Exception {
        assertProblem(registration("nb", "10.9.9.9:4420", a), 403, ProblemTypes.FORBIDDEN);
        assertEquals("127.0.0.1:4421", api.store.node("nb").orElseThrow().fabricAddress());
        assertEquals(200, beat("nb", b).statusCode(), "b's credential still good");
    }

    @Test
    void shouldLetANodeReRegisterItselfElsewhereKeepingItsCredential() throws Exception {
        assertNull(register("na", "127.0.0.2:4420", a, 200), "no new credential");
        assertEquals("127.0.0.2:4420", api.store.node("na").orElseThrow().fabricAddress());
        var own = beat("na", a);
        assertEquals(200, own.statusCode());
        assertEquals("node", own.headers().firstValue(BearerAuth.SCOPE_HEADER).orElse(""));
    }

    @Test
    void shouldReplaceTheCredentialOnAnOperatorReRegistration() throws Exception {
        String again = register("na", "127.0.0.3:4420", ApiHarness.TOKEN, 200);
        assertNotNull(again);
        assertNotEquals(a, again);
        var old = beat("na", a);
        assertProblem(old, 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(old.headers().firstValue("WWW-Authenticate").orElse("").contains("invalid_token"));
        assertEquals(200, beat("na", again).statusCode());
        assertFalse(api.store.node("na").orElseThrow().toString().contains(again));
    }

    @Test
    void shouldRefuseForgedOrUnknownNodeCredentials() throws Exception {
        String forged = a.substring(0, a.length() - 4) + (a.endsWith("AAAA") ? "BBBB" : "AAAA");
        var refused = beat("na", forged);
        assertProblem(refused, 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(refused.headers().firstValue(BearerAuth.SCOPE_HEADER).isEmpty(), "no scope for a forged one");
        assertEquals(201, api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":1048576}").statusCode());
        var read = api.send("GET", "/v1/volumes/v", null, forged, null); // a route that names no node
        assertProblem(read, 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(read.headers().firstValue("WWW-Authenticate").orElse("").contains("invalid_token"));
        assertProblem(api.send("GET", "/v1/volumes/v/verify", null, forged, null), 401, ProblemTypes.UNAUTHORIZED);
        String stranger = "rbn1:nx:" + a.substring(a.lastIndexOf(':') + 1);
        assertProblem(registration("nx", "127.0.0.1:4430", stranger), 401, ProblemTypes.UNAUTHORIZED);
        assertTrue(api.store.node("nx").isEmpty());
        assertProblem(beat("na", "rbn1:na:short"), 401, ProblemTypes.UNAUTHORIZED);
    }

    @Test
    void shouldHandHostSecretsAndTheNodeKeyOnlyToTheNodesOwnCredential() throws Exception {
        String secret = DhchapSecret.generate(1, 32, new SecureRandom()).encoded();
        assertEquals(201, api.send("PUT", "/v1/hosts/nqn.2014-08.org.nvmexpress%3Ah1",
                "{\"dhchapSecret\":\"" + secret + "\"}").statusCode());
        HeartbeatResponse own = Json.read(beat("na", a).body(), HeartbeatResponse.class);
        assertEquals(1, own.hosts().size());
        assertEquals(secret, own.hosts().getFirst().dhchapSecret());
        assertNotNull(own.nodeKey());
        var token = beat("na", ApiHarness.TOKEN);
        assertEquals(200, token.statusCode(), "the cluster token still heartbeats (older nodes, tests)");
        HeartbeatResponse operator = Json.read(token.body(), HeartbeatResponse.class);
        assertTrue(operator.hosts().isEmpty());
        assertNull(operator.nodeKey());
        assertFalse(token.body().contains(secret));
    }

    @Test
    void shouldLetANodeCredentialReportOnlyAsItself() throws Exception {
        var created = api.send("POST", "/v1/volumes", "{\"name\":\"v\",\"sizeBytes\":2097152,\"replicas\":2}");
        assertEquals(201, created.statusCode(), created.body());
        Volume v = Json.read(created.body(), Volume.class);
        String primary = v.nodeId();
        String secondary = primary.equals("na") ? "nb" : "na";
        String primaryCredential = primary.equals("na") ? a : b;
        String secondaryCredential = primary.equals("na") ? b : a;
        String stale = "/v1/volumes/v/copies/" + secondary + "/stale";
        String body = "{\"epoch\":1,\"reporter\":\"" + primary + "\"}";
        assertProblem(api.send("POST", stale, body, secondaryCredential, "application/json"), 403,
                ProblemTypes.FORBIDDEN); // the secondary posing as the primary
        assertProblem(api.send("POST", "/v1/volumes/v/copies/" + primary + "/unreachable", "{\"epoch\":1,"
                + "\"reporter\":\"" + primary + "\"}", secondaryCredential, "application/json"), 403,
                ProblemTypes.FORBIDDEN);
        var own = api.send("POST", stale, body, primaryCredential, "application/json");
        assertEquals(200, own.statusCode(), own.body());
        assertEquals(200, api.send("GET", "/v1/volumes/v", null, secondaryCredential, null).statusCode(),
                "a node reads a volume record");
    }
}
