package io.rdmablock.mgmt.client;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The node agent's credential (docs/authentication.md, "Credentials and scopes"): bootstrap, keep, replace. */
class NodeAgentCredentialTest {
    private static final RegisterNodeRequest REG =
            new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30);
    /** A registration answer without its closing brace. */
    private static final String NODE_JSON = """
            {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","metricsUrl":"","capacityBytes":1073741824,
             "freeBytes":1073741824,"state":"up","lastHeartbeat":"2026-11-29T22:00:00Z\"""";
    private static final String DESIRED_JSON = "{\"draining\":false,\"volumes\":[]}";
    private static final String UNAUTHORIZED = """
            {"type":"https://rdmablock.io/problems/unauthorized","title":"Unauthorized","status":401,
             "detail":"the node credential of n1 is not valid"}""";
    private static final String C1 = "rbn1:n1:" + "a".repeat(43);
    private static final String C2 = "rbn1:n1:" + "b".repeat(43);

    private static class Quiet implements NodeAgent.Handler {
        @Override
        public HeartbeatRequest report() {
            return new HeartbeatRequest(1L << 30, List.of());
        }

        @Override
        public void apply(HeartbeatResponse desired) {
        }
    }

    /** A server that issues {@code issued} to registrations with the cluster token and accepts only {@code valid}. */
    private static FakeServer server(String[] valid, String issued) throws Exception {
        return new FakeServer(s -> {
            String token = s.authorization() == null ? "" : s.authorization().substring(7);
            if (token.startsWith("rbn1:") && !token.equals(valid[0])) {
                return new FakeServer.Answer(401, Problem.MEDIA_TYPE, UNAUTHORIZED);
            }
            if (s.path().endsWith("/heartbeat")) {
                return new FakeServer.Answer(200, "application/json", DESIRED_JSON);
            }
            if (token.equals("t")) {
                valid[0] = issued;
                return new FakeServer.Answer(201, "application/json",
                        NODE_JSON + ",\"credential\":\"" + issued + "\"}");
            }
            return new FakeServer.Answer(200, "application/json", NODE_JSON + "}");
        });
    }

    private static List<String> auth(FakeServer server) {
        return server.seen.stream().map(s -> s.path() + " " + s.authorization()).toList();
    }

    @Test
    void shouldStoreTheCredentialOfTheFirstRegistrationAndSendItFromThenOn() throws Exception {
        var store = NodeAgent.inMemory();
        try (var server = server(new String[1], C1);
             var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, new Quiet(), 1000, store)) {
            assertFalse(agent.usingCredential());
            assertTrue(agent.tick(), String.valueOf(agent.lastFailure()));
            assertTrue(agent.tick());
            assertEquals(C1, store.load());
            assertTrue(agent.usingCredential());
            assertEquals(List.of("/v1/nodes Bearer t", "/v1/nodes/n1/heartbeat Bearer " + C1,
                    "/v1/nodes/n1/heartbeat Bearer " + C1), auth(server));
        }
    }

    @Test
    void shouldRegisterWithAStoredCredentialAndKeepIt() throws Exception {
        var store = NodeAgent.inMemory();
        store.save(C1);
        try (var server = server(new String[] {C1}, C2);
             var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, new Quiet(), 1000, store)) {
            assertTrue(agent.tick(), String.valueOf(agent.lastFailure()));
            assertEquals(List.of("/v1/nodes Bearer " + C1, "/v1/nodes/n1/heartbeat Bearer " + C1), auth(server));
            assertEquals(C1, store.load(), "kept: the answer issued none");
        }
    }

    @Test
    void shouldRegisterAgainWithTheClusterTokenWhenTheCredentialIsRefused() throws Exception {
        var store = NodeAgent.inMemory();
        store.save(C1);
        String[] valid = {C1};
        try (var server = server(valid, C2);
             var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, new Quiet(), 1000, store)) {
            assertTrue(agent.tick());
            valid[0] = "rbn1:n1:replaced-by-an-operator"; // an operator re-registered the node: C1 is refused
            assertTrue(agent.tick(), String.valueOf(agent.lastFailure()));
            assertEquals(C2, store.load());
            assertEquals(List.of("/v1/nodes Bearer " + C1, "/v1/nodes/n1/heartbeat Bearer " + C1,
                    "/v1/nodes/n1/heartbeat Bearer " + C1, "/v1/nodes Bearer t",
                    "/v1/nodes/n1/heartbeat Bearer " + C2), auth(server));
        }
    }

    @Test
    void shouldIgnoreAStoredCredentialOfAnotherNode() throws Exception {
        var store = NodeAgent.inMemory();
        store.save("rbn1:other:" + "c".repeat(43));
        var calls = new AtomicInteger();
        try (var server = server(new String[1], C1);
             var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, new Quiet(), 1000, store)) {
            assertFalse(agent.usingCredential());
            assertTrue(agent.tick());
            assertEquals("/v1/nodes Bearer t", auth(server).getFirst());
            assertEquals(C1, store.load());
            calls.incrementAndGet();
        }
        assertEquals(1, calls.get());
    }
}
