package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data path does not wait on the management plane (docs/failover.md, "Peer lease"; issue: "stop two etcd
 * members: the data path keeps serving"): an R=2 volume under write load; the management server is stopped for good;
 * for four leases after that, writes go on through the primary (its in-sync secondary renews its lease), and at the
 * end every acknowledged write reads back through the device (reads are served only inside a lease). Before the peer
 * lease, the primary's lease lapsed one lease after the last heartbeat answer and every host command got ANA
 * Inaccessible.
 */
class PeerLeaseE2eTest {
    private static final long SIZE = 32L << 20;
    private static final long LEASE_MS = 2_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void theDataPathKeepsServingWhileTheManagementPlaneIsGone() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, "soft", List.of("--replica-timeout-ms", "3000"),
                NodeCluster.Placement.loopback(), 6_000, LEASE_MS)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("pl2", SIZE, 2).withAnyHost());
            cluster.awaitVolume("pl2", x -> x.state() == VolumeState.READY
                    && x.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 240, "2 in-sync copies");
            AckedWrites model = new AckedWrites(SIZE, 4);
            DeviceOptions opts = DeviceOptions.defaults().providerMode("soft").ioQueues(2).pathTimeoutMs(1_000)
                    .failoverTimeoutMs(30_000);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "pl2", null, opts)) {
                long[] stoppedAt = {0};
                long[] ackedAt = new long[3]; // at the stop, one lease later, at the end
                AtomicReference<Throwable> stopperFailure = new AtomicReference<>();
                Thread stopper = new Thread(() -> {
                    try {
                        // sized by the rate: the stop comes after 200 acknowledged writes and 2 renewal periods
                        try {
                            Await.until(() -> model.ackedCount.get() >= 200, Duration.ofSeconds(120),
                                    "200 acknowledged writes before the stop");
                        } catch (AssertionError e) {
                            stopperFailure.set(e);
                        }
                        Thread.sleep(LEASE_MS / 2); // 2 renewal periods under load: the scenario, not a wait
                        ackedAt[0] = model.ackedCount.get();
                        cluster.stopMgmt();
                        stoppedAt[0] = System.nanoTime();
                        Thread.sleep(2 * LEASE_MS); // 2 leases with the plane gone: the scenario
                        ackedAt[1] = model.ackedCount.get();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "mgmt-stopper");
                stopper.start();
                long start = System.nanoTime();
                model.run(dev, () -> (stoppedAt[0] != 0 && System.nanoTime() - stoppedAt[0]
                                > TimeUnit.MILLISECONDS.toNanos(4 * LEASE_MS))
                        || System.nanoTime() - start > TimeUnit.SECONDS.toNanos(180), 1_000_000);
                stopper.join(60_000);
                assertNull(stopperFailure.get(), "the stop came after the writes it waits for");
                ackedAt[2] = model.ackedCount.get();
                assertTrue(stoppedAt[0] != 0, "the management server was never stopped");
                assertNull(model.firstFailure(), () -> "a write failed with the management plane gone"
                        + cluster.tails(30));
                assertTrue(ackedAt[2] > ackedAt[1] + 50, () -> "writes stopped with the management plane gone: "
                        + ackedAt[0] + " acknowledged at the stop, " + ackedAt[1] + " two leases later, " + ackedAt[2]
                        + " four leases later" + cluster.tails(30));
                dev.flushSync();
                assertNull(model.checkDevice(dev), () -> "reads through the device with the management plane gone"
                        + cluster.tails(30));
                System.out.printf("peer lease e2e: management server stopped after %d acknowledged writes; %d more in "
                        + "the next two leases, %d in the two after; every acknowledged write read back %d ms after "
                        + "the stop%n", ackedAt[0], ackedAt[1] - ackedAt[0], ackedAt[2] - ackedAt[1],
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt[0]));
            }
        }
    }
}
