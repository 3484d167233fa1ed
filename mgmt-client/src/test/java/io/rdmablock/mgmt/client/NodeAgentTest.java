package io.rdmablock.mgmt.client;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeAgentTest {
    private static final RegisterNodeRequest REG =
            new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30);
    private static final String NODE_JSON = """
            {"nodeId":"n1","fabricAddress":"127.0.0.1:4420","metricsUrl":"","capacityBytes":1073741824,
             "freeBytes":1073741824,"state":"up","lastHeartbeat":"2026-11-29T22:00:00Z"}""";
    private static final String DESIRED_JSON = """
            {"draining":false,"volumes":[{"id":"v1","name":"vol-1","sizeBytes":1048576,"lbaSize":512,
             "allowedHosts":[],"subnqn":"nqn.2026-11.io.rdmablock:volume:vol-1","state":"creating","role":"primary","epoch":1,"minInSync":1}]}""";
    private static final String NODE_NOT_FOUND = """
            {"type":"https://rdmablock.io/problems/node-not-found","title":"Node not found","status":404,
             "detail":"no node n1"}""";

    private static class Recorder implements NodeAgent.Handler {
        final List<HeartbeatResponse> applied = new CopyOnWriteArrayList<>();

        @Override
        public HeartbeatRequest report() {
            return new HeartbeatRequest(1L << 30, List.of());
        }

        @Override
        public void apply(HeartbeatResponse desired) {
            applied.add(desired);
        }
    }

    @Test
    void shouldFailHeartbeatsOverToAnotherManagementServer() throws Exception {
        java.util.function.Function<FakeServer.Seen, FakeServer.Answer> answer = s -> s.path().endsWith("/heartbeat")
                ? new FakeServer.Answer(200, "application/json", DESIRED_JSON)
                : new FakeServer.Answer(201, "application/json", NODE_JSON);
        var first = new FakeServer(answer);
        try (var second = new FakeServer(answer)) {
            var client = new MgmtClient(List.of(first.uri(), second.uri()), "t", java.time.Duration.ofSeconds(5), null);
            var handler = new Recorder();
            try (var agent = new NodeAgent(client, () -> REG, handler, 1000)) {
                assertTrue(agent.tick());
                assertEquals(2, first.seen.size());
                first.close(); // the first management server dies: the next heartbeat goes to the second
                assertTrue(agent.tick(), String.valueOf(agent.lastFailure()));
                assertEquals(List.of("/v1/nodes/n1/heartbeat"), second.seen.stream().map(FakeServer.Seen::path).toList());
                assertEquals(second.uri(), client.baseUri());
                assertEquals(2, handler.applied.size());
            }
        } finally {
            first.close();
        }
    }

    @Test
    void shouldRegisterThenHeartbeatAndApplyDesiredState() throws Exception {
        try (var server = new FakeServer(s -> s.path().endsWith("/heartbeat")
                ? new FakeServer.Answer(200, "application/json", DESIRED_JSON)
                : new FakeServer.Answer(201, "application/json", NODE_JSON))) {
            var handler = new Recorder();
            try (var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, handler, 1000)) {
                assertTrue(agent.tick());
                assertTrue(agent.registered());
                assertEquals(List.of("/v1/nodes", "/v1/nodes/n1/heartbeat"),
                        server.seen.stream().map(FakeServer.Seen::path).toList());
                assertEquals("vol-1", handler.applied.getFirst().volumes().getFirst().name());
                assertEquals(VolumeState.CREATING, handler.applied.getFirst().volumes().getFirst().state());
            }
        }
    }

    @Test
    void shouldRegisterAgainWhenHeartbeatAnswersNodeNotFound() throws Exception {
        var forgotten = new AtomicBoolean(true);
        try (var server = new FakeServer(s -> {
            if (s.path().endsWith("/heartbeat") && forgotten.getAndSet(false)) {
                return new FakeServer.Answer(404, Problem.MEDIA_TYPE, NODE_NOT_FOUND);
            }
            return s.path().endsWith("/heartbeat")
                    ? new FakeServer.Answer(200, "application/json", DESIRED_JSON)
                    : new FakeServer.Answer(201, "application/json", NODE_JSON);
        })) {
            var handler = new Recorder();
            try (var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, handler, 1000)) {
                assertTrue(agent.tick());
                assertEquals(List.of("/v1/nodes", "/v1/nodes/n1/heartbeat", "/v1/nodes", "/v1/nodes/n1/heartbeat"),
                        server.seen.stream().map(FakeServer.Seen::path).toList());
                assertEquals(1, handler.applied.size());
            }
        }
    }

    @Test
    void shouldKeepFailureAndNotApplyWhenServerAnswersError() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(403, Problem.MEDIA_TYPE,
                "{\"type\":\"https://rdmablock.io/problems/forbidden\",\"title\":\"Forbidden\",\"status\":403}"))) {
            var handler = new Recorder();
            try (var agent = new NodeAgent(new MgmtClient(server.uri(), "bad"), () -> REG, handler, 1000)) {
                assertFalse(agent.tick());
                assertFalse(agent.registered());
                assertNotNull(agent.lastFailure());
                assertTrue(handler.applied.isEmpty());
            }
        }
    }

    @Test
    void shouldHeartbeatRepeatedlyWhenStarted() throws Exception {
        try (var server = new FakeServer(s -> s.path().endsWith("/heartbeat")
                ? new FakeServer.Answer(200, "application/json", DESIRED_JSON)
                : new FakeServer.Answer(201, "application/json", NODE_JSON))) {
            var threeApplied = new CountDownLatch(3);
            var handler = new Recorder() {
                @Override
                public void apply(HeartbeatResponse desired) {
                    super.apply(desired);
                    threeApplied.countDown();
                }
            };
            try (var agent = new NodeAgent(new MgmtClient(server.uri(), "t"), () -> REG, handler, 10).start()) {
                assertTrue(threeApplied.await(10, TimeUnit.SECONDS), "heartbeats=" + agent.heartbeats());
            }
        }
    }

    @Test
    void shouldRejectIntervalOutOfBounds() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new NodeAgent(new MgmtClient(java.net.URI.create("http://127.0.0.1:1"), "t"), () -> REG,
                        new Recorder(), 5));
        assertEquals("invalid intervalMs: intervalMs=5, min=10, max=600000", e.getMessage());
    }
}
