package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.BackgroundInEffect;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A node's background budget set live from the management plane (docs/qos.md, "Background budget"), end to end as
 * {@link QosE2eTest} does for a volume's limits: management server, 2 node processes, a replicated volume, the
 * initiator (soft provider). The primary's budget is set to a fixed 8 MiB/s, a secondary is stopped, the whole
 * volume written, the secondary started: its full resync runs at ~8 MiB/s; then {@code PATCH} the primary's node to
 * 1 MiB/s and the resync's rate, measured on the primary's {@code rdmablock_node_resync_bytes_total} from 1 s after
 * the PATCH, drops to ~1 MiB/s; the node reports the new bounds in effect; {@code null} (start-up values, 40 MiB/s)
 * lets it finish.
 */
class BackgroundBudgetE2eTest {
    private static final long SIZE = 64L << 20;
    private static final long MIB = 1L << 20;
    private static final String RESYNC = "rdmablock_node_resync_bytes_total";
    @TempDir
    Path dir;

    private static int primary(Volume v) {
        return NodeCluster.index(v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .orElseThrow().nodeId());
    }

    private static CopyState stateOf(Volume v, int k) {
        return v.copies().stream().filter(c -> c.nodeId().equals(NodeCluster.nodeId(k))).map(c -> c.state())
                .findFirst().orElse(null);
    }

    /** Bytes/s the primary's resync copied over {@code ms} (time passing is the point). */
    private static double resyncRate(NodeCluster cluster, int node, long ms) throws InterruptedException {
        double before = cluster.metric(node, RESYNC);
        long t0 = System.nanoTime();
        Thread.sleep(ms);
        double after = cluster.metric(node, RESYNC);
        return (after - Math.max(0, before)) / ((System.nanoTime() - t0) / 1e9);
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void aResyncSlowsWithinASecondWhenItsNodesBudgetIsLoweredLive() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, List.of())) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("bg", SIZE, 2).withAnyHost());
            Volume v = cluster.awaitVolume("bg", x -> x.state() == VolumeState.READY
                    && x.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 240, "2 in-sync copies");
            int p = primary(v);
            int s = p == 1 ? 2 : 1;
            String pid = NodeCluster.nodeId(p);
            cluster.client().setNodeBackground(pid, new NodeBackground(8, 8));
            DeviceOptions opts = DeviceOptions.defaults().providerMode("soft").ioQueues(2).pathTimeoutMs(1_000)
                    .failoverTimeoutMs(30_000);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "bg", null, opts)) {
                cluster.stop(s);
                MemorySegment big = dev.allocateBuffer(MIB);
                for (long off = 0; off < SIZE; off += MIB) { // every region dirty: the resync is full
                    dev.writeSync(off, big, false);
                }
                dev.freeBuffer(big);
            }
            BackgroundInEffect at8 = cluster.client().getNode(pid).backgroundInEffect();
            assertEquals(new BackgroundInEffect(8 * MIB, 8 * MIB, 8 * MIB), at8, "the node reports the setting");
            cluster.start(s);
            cluster.awaitVolume("bg", x -> stateOf(x, s) == CopyState.SYNCING, 60, "resync running");
            Thread.sleep(300); // the walk under way
            double fast = resyncRate(cluster, p, 2_000);

            cluster.client().setNodeBackground(pid, new NodeBackground(1, 1));
            Thread.sleep(1_000); // the node has it at its next heartbeat (500 ms)
            double slow = resyncRate(cluster, p, 3_000);
            BackgroundInEffect at1 = cluster.client().getNode(pid).backgroundInEffect();
            Volume during = cluster.client().getVolume("bg");
            System.out.printf("background budget e2e: resync %.2f MiB/s at a fixed 8 MiB/s, %.2f MiB/s from 1 s "
                    + "after the PATCH to 1 MiB/s; in effect then: %s%n", fast / MIB, slow / MIB, at1);
            assertTrue(fast >= 4 * MIB && fast <= 10 * MIB, () -> "8 MiB/s fixed: " + fast / MIB + " MiB/s"
                    + cluster.tails(20));
            assertEquals(CopyState.SYNCING, stateOf(during, s), "still resyncing while measured");
            assertTrue(slow <= 1.5 * MIB, () -> "1 MiB/s from 1 s after the PATCH: " + slow / MIB + " MiB/s (was "
                    + fast / MIB + ")" + cluster.tails(20));
            assertTrue(slow > 0, "still progressing: " + slow);
            assertEquals(MIB, at1.ceilingBytesPerSec(), "the node reports the new ceiling: " + at1);
            assertEquals(MIB, at1.floorBytesPerSec(), "and floor: " + at1);

            cluster.client().setNodeBackground(pid, null); // the start-up values (40 MiB/s): it finishes
            cluster.awaitVolume("bg", x -> stateOf(x, s) == CopyState.IN_SYNC, 120, "resynced");
            BackgroundInEffect back = cluster.client().getNode(pid).backgroundInEffect();
            assertEquals(40 * MIB, back.ceilingBytesPerSec(), "start-up ceiling again: " + back);
        }
    }
}
