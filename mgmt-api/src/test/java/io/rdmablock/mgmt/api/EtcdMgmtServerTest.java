package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.http.MgmtVerticle;
import io.rdmablock.mgmt.api.store.EtcdCluster;
import io.rdmablock.mgmt.api.store.EtcdMetadataStore;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two management servers on one etcd (MgmtServer with an {@link EtcdMetadataStore}): what one writes the other reads;
 * with etcd down a write is answered within the store's bound (an error, not a hang). One of them leads; a client of
 * the other follows its 307; the follower's metrics say it follows ({@code rdmablock_mgmt_leader 0}).
 */
class EtcdMgmtServerTest {
    @Test
    void shouldShareMetadataBetweenServers(@TempDir Path dir) throws Exception {
        EtcdCluster.assumeAvailable();
        try (var etcd = EtcdCluster.start(dir, 1)) {
            var config = new EtcdMetadataStore.Config(etcd.endpoints(), "/rdmablock-test/" + UUID.randomUUID() + "/",
                    Duration.ofSeconds(2));
            try (var first = MgmtServer.start(dir.resolve("a"), config, "127.0.0.1", 0, "tok", 5_000,
                    ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS);
                 var second = MgmtServer.start(dir.resolve("b"), config, "127.0.0.1", 0, "tok", 5_000,
                         ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
                MgmtServer leader = awaitLeader(first, second);
                MgmtServer follower = leader == first ? second : first;
                var a = new MgmtClient(URI.create(leader.url()), "tok", Duration.ofSeconds(40));
                var b = new MgmtClient(URI.create(follower.url()), "tok");
                a.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
                a.createVolume(io.rdmablock.mgmt.client.CreateVolumeRequest.of("shared", 1L << 20));
                assertEquals("shared", b.getVolume("shared").name(), "a stored record, read on the follower");
                // node liveness is the leader's runtime state: the follower redirects, a client with both URLs follows
                var both = new MgmtClient(MgmtClient.parseUrls("urls", follower.url() + "," + leader.url()), "tok",
                        Duration.ofSeconds(10), null);
                assertEquals(List.of("n1"), both.listNodes().stream().map(n -> n.nodeId()).toList());
                // the follower's metrics: every node down (it gets no heartbeats), marked by rdmablock_mgmt_leader 0,
                // which dashboards and alerts filter on (ops/grafana/README.md, "Leader filter")
                String leaderMetrics = metrics(leader);
                String followerMetrics = metrics(follower);
                assertTrue(leaderMetrics.contains("\nrdmablock_mgmt_leader 1.0\n"), leaderMetrics);
                assertTrue(leaderMetrics.contains("\nrdmablock_node_state{node=\"n1\",state="), leaderMetrics);
                assertTrue(followerMetrics.contains("\nrdmablock_mgmt_leader 0.0\n"), followerMetrics);
                assertTrue(followerMetrics.contains("\nrdmablock_node_state{node=\"n1\",state=\"down\"} 1.0\n"),
                        followerMetrics);
            }
        }
    }

    /**
     * With the only etcd member stopped, a node registration is answered 503 within a bound (the store's calls are
     * bounded at 2 s each, EtcdMetadataStoreQuorumTest; no lock of the cluster service is held across a store call,
     * so the request does not queue behind the sweep): metadata-unavailable while the lease still runs, no-leader
     * once it ran out.
     */
    @Test
    void shouldAnswer503BoundedWhenEtcdIsDown(@TempDir Path dir) throws Exception {
        EtcdCluster.assumeAvailable();
        try (var etcd = EtcdCluster.start(dir, 1)) {
            var config = new EtcdMetadataStore.Config(etcd.endpoints(), "/rdmablock-test/" + UUID.randomUUID() + "/",
                    Duration.ofSeconds(2));
            try (var first = MgmtServer.start(dir.resolve("a"), config, "127.0.0.1", 0, "tok", 5_000,
                    ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
                awaitLeader(first);
                // the client waits longer than the server's bound: the answer must come from the server (503)
                var a = new MgmtClient(URI.create(first.url()), "tok", Duration.ofSeconds(40));
                a.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
                etcd.stop(0);
                long start = System.nanoTime();
                var e = assertThrows(MgmtException.class, () -> a.registerNode(
                        new RegisterNodeRequest("n2", "127.0.0.1:4421", "", 1L << 30, 1L << 30)));
                long ms = (System.nanoTime() - start) / 1_000_000;
                System.out.println("EtcdMgmtServerTest: with etcd down a node registration was answered "
                        + e.status() + " after " + ms + " ms: " + e.getMessage());
                assertEquals(503, e.status(), () -> "status " + e.status() + ": " + e.getMessage());
                assertTrue(ProblemTypes.METADATA_UNAVAILABLE.equals(e.type()) || ProblemTypes.NO_LEADER.equals(e.type()),
                        e.type() + ": " + e.getMessage());
                // a few store calls of 2 s each (one request makes several); bounded, not a hang
                assertTrue(ms < 30_000, ms + " ms");
            }
        }
    }

    /** @return the server's {@code GET /metrics} (open, no token) */
    private static String metrics(MgmtServer server) throws Exception {
        try (var http = java.net.http.HttpClient.newHttpClient()) {
            var r = http.send(java.net.http.HttpRequest.newBuilder(URI.create(server.url() + "/metrics"))
                    .timeout(Duration.ofSeconds(20)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            return r.body();
        }
    }

    /** @return the one of {@code servers} that leads, waiting up to 20 s for an election */
    static MgmtServer awaitLeader(MgmtServer... servers) {
        return Await.value(() -> Arrays.stream(servers).filter(s -> s.leaderView().isLeader()).findFirst(),
                Optional::isPresent, Duration.ofSeconds(20), "a leader among " + servers.length
                        + " management servers").orElseThrow();
    }
}
