package io.rdmablock.mgmt.client;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MgmtClientTest {
    private static final String VOLUME_JSON = """
            {"id":"3f1c","name":"vol-1","sizeBytes":1048576,"lbaSize":4096,"replicas":1,"allowedHosts":[],
             "nodeId":"n1","fabricAddress":"127.0.0.1:4420","subnqn":"nqn.2026-11.io.rdmablock:volume:vol-1",
             "nsid":1,"state":"ready","connectedHosts":["nqn.2014-08.org.nvmexpress:uuid:1"],
             "createdAt":"2026-11-29T22:00:00Z","futureField":42}""";

    @Test
    void shouldSendBearerTokenAndJsonBodyOnCreate() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(201, "application/json", VOLUME_JSON))) {
            var client = new MgmtClient(server.uri(), "secret");
            Volume v = client.createVolume(CreateVolumeRequest.of("vol-1", 1 << 20));
            assertEquals("vol-1", v.name());
            assertEquals(VolumeState.READY, v.state());
            assertEquals(List.of("nqn.2014-08.org.nvmexpress:uuid:1"), v.connectedHosts());
            var seen = server.seen.getFirst();
            assertEquals("POST", seen.method());
            assertEquals("/v1/volumes", seen.path());
            assertEquals("Bearer secret", seen.authorization());
            assertEquals("application/json", seen.contentType());
            var sent = Json.read(seen.body(), CreateVolumeRequest.class);
            assertEquals(CreateVolumeRequest.of("vol-1", 1 << 20), sent);
        }
    }

    @Test
    void shouldThrowProblemOfErrorAnswer() throws Exception {
        String problem = """
                {"type":"https://rdmablock.io/problems/volume-in-use","title":"Volume in use","status":409,
                 "detail":"host nqn.x is connected"}""";
        try (var server = new FakeServer(s -> new FakeServer.Answer(409, Problem.MEDIA_TYPE, problem))) {
            var client = new MgmtClient(server.uri(), "secret");
            var e = assertThrows(MgmtException.class, () -> client.deleteVolume("vol-1", false));
            assertEquals(409, e.status());
            assertEquals(ProblemTypes.VOLUME_IN_USE, e.type());
            assertEquals("host nqn.x is connected", e.problem().detail());
            assertEquals("/v1/volumes/vol-1", server.seen.getFirst().path());
        }
    }

    @Test
    void shouldSendForceAsQueryParameter() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(202, "application/json", VOLUME_JSON))) {
            new MgmtClient(server.uri(), "t").deleteVolume("vol-1", true);
            assertEquals("DELETE", server.seen.getFirst().method());
            assertEquals("/v1/volumes/vol-1?force=true", server.seen.getFirst().path());
        }
    }

    @Test
    void shouldTurnNonProblemErrorIntoInternalProblem() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(502, "text/html", "<html>bad gateway"))) {
            var e = assertThrows(MgmtException.class, () -> new MgmtClient(server.uri(), null).listVolumes());
            assertEquals(502, e.status());
            assertEquals(ProblemTypes.INTERNAL, e.type());
            assertTrue(e.problem().detail().contains("bad gateway"), e.problem().detail());
        }
    }

    @Test
    void shouldSendNoAuthorizationWithoutToken() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(200, "application/json", "[]"))) {
            assertEquals(List.of(), new MgmtClient(server.uri(), "").listNodes());
            assertEquals(null, server.seen.getFirst().authorization());
        }
    }

    @Test
    void shouldReportUnavailableWhenNothingListens() throws Exception {
        int port;
        try (var socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        var client = new MgmtClient(URI.create("http://127.0.0.1:" + port + "/"), "t", Duration.ofSeconds(2));
        assertThrows(MgmtUnavailableException.class, client::listVolumes);
        assertFalse(client.health());
    }

    @Test
    void shouldEncodeResizeAsPatchWithSize() throws Exception {
        try (var server = new FakeServer(s -> new FakeServer.Answer(200, "application/json", VOLUME_JSON))) {
            new MgmtClient(server.uri(), "t").resizeVolume("vol-1", 2 << 20);
            var seen = server.seen.getFirst();
            assertEquals("PATCH", seen.method());
            assertEquals(new ResizeVolumeRequest(2 << 20), Json.read(seen.body(), ResizeVolumeRequest.class));
        }
    }

    @Test
    void shouldPostStaleReportAndDecodeCopies() throws Exception {
        String answer = VOLUME_JSON.replace("\"futureField\":42", """
                "epoch":4,"minInSync":1,"copies":[
                 {"nodeId":"n1","role":"primary","state":"in_sync","fabricAddress":"127.0.0.1:4420"},
                 {"nodeId":"n2","role":"secondary","state":"stale","fabricAddress":"127.0.0.1:4421"}]""");
        try (var server = new FakeServer(s -> new FakeServer.Answer(200, "application/json", answer))) {
            Volume v = new MgmtClient(server.uri(), "t").markCopyStale("vol-1", "n2", 3, "n1");
            assertEquals("POST", server.seen.getFirst().method());
            assertEquals("/v1/volumes/vol-1/copies/n2/stale", server.seen.getFirst().path());
            assertEquals(new MarkCopyStaleRequest(3, "n1"),
                    Json.read(server.seen.getFirst().body(), MarkCopyStaleRequest.class));
            assertEquals(4, v.epoch());
            assertEquals(List.of(new VolumeCopy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, "127.0.0.1:4420"),
                    new VolumeCopy("n2", CopyRole.SECONDARY, CopyState.STALE, "127.0.0.1:4421")), v.copies());
            assertEquals(1, v.inSyncCount());
        }
    }

    @Test
    void shouldExposeCurrentEpochOfEpochMismatch() throws Exception {
        String problem = """
                {"type":"https://rdmablock.io/problems/epoch-mismatch","title":"Epoch mismatch","status":409,
                 "detail":"volume vol-1 is at epoch 5, not 3","epoch":5}""";
        try (var server = new FakeServer(s -> new FakeServer.Answer(409, Problem.MEDIA_TYPE, problem))) {
            var e = assertThrows(MgmtException.class,
                    () -> new MgmtClient(server.uri(), "t").markCopyStale("vol-1", "n2", 3, "n1"));
            assertEquals(ProblemTypes.EPOCH_MISMATCH, e.type());
            assertEquals(5L, e.problem().epoch());
        }
    }

    @Test
    void shouldRefuseADesiredVolumeWithoutARoleRatherThanReadItAsPrimary() {
        String json = Json.write(DesiredVolume.builder("v1", "a").role(CopyRole.SECONDARY).build())
                .replace("\"role\":\"secondary\",", "");
        assertFalse(json.contains("\"role\""), json);
        assertThrows(RuntimeException.class, () -> Json.read(json, DesiredVolume.class));
    }

    @Test
    void shouldRoundTripDesiredVolumeWithCopies() {
        var dv = new DesiredVolume("v1", "a", 1 << 20, 4096, List.of(), Volume.subnqnOf("a"), VolumeState.READY, true,
                7, CopyRole.SECONDARY, 2, List.of(
                new DesiredCopy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, "10.0.0.1:4420", Node.hostnqnOf("n1")),
                new DesiredCopy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, "10.0.0.2:4420", Node.hostnqnOf("n2"))),
                null, null, false);
        assertEquals(dv, Json.read(Json.write(dv), DesiredVolume.class));
        assertTrue(Json.write(dv).contains("\"role\":\"secondary\""), Json.write(dv));
        assertTrue(Json.write(dv).contains("\"hostnqn\":\"nqn.2026-11.io.rdmablock:node:n1\""), Json.write(dv));
    }
}
