package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
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
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code volume verify --snapshot} (docs/snapshots.md, "Verify of a snapshot") on an R=2 volume of two node
 * processes: a snapshot taken after a written stream, the volume overwritten afterwards; the verify of the snapshot
 * reads the primary's view and the secondary's copy (Read Snapshot over the fabric) and finds them identical, with
 * both nodes compared over the whole size. Then the clusters only the snapshot holds are corrupted on the
 * secondary's disk: the snapshot's verify reports those regions naming the secondary, the live verify none. An
 * unknown snapshot is 404 {@code snapshot-not-found}.
 */
class SnapshotVerifyE2eTest {
    private static final long SIZE = 32L << 20;
    private static final long REGION = 1L << 20;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldFindTheCopiesOfASnapshotIdentical() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, List.of())) {
            cluster.client().createVolume(CreateVolumeRequest.replicated("sv", SIZE, 2).withAnyHost());
            cluster.awaitVolume("sv", SnapshotVerifyE2eTest::allInSync, 120, "2 in-sync copies");
            DeviceOptions o = DeviceOptions.defaults().providerMode("soft").ioQueues(1);
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "sv", null, o)) {
                write(dev, 1, 8);
            }
            Snapshot s = cluster.client().createSnapshot("sv", "cut");
            assertEquals(SnapshotState.READY, s.state(), s.toString());
            try (BlockDevice dev = VolumeLocator.open(cluster.client(), "sv", null, o)) {
                write(dev, 2, 4); // the live volume moves on; the snapshot keeps generation 1
            }

            VerifyReport r = verify(cluster, "cut");
            assertEquals(VerifyState.DONE, r.state(), () -> "verify: " + r + cluster.tails(40));
            assertEquals(0, r.differing(), () -> "copies of the snapshot differ: " + r);
            assertEquals(2, r.nodeIds().size(), () -> "copies compared: " + r);
            assertEquals(SIZE, r.checkedBytes(), () -> "bytes compared: " + r);
            Volume v = cluster.client().getVolume("sv");
            String secondary = v.copies().stream().filter(c -> c.role() != io.rdmablock.mgmt.client.CopyRole.PRIMARY)
                    .findFirst().orElseThrow().nodeId();
            String slog = cluster.log(NodeCluster.index(secondary));
            assertEquals(true, slog.contains("snapshot view opened for reads: volume=" + v.id() + ", snapshot id="
                    + s.id()), () -> "the secondary served its copy of the snapshot (Read Snapshot): " + cluster.tails(40));

            // corrupt, on the secondary's disk, the clusters only the snapshot holds (generation 1 of regions 0..3,
            // overwritten live since): the snapshot's verify names that copy, the live verify stays identical
            int k = NodeCluster.index(secondary);
            cluster.kill(k);
            int corrupted = corruptSnapshotOnly(cluster.dataDir(k).resolve("volumes").resolve(v.id() + ".vol"));
            assertEquals(4, corrupted, "clusters holding generation 1 of regions 0..3 on " + secondary);
            cluster.start(k);
            cluster.awaitVolume("sv", SnapshotVerifyE2eTest::allInSync, 120, "2 in-sync copies after the restart");
            VerifyReport bad = verifyAfterRestart(cluster, "cut");
            assertEquals(VerifyState.DONE, bad.state(), () -> "verify: " + bad + cluster.tails(40));
            assertEquals(4, bad.differing(), () -> "one region per corrupted cluster: " + bad);
            for (var d : bad.differences()) {
                assertEquals(List.of(secondary), d.nodeIds(), () -> "the corrupted copy named: " + bad);
            }
            VerifyReport live = verify(cluster, null);
            assertEquals(0, live.differing(), () -> "the live volume does not hold those clusters: " + live);

            MgmtException unknown = assertThrows(MgmtException.class,
                    () -> cluster.client().startVerify("sv", "nope"));
            assertEquals(404, unknown.status(), unknown.getMessage());
            assertEquals("snapshot-not-found", unknown.type().substring(unknown.type().lastIndexOf('/') + 1),
                    unknown.getMessage());
            System.out.println("snapshot verify e2e: the 2 copies of snapshot cut identical over " + (SIZE >> 20)
                    + " MiB while the volume had moved on; unknown snapshot 404");
        }
    }

    /**
     * {@link #verify}, again (at most 15 times, 2 s apart) while a run fails to connect: the primary learns the
     * restarted secondary's new port from a later heartbeat answer.
     */
    private static VerifyReport verifyAfterRestart(NodeCluster cluster, String snapshot) throws InterruptedException {
        VerifyReport r = verify(cluster, snapshot);
        for (int i = 0; i < 15 && r.state() == VerifyState.FAILED && String.valueOf(r.error()).contains("connect"); i++) {
            Thread.sleep(2_000);
            r = verify(cluster, snapshot);
        }
        return r;
    }

    private static VerifyReport verify(NodeCluster cluster, String snapshot) {
        String before = cluster.client().startVerify("sv", snapshot).id();
        return Await.value(() -> cluster.client().verifyStatus("sv"), x -> x.id().equals(before)
                        && (x.state() == VerifyState.DONE || x.state() == VerifyState.FAILED), Duration.ofSeconds(120),
                "verify of " + (snapshot == null ? "the volume" : "snapshot " + snapshot) + " finished");
    }

    /**
     * Overwrites 4 KiB at offset 4096 of every 1 MiB physical cluster of the data file whose first word is a
     * generation-1 stamp of regions 0..3 (after the overwrite only the snapshot holds those clusters).
     *
     * @return the clusters changed
     */
    private static int corruptSnapshotOnly(Path file) throws java.io.IOException {
        int n = 0;
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer word = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder());
            long clusters = ch.size() / REGION;
            for (long p = 0; p < clusters && p < 4096; p++) {
                word.clear();
                ch.read(word, p * REGION);
                long got = word.getLong(0);
                if (got >= 1_000_003L && got < 1_000_003L + 4) {
                    java.nio.ByteBuffer junk = java.nio.ByteBuffer.allocate(4096);
                    java.util.Arrays.fill(junk.array(), (byte) 0xA5);
                    ch.write(junk, p * REGION + 4096);
                    n++;
                }
            }
            ch.force(true);
        }
        return n;
    }

    private static boolean allInSync(Volume v) {
        return v.state() == VolumeState.READY && v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC);
    }

    private static void write(BlockDevice dev, long gen, int regions) {
        MemorySegment buf = dev.allocateBuffer(REGION);
        try {
            for (long r = 0; r < regions; r++) {
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
}
