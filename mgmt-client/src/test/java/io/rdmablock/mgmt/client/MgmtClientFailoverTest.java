package io.rdmablock.mgmt.client;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MgmtClient} with several management URLs (docs/ha.md), against fake servers on loopback. */
class MgmtClientFailoverTest {
    private static final String VOLUME_JSON = """
            {"id":"3f1c","name":"vol-1","sizeBytes":1048576,"lbaSize":4096,"replicas":1,"allowedHosts":[],
             "nodeId":"n1","fabricAddress":"127.0.0.1:4420","subnqn":"nqn.2026-11.io.rdmablock:volume:vol-1",
             "nsid":1,"state":"ready","connectedHosts":[],"createdAt":"2026-11-29T22:00:00Z"}""";
    private static final String NO_LEADER = """
            {"type":"https://rdmablock.io/problems/no-leader","title":"No leader","status":503,
             "detail":"no management server is leader now"}""";

    private static URI deadUri() throws Exception {
        try (var socket = new ServerSocket(0)) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }
    }

    private static FakeServer.Answer volume() {
        return new FakeServer.Answer(201, "application/json", VOLUME_JSON);
    }

    private static FakeServer.Answer redirectTo(FakeServer leader, String path) {
        String body = "{\"type\":\"" + ProblemTypes.NOT_LEADER + "\",\"title\":\"not the leader\",\"status\":307,"
                + "\"detail\":\"d\",\"leader\":\"" + leader.uri() + "\"}";
        return new FakeServer.Answer(307, Problem.MEDIA_TYPE, body, Map.of("Location", leader.uri() + path));
    }

    private static MgmtClient client(List<URI> uris, Duration timeout) {
        return new MgmtClient(uris, "secret", timeout, null);
    }

    @Test
    void shouldTryNextUrlWhenFirstRefusesConnections() throws Exception {
        URI dead = deadUri();
        try (var second = new FakeServer(s -> volume())) {
            var client = client(List.of(dead, second.uri()), Duration.ofSeconds(5));
            assertEquals(dead, client.baseUri());
            assertEquals("vol-1", client.createVolume(CreateVolumeRequest.of("vol-1", 1 << 20)).name());
            assertEquals(second.uri(), client.baseUri());
            client.getVolume("vol-1");
            assertEquals(2, second.seen.size());
        }
    }

    @Test
    void shouldFollowRedirectWithBodyAndGoStraightToLeaderNext() throws Exception {
        try (var leader = new FakeServer(s -> volume());
             var follower = new FakeServer(s -> redirectTo(leader, s.path()))) {
            var client = client(List.of(follower.uri(), leader.uri()), Duration.ofSeconds(5));
            client.createVolume(CreateVolumeRequest.of("vol-1", 1 << 20));
            assertEquals(1, follower.seen.size());
            assertEquals(1, leader.seen.size());
            var landed = leader.seen.getFirst();
            assertEquals("POST", landed.method());
            assertEquals("/v1/volumes", landed.path());
            assertEquals("Bearer secret", landed.authorization());
            assertEquals("application/json", landed.contentType());
            assertEquals(CreateVolumeRequest.of("vol-1", 1 << 20), Json.read(landed.body(), CreateVolumeRequest.class));
            assertEquals(leader.uri(), client.baseUri());

            client.deleteVolume("vol-1", true);
            assertEquals(1, follower.seen.size(), "the second call goes straight to the leader");
            assertEquals("/v1/volumes/vol-1?force=true", leader.seen.get(1).path());
        }
    }

    @Test
    void shouldTryNextUrlOnNoLeader() throws Exception {
        try (var electing = new FakeServer(s -> new FakeServer.Answer(503, Problem.MEDIA_TYPE, NO_LEADER,
                     Map.of("Retry-After", "1")));
             var leader = new FakeServer(s -> volume())) {
            var client = client(List.of(electing.uri(), leader.uri()), Duration.ofSeconds(5));
            client.createVolume(CreateVolumeRequest.of("vol-1", 1 << 20));
            assertEquals(1, electing.seen.size());
            assertEquals(1, leader.seen.size());
            assertEquals(leader.uri(), client.baseUri());
        }
    }

    @Test
    void shouldAnswerNoLeaderProblemNamingEveryUrlWhenNoServerHasALeader() throws Exception {
        try (var a = new FakeServer(s -> new FakeServer.Answer(503, Problem.MEDIA_TYPE, NO_LEADER));
             var b = new FakeServer(s -> new FakeServer.Answer(503, Problem.MEDIA_TYPE, NO_LEADER))) {
            var client = client(List.of(a.uri(), b.uri()), Duration.ofSeconds(5));
            var e = assertThrows(MgmtException.class, () -> client.createVolume(CreateVolumeRequest.of("v", 1 << 20)));
            assertEquals(503, e.status());
            assertEquals(ProblemTypes.NO_LEADER, e.type());
            assertTrue(e.problem().detail().contains(a.uri().toString())
                    && e.problem().detail().contains(b.uri().toString()), e.problem().detail());
            assertEquals(1, a.seen.size());
            assertEquals(1, b.seen.size());
        }
    }

    @Test
    void shouldNameEveryUrlWhenAllAreDown() throws Exception {
        URI first = deadUri();
        URI second = deadUri();
        var client = client(List.of(first, second), Duration.ofSeconds(5));
        var e = assertThrows(MgmtUnavailableException.class, client::listVolumes);
        assertTrue(e.getMessage().contains(first.toString()) && e.getMessage().contains(second.toString()),
                e.getMessage());
        assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
        assertTrue(!client.health());
    }

    @Test
    void shouldRefuseRedirectToForeignHostWithoutSendingToken() throws Exception {
        try (var foreign = new FakeServer(s -> volume());
             var follower = new FakeServer(s -> redirectTo(foreign, s.path()));
             var other = new FakeServer(s -> volume())) {
            var client = client(List.of(follower.uri(), other.uri()), Duration.ofSeconds(5));
            var e = assertThrows(MgmtException.class, () -> client.createVolume(CreateVolumeRequest.of("v", 1 << 20)));
            assertEquals(ProblemTypes.NOT_LEADER, e.type());
            assertTrue(e.problem().detail().contains(foreign.uri().toString()), e.problem().detail());
            assertEquals(0, foreign.seen.size(), "nothing, so no token, went to the foreign host");
            assertEquals(0, other.seen.size(), "a refused redirect is not retried elsewhere");
        }
    }

    @Test
    void shouldMatchRedirectByHostNameNotAddress() throws Exception {
        try (var leader = new FakeServer(s -> volume());
             var follower = new FakeServer(s -> new FakeServer.Answer(307, Problem.MEDIA_TYPE, "{}",
                     Map.of("Location", "http://localhost:" + leader.uri().getPort() + s.path())))) {
            var client = client(List.of(follower.uri(), leader.uri()), Duration.ofSeconds(5));
            assertThrows(MgmtException.class, () -> client.createVolume(CreateVolumeRequest.of("v", 1 << 20)));
            assertEquals(0, leader.seen.size());
        }
    }

    @Test
    void shouldFollowOnlyOneRedirect() throws Exception {
        try (var b = new FakeServer(s -> new FakeServer.Answer(307, Problem.MEDIA_TYPE, "{}", Map.of("Location",
                     "http://127.0.0.1:1" + s.path())));
             var a = new FakeServer(s -> redirectTo(b, s.path()))) {
            // b redirects again (to a URL that is not even configured): not followed; a and b tried once each
            var client = client(List.of(a.uri(), b.uri()), Duration.ofSeconds(5));
            var e = assertThrows(MgmtUnavailableException.class,
                    () -> client.createVolume(CreateVolumeRequest.of("v", 1 << 20)));
            assertTrue(e.getMessage().contains("only one is followed"), e.getMessage());
            assertEquals(1, a.seen.size());
            assertEquals(1, b.seen.size());
        }
    }

    @Test
    void shouldReportALeaderKilledUnderItsFollowersAsUnavailable() throws Exception {
        // the campaign's mgmt-leader-kill: the followers still redirect to the dead leader until its key expires;
        // the call must end retriable (unavailable), not as a 307 error
        URI dead = deadUri();
        try (var f1 = new FakeServer(s -> new FakeServer.Answer(307, Problem.MEDIA_TYPE, "{}",
                Map.of("Location", dead + s.path())));
             var f2 = new FakeServer(s -> new FakeServer.Answer(307, Problem.MEDIA_TYPE, "{}",
                     Map.of("Location", dead + s.path())))) {
            var client = client(List.of(dead, f1.uri(), f2.uri()), Duration.ofSeconds(5));
            var e = assertThrows(MgmtUnavailableException.class,
                    () -> client.createVolume(CreateVolumeRequest.of("v", 1 << 20)));
            assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
            assertEquals(1, f1.seen.size());
            assertEquals(1, f2.seen.size());
        }
    }

    @Test
    void shouldMoveOnFromServerThatDoesNotAnswerWithinItsShare() throws Exception {
        try (var hung = new FakeServer(s -> {
                 try {
                     // a wait by design: the scenario is a server that holds its answer past the call's timeout
                     Thread.sleep(5_000);
                 } catch (InterruptedException e) {
                     Thread.currentThread().interrupt();
                 }
                 return volume();
             });
             var leader = new FakeServer(s -> volume())) {
            var client = client(List.of(hung.uri(), leader.uri()), Duration.ofSeconds(2));
            long t0 = System.nanoTime();
            client.createVolume(CreateVolumeRequest.of("vol-1", 1 << 20));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            // the hung server holds its answer 5 s; the call's own timeout is 2 s (slack for a loaded machine)
            assertTrue(ms < 4_000, "whole call about within its 2 s timeout, took " + ms + " ms");
            assertEquals(1, hung.seen.size());
            assertEquals(leader.uri(), client.baseUri());
        }
    }

    @Test
    void shouldKeepSingleUrlErrorsAsBefore() throws Exception {
        try (var only = new FakeServer(s -> new FakeServer.Answer(503, Problem.MEDIA_TYPE, NO_LEADER))) {
            var e = assertThrows(MgmtException.class, () -> new MgmtClient(only.uri(), "t").listNodes());
            assertEquals("no management server is leader now", e.problem().detail());
        }
        URI dead = deadUri();
        var e = assertThrows(MgmtUnavailableException.class,
                () -> new MgmtClient(dead, "t", Duration.ofSeconds(2)).listNodes());
        assertTrue(e.getMessage().startsWith("GET " + dead + "/v1/nodes failed"), e.getMessage());
    }

    @Test
    void shouldParseCommaSeparatedListAndNameBadElement() {
        assertEquals(List.of(URI.create("http://a:1"), URI.create("https://b:2/")),
                MgmtClient.parseUrls("--mgmt-url", "http://a:1, https://b:2/"));
        var e = assertThrows(IllegalArgumentException.class,
                () -> MgmtClient.parseUrls("--mgmt-url", "http://a:1,ftp://b:2"));
        assertTrue(e.getMessage().startsWith("invalid --mgmt-url: element 2 \"ftp://b:2\""), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MgmtClient.parseUrls("--mgmt-url", "http://a:1,"));
        assertTrue(e.getMessage().contains("element 2 \"\"") && e.getMessage().contains("is empty"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MgmtClient.parseUrls("RDMABLOCK_MGMT_URL", "http://a:1,http://a:1"));
        assertTrue(e.getMessage().contains("RDMABLOCK_MGMT_URL") && e.getMessage().contains("twice"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new MgmtClient(List.of(), "t", Duration.ofSeconds(1), null));
    }
}
