package io.rdmablock.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Leader;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock status} against a real management server (RocksDB, in process); the test plays the nodes with
 * registrations and heartbeats, as {@link VolumeResyncCliTest} does.
 */
class StatusCommandTest {
    private static final String TOKEN = "status-test-token";
    private static final long MIB = 1L << 20;
    /** Node timeout of the degraded cluster: n3 stops beating and is down after this, ms. */
    private static final long NODE_TIMEOUT_MS = 3_000;
    @TempDir
    Path dir;
    private MgmtServer server;
    private MgmtClient client;
    private Volume volume;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** n1 (1 GiB), n2 (2 GiB) and, when {@code third}, n3 (512 MiB); volume a with 2 copies on n2 (primary), n1. */
    private void cluster(long nodeTimeoutMs, boolean third) {
        server = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, nodeTimeoutMs);
        client = new MgmtClient(URI.create(server.url()), TOKEN);
        client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        client.registerNode(new RegisterNodeRequest("n2", "127.0.0.1:4421", "", 2L << 30, 2L << 30));
        if (third) {
            client.registerNode(new RegisterNodeRequest("n3", "127.0.0.1:4422", "", 512 * MIB, 512 * MIB));
        }
        volume = client.createVolume(new CreateVolumeRequest("a", 4 * MIB, 4096, 2, 1, List.of("*")));
        assertEquals("n2", volume.nodeId());
        beat("n1", List.of());
        beat("n2", List.of());
    }

    private void beat(String node, List<ResyncProgress> resyncs) {
        client.heartbeat(node, new HeartbeatRequest(1L << 30, List.of(new VolumeReport(volume.id(), 4 * MIB,
                VolumeState.READY, List.of(), resyncs, null))));
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + 5];
        all[0] = "status";
        System.arraycopy(args, 0, all, 1, args.length);
        System.arraycopy(new String[] {"--mgmt-url", server.url(), "--token", TOKEN}, 0, all, args.length + 1, 4);
        return CliRun.of(all);
    }

    @Test
    void shouldReportAHealthyClusterAndExitZero() throws Exception {
        cluster(60_000, false);
        var r = run();
        assertEquals(ExitCodes.OK, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("health    HEALTH_OK"), r.out());
        assertTrue(r.out().contains("leader    " + server.url() + " (answered by " + server.url() + ", the leader)"),
                r.out());
        assertTrue(r.out().contains("metadata  local, reachable"), r.out());
        assertTrue(r.out().contains("nodes     2 total: 2 up, 0 down, 0 draining"), r.out());
        assertTrue(r.out().contains("volumes   1 total: 0 creating, 1 ready, 0 deleting, 0 unavailable, 0 degraded"),
                r.out());
        assertFalse(r.out().contains("not up"), r.out());
        assertFalse(r.out().contains("copies not in sync"), r.out());
        assertFalse(r.out().contains("resyncs running"), r.out());

        var j = run("-o", "json");
        assertEquals(ExitCodes.OK, j.exitCode(), j.out() + j.err());
        JsonNode s = Json.MAPPER.readTree(j.out());
        assertEquals("HEALTH_OK", s.get("health").asText(), j.out());
        assertEquals(0, s.get("problems").size(), j.out());
        assertEquals(server.url(), s.get("answeredBy").asText());
        assertEquals(server.url(), s.get("leader").get("leader").asText());
        assertTrue(s.get("leader").get("isLeader").asBoolean(), j.out());
        assertEquals("local", s.get("leader").get("metadataStore").get("kind").asText(), j.out());
        assertTrue(s.get("leader").get("metadataStore").get("reachable").asBoolean(), j.out());
        assertEquals(2, s.get("nodes").get("total").asInt());
        assertEquals(2, s.get("nodes").get("byState").get("up").asInt());
        assertEquals(1, s.get("volumes").get("byState").get("ready").asInt());
        assertEquals(0, s.get("copiesNotInSync").size());
        assertEquals(0, s.get("exitCode").asInt());
    }

    @Test
    void shouldReportANodeDownAndACopyResyncingAndExitDegraded() throws Exception {
        cluster(NODE_TIMEOUT_MS, true);
        client.markCopyStale("a", "n1", 1, "n2");
        client.markCopySyncing("a", "n1", 2, "n2");
        beat("n2", List.of(new ResyncProgress("n1", true, MIB, 4 * MIB, MIB)));
        // n3 stops beating; n1 and n2 go on until the server calls n3 down
        Await.value(() -> {
            beat("n1", List.of());
            beat("n2", List.of(new ResyncProgress("n1", true, MIB, 4 * MIB, MIB)));
            return client.listNodes().stream().filter(n -> n.nodeId().equals("n3")).findFirst().orElseThrow();
        }, n -> n.state() == NodeState.DOWN, Duration.ofSeconds(30), "n3 down");

        var r = run();
        assertEquals(ExitCodes.DEGRADED, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("health    HEALTH_DEGRADED"), r.out());
        assertTrue(r.out().contains("1 node(s) down: n3"), r.out());
        assertTrue(r.out().contains("1 volume(s) not ready: a (degraded)"), r.out());
        assertTrue(r.out().contains("1 copy(ies) not in sync, 1 resync(s) running"), r.out());
        assertTrue(r.out().contains("nodes     3 total: 2 up, 1 down, 0 draining"), r.out());
        assertTrue(r.out().contains("not up    n3 (down)"), r.out());
        assertTrue(r.out().contains("1 total: 0 creating, 0 ready, 0 deleting, 0 unavailable, 1 degraded"), r.out());
        assertTrue(r.out().contains("copies not in sync:\nVOLUME  NODE  ROLE       STATE\na       n1    secondary  "
                + "syncing"), r.out());
        assertTrue(r.out().contains("resyncs running:"), r.out());
        assertTrue(r.out().contains("a       n1    [#####---------------] 25% 1 MiB/4 MiB"), r.out());

        var j = run("-o", "json");
        assertEquals(ExitCodes.DEGRADED, j.exitCode(), j.out() + j.err());
        JsonNode s = Json.MAPPER.readTree(j.out());
        assertEquals("HEALTH_DEGRADED", s.get("health").asText());
        assertEquals(3, s.get("problems").size(), j.out());
        assertEquals(1, s.get("nodes").get("byState").get("down").asInt());
        assertEquals("n3", s.get("nodes").get("notUp").get(0).get("node").asText());
        assertEquals("down", s.get("nodes").get("notUp").get(0).get("state").asText());
        assertEquals(1, s.get("volumes").get("byState").get("degraded").asInt());
        JsonNode copy = s.get("copiesNotInSync").get(0);
        assertEquals("a/n1/secondary/syncing", copy.get("volume").asText() + "/" + copy.get("node").asText() + "/"
                + copy.get("role").asText() + "/" + copy.get("state").asText());
        JsonNode resync = s.get("resyncs").get(0);
        assertEquals("n1", resync.get("node").asText());
        assertEquals(MIB, resync.get("syncedBytes").asLong());
        assertEquals(4 * MIB, resync.get("totalBytes").asLong());
        assertEquals(ExitCodes.DEGRADED, s.get("exitCode").asInt());
    }

    @Test
    void shouldNameTheUrlAndExitThreeWhenTheServerIsUnreachable() {
        String url = "http://127.0.0.1:1";
        var r = CliRun.of("status", "--mgmt-url", url, "--token", TOKEN, "--timeout-ms", "2000");
        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode(), r.out() + r.err());
        assertEquals("", r.out());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().startsWith("rdmablock: management server unavailable"), r.err());
        assertTrue(r.err().contains(url), r.err());

        var j = CliRun.of("status", "-o", "json", "--mgmt-url", url, "--token", TOKEN, "--timeout-ms", "2000");
        assertEquals(ExitCodes.UNAVAILABLE, j.exitCode(), j.err());
        assertTrue(j.err().contains("\"exitCode\" : 3") || j.err().contains("\"exitCode\": 3"), j.err());
    }

    @Test
    void shouldDocumentTheExitCodesInItsHelp() {
        var r = CliRun.of("status", "--help");
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains("Exit codes: 0 healthy; " + ExitCodes.DEGRADED + " degraded"), r.out());
        assertTrue(help.contains(ExitCodes.UNAVAILABLE + " management server unreachable"), r.out());
        var root = CliRun.of("--help");
        assertTrue(java.util.regex.Pattern.compile("(?m)^\\s+status\\s+Show the cluster on one screen")
                .matcher(root.out()).find(), root.out());
    }

    @Test
    void shouldCallNoLeaderAndAnUnreachableStoreDegraded() {
        List<Node> nodes = List.of(new Node("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30, NodeState.UP,
                "2026-12-07T00:00:00Z"), new Node("n2", "127.0.0.1:4421", "", 1L << 30, 1L << 30, NodeState.DRAINING,
                "2026-12-07T00:00:00Z"));
        var healthy = StatusCommand.summarize("http://m1:8080", new Leader("http://m2:8080", "http://m1:8080", false,
                new Leader.MetadataStoreHealth("etcd", true, null)), nodes, List.of());
        assertEquals(StatusCommand.HEALTH_OK, healthy.get("health"), healthy.toString()); // draining is not degraded
        assertEquals(1, ((List<?>) ((Map<?, ?>) healthy.get("nodes")).get("notUp")).size());

        var degraded = StatusCommand.summarize("http://m1:8080", new Leader(null, "http://m1:8080", false,
                new Leader.MetadataStoreHealth("etcd", false, "etcd timed out")), nodes, List.of());
        assertEquals(StatusCommand.HEALTH_DEGRADED, degraded.get("health"));
        var problems = (List<?>) degraded.get("problems");
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).toString().startsWith("no management leader known"), problems.toString());
        assertEquals("metadata store (etcd) unreachable from http://m1:8080: etcd timed out", problems.get(1));
    }
}
