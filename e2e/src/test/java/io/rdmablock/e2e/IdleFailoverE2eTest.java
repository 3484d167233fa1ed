package io.rdmablock.e2e;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover without rdmablock's initiator (issue 33): an R=3 volume no host uses. While its primary lives it renews
 * its peer lease on an association of its own and no copy reports it; after kill -9 of its node no host reports
 * anything: the secondaries, which heard no renewal for a lease, say so in their heartbeats (docs/failover.md, "a
 * secondary's report"), and the management plane promotes one once the primary's lease lapsed. Before, such a volume
 * stayed unavailable until the rebuild rule fired (10 min).
 */
class IdleFailoverE2eTest {
    private static final long SIZE = 16L << 20;
    private static final long LEASE_MS = 2_000;

    @TempDir
    Path dir;

    private static String primary(Volume v) {
        return v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst().orElseThrow().nodeId();
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aKilledPrimaryOfAVolumeNoHostUsesIsReplacedOnTheSecondariesReports() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 3, "soft", List.of("--replica-timeout-ms", "3000"),
                NodeCluster.Placement.loopback(), 6_000, LEASE_MS)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("idle", SIZE, 3).withAnyHost());
            Volume v = cluster.awaitVolume("idle", x -> x.state() == VolumeState.READY
                    && x.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 120, "3 in-sync copies");
            String old = primary(v);
            // a healthy primary that no host uses renews its peer lease on its own association: no copy reports it
            Thread.sleep(3 * LEASE_MS); // proves no report over 3 leases: nothing marks a report's absence
            String quiet = cluster.tails(100_000);
            assertTrue(!quiet.contains("renewed no peer lease here"), "a live idle primary was reported" + quiet);
            assertEquals(v.epoch(), cluster.client().getVolume("idle").epoch(), "no promotion while it lives");
            long t0 = System.nanoTime();
            cluster.kill(NodeCluster.index(old));
            Volume after = cluster.awaitVolume("idle", x -> !primary(x).equals(old), 60,
                    "a new primary without any host report");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertNotEquals(old, primary(after));
            assertTrue(after.epoch() > v.epoch(), () -> "epoch not raised: " + after);
            assertEquals(CopyState.STALE, after.copies().stream().filter(c -> c.nodeId().equals(old)).findFirst()
                    .orElseThrow().state(), () -> "the old primary is a stale copy now: " + after);
            String logs = cluster.tails(60);
            assertTrue(logs.contains("renewed no peer lease here"), "a secondary reported the silence" + logs);
            System.out.printf("idle failover: primary %s killed, new primary %s named after %d ms (lease %d ms, "
                    + "target lease + 2 s = %d ms)%n", old, primary(after), ms, LEASE_MS, LEASE_MS + 2_000);
        }
    }
}
