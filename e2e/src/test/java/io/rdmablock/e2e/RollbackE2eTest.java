package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Rollback through the management API on a real node (docs/snapshots.md, "Rollback"): write A, snapshot, write B,
 * roll back, read A through the initiator; refused (409) while a host is connected, done with force (the host is
 * disconnected); then write C, and C stays across further heartbeats and a node restart (the rollback is not applied
 * again).
 */
class RollbackE2eTest {
    private static final long SIZE = 64L << 20;
    private static final long WRITTEN = 4L << 20;
    private static final long REGION = 1L << 20;
    private static final String VOL = "rb";

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldRollBackEveryCopyOnceAndServeTheSnapshotsContent() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 1, List.of())) {
            cluster.client().createVolume(CreateVolumeRequest.of(VOL, SIZE).withAnyHost());
            cluster.awaitVolume(VOL, x -> x.state() == VolumeState.READY, 60, "volume ready");
            DeviceOptions o = DeviceOptions.defaults().providerMode("soft").ioQueues(1);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), VOL, null, o)) {
                write(dev, 1);
            }
            cluster.client().createSnapshot(VOL, "a");
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), VOL, null, o)) {
                write(dev, 2);
                assertEquals(null, check(dev, 2));
                cluster.awaitVolume(VOL, x -> !x.connectedHosts().isEmpty(), 30, "host reported connected");
                MgmtException inUse = assertThrows(MgmtException.class,
                        () -> cluster.client().rollback(VOL, "a", false));
                assertEquals(409, inUse.status(), inUse.getMessage());
                assertNull(cluster.client().getVolume(VOL).rollback(), "nothing recorded on a refusal");
                Volume done = cluster.client().rollback(VOL, "a", true); // disconnects the host
                if (done.rollback() != null) {
                    cluster.awaitVolume(VOL, x -> x.rollback() == null, 60, "rollback done on every copy");
                }
            } catch (RuntimeException e) {
                // the device was disconnected under it by the forced rollback: its close may complain
            }
            cluster.awaitVolume(VOL, x -> x.state() == VolumeState.READY && x.rollback() == null, 60,
                    "volume ready after the rollback");
            String afterRollback = Await.value(() -> read(cluster, o, 1), x -> x == null, Duration.ofSeconds(30),
                    "the snapshot's content served (hosts admitted again)");
            assertEquals(null, afterRollback);

            try (BlockDevice dev = VolumeLocator.open(cluster.client(), VOL, null, o)) {
                write(dev, 3);
            }
            Thread.sleep(3_000); // a few heartbeats: nothing rolls the volume back again
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), VOL, null, o)) {
                assertEquals(null, check(dev, 3), "later writes kept");
            }
            int node = NodeCluster.index(cluster.client().getVolume(VOL).copies().getFirst().nodeId());
            cluster.kill(node);
            cluster.start(node);
            cluster.awaitVolume(VOL, x -> x.state() == VolumeState.READY, 60, "volume ready after the restart");
            String afterRestart = Await.value(() -> read(cluster, o, 3), x -> x == null, Duration.ofSeconds(30),
                    "later writes kept across a restart");
            assertEquals(null, afterRestart);
            System.out.println("rollback e2e: A written, snapshot, B written, refused while connected, forced "
                    + "rollback served A, C written and kept across heartbeats and a restart");
        }
    }

    /** {@link #check} through a new connection; a connection refused (the node restarting) reads as a mismatch. */
    private static String read(NodeCluster cluster, DeviceOptions o, long gen) {
        try (BlockDevice dev = VolumeLocator.open(cluster.client(), VOL, null, o)) {
            return check(dev, gen);
        } catch (RuntimeException e) {
            return "not served: " + e.getMessage();
        }
    }

    private static void write(BlockDevice dev, long gen) {
        MemorySegment buf = dev.allocateBuffer(REGION);
        try {
            for (long r = 0; r < WRITTEN / REGION; r++) {
                for (int w = 0; w < REGION / 8; w++) {
                    buf.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, w, gen * 1_000_003L + r);
                }
                dev.writeSync(r * REGION, buf, false);
            }
            dev.flushSync();
        } finally {
            dev.freeBuffer(buf);
        }
    }

    /** The first region that does not hold generation {@code gen}'s stamp throughout, or null. */
    private static String check(BlockDevice dev, long gen) {
        MemorySegment buf = dev.allocateBuffer(REGION);
        try {
            for (long r = 0; r < WRITTEN / REGION; r++) {
                dev.readSync(r * REGION, buf);
                for (int w = 0; w < REGION / 8; w += 509) {
                    long got = buf.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, w);
                    if (got != gen * 1_000_003L + r) {
                        return "region " + r + " word " + w + ": " + got + ", want " + (gen * 1_000_003L + r);
                    }
                }
            }
            return null;
        } finally {
            dev.freeBuffer(buf);
        }
    }
}
