package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-volume limits end to end (docs/qos.md): set at create through the management server, enforced by the primary
 * (I/O over the limit waits, none fails), changed live by PATCH, and enforced by the copy promoted after a kill of
 * the primary; the volume's answer shows the held commands its primary reported. Lower bounds only (a limit
 * cannot be beaten); no upper timing bound.
 */
class QosE2eTest {
    private static final long SIZE = 64L << 20;
    private static final int QD = 32;
    private static final String DELAYED = "rdmablock_volume_qos_delayed_seconds_total";
    @TempDir
    Path dir;

    private static int primary(Volume v) {
        return NodeCluster.index(v.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                .orElseThrow().nodeId());
    }

    /** {@code n} 4 KiB READs at QD32; every one must succeed. @return the time taken, ns */
    private static long reads(BlockDevice dev, MemorySegment buf, int n) {
        long start = System.nanoTime();
        for (int done = 0; done < n; done += QD) {
            int batch = Math.min(QD, n - done);
            CompletableFuture<?>[] f = new CompletableFuture<?>[batch];
            for (int i = 0; i < batch; i++) {
                f[i] = dev.read(4096L * ((done + i) % 4096), buf.asSlice(4096L * i, 4096));
            }
            CompletableFuture.allOf(f).join(); // a failed READ throws here
        }
        return System.nanoTime() - start;
    }

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void theLimitsHoldOnThePrimaryChangeLiveAndHoldOnTheCopyPromotedAfterAKill() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, "soft", List.of("--replica-timeout-ms", "3000"),
                NodeCluster.Placement.loopback(), 6_000, 2_000)) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("q", SIZE, 2).withAnyHost()
                    .withQos(VolumeQos.ofIops(200)));
            Volume v = cluster.awaitVolume("q", x -> x.state() == VolumeState.READY
                    && x.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), 240, "2 in-sync copies");
            assertEquals(VolumeQos.ofIops(200), v.qos());
            int oldPrimary = primary(v);
            DeviceOptions opts = DeviceOptions.defaults().providerMode("soft").ioQueues(2).pathTimeoutMs(1_000)
                    .failoverTimeoutMs(30_000);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "q", null, opts)) {
                MemorySegment buf = dev.allocateBuffer(4096L * QD);
                long took = reads(dev, buf, 400);
                // 200 IOPS and a bucket of 10: at least 1.95 s for 400
                assertTrue(took >= 1_500_000_000L, () -> "400 READs at 200 IOPS took " + took / 1_000_000 + " ms"
                        + cluster.tails(20));
                assertTrue(cluster.metric(oldPrimary, DELAYED) > 0, () -> "held on the primary" + cluster.tails(20));

                cluster.client().setQos("q", VolumeQos.ofIops(400)); // live: the primary has it within a heartbeat
                Thread.sleep(1_500);
                long faster = reads(dev, buf, 400);
                assertTrue(faster >= 700_000_000L && faster < took, () -> "400 READs at 400 IOPS took "
                        + faster / 1_000_000 + " ms, at 200: " + took / 1_000_000 + " ms");

                cluster.kill(oldPrimary);
                reads(dev, buf, QD); // through the failover: held by the initiator and resubmitted, none fails
                Volume after = cluster.awaitVolume("q", x -> primary(x) != oldPrimary, 120, "a new primary");
                int newPrimary = primary(after);
                assertNotEquals(oldPrimary, newPrimary);
                double before = cluster.metric(newPrimary, DELAYED);
                long promoted = reads(dev, buf, 400);
                assertTrue(promoted >= 700_000_000L, () -> "400 READs at 400 IOPS on the promoted copy took "
                        + promoted / 1_000_000 + " ms" + cluster.tails(20));
                assertTrue(cluster.metric(newPrimary, DELAYED) > Math.max(0, before),
                        () -> "held on the promoted copy" + cluster.tails(20));
                // the held count in the volume's answer (the primary's last heartbeat): a limit at which a batch
                // of QD32 is held ~0.6 s (under the initiator's 1 s path timeout), batches until a heartbeat saw it
                cluster.client().setQos("q", VolumeQos.ofIops(50));
                Thread.sleep(1_500);
                int maxHeld = 0;
                for (int batch = 0; batch < 20 && maxHeld == 0; batch++) {
                    CompletableFuture<?>[] f = new CompletableFuture<?>[QD];
                    for (int i = 0; i < QD; i++) {
                        f[i] = dev.read(4096L * i, buf.asSlice(4096L * i, 4096));
                    }
                    while (!CompletableFuture.allOf(f).isDone()) {
                        var a = cluster.client().getVolume("q").qosActivity();
                        maxHeld = Math.max(maxHeld, a == null ? 0 : a.heldCommands());
                        Thread.sleep(50);
                    }
                    CompletableFuture.allOf(f).join(); // none fails
                }
                int seenHeld = maxHeld;
                assertTrue(seenHeld > 0, () -> "no held commands in the volume's answer" + cluster.tails(20));
                var activity = cluster.client().getVolume("q").qosActivity();
                assertTrue(activity != null && activity.delayedSeconds() > 0, "delayed seconds shown: " + activity);
                dev.freeBuffer(buf);
                System.out.printf("qos e2e: 400 READs at QD32: %d ms at 200 IOPS, %d ms at 400, %d ms at 400 on the "
                        + "promoted copy; held in the volume's answer: %d%n", took / 1_000_000, faster / 1_000_000,
                        promoted / 1_000_000, seenHeld);
            }
        }
    }
}
