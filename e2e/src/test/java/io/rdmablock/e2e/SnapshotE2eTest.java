package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Snapshots through the management API on a real node (docs/snapshots.md): a volume of one copy written through
 * the initiator, a snapshot taken (201, ready, the node's barrier), the data overwritten (the snapshot's clusters
 * become its own: exclusive bytes), the snapshot exported by name with {@code rdmablock
 * export --snapshot} (its image is the data of before the overwrite; an unknown name fails with exit code 1 naming
 * it), kept across a node restart, refused duplicates, then deleted; the live data is the last written.
 */
class SnapshotE2eTest {
    private static final long SIZE = 64L << 20;
    private static final long WRITTEN = 8L << 20;
    private static final long REGION = 1L << 20;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldTakeKeepAndDeleteASnapshotOfAVolumeOfOneCopy() throws Exception {
        try (NodeCluster cluster = new NodeCluster(dir, 2, List.of())) {
            var v = cluster.client().createVolume(CreateVolumeRequest.of("s1", SIZE).withAnyHost());
            cluster.awaitVolume("s1", x -> x.state() == VolumeState.READY, 60, "volume ready");
            write(cluster, 1);

            Snapshot s = cluster.client().createSnapshot("s1", "before");
            assertEquals(SnapshotState.READY, s.state(), s.toString());
            assertEquals(1, s.id());
            assertEquals(SIZE, s.sizeBytes());
            MgmtException dup = assertThrows(MgmtException.class, () -> cluster.client().createSnapshot("s1", "before"));
            assertEquals(409, dup.status(), dup.getMessage());

            write(cluster, 2); // every written cluster is redirected: the old ones are the snapshot's alone
            Snapshot held = Await.value(() -> cluster.client().getSnapshot("s1", "before"),
                    x -> x.exclusiveBytes() >= WRITTEN, Duration.ofSeconds(30), "exclusive bytes reported");
            assertTrue(held.exclusiveBytes() <= SIZE, held.toString());

            // export of the snapshot by name (id and size from the management server): generation 1, not 2
            Path img = dir.resolve("before.img");
            java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
            assertEquals(0, export(cluster, err, "--snapshot", "before", "--file", img.toString()),
                    err.toString(java.nio.charset.StandardCharsets.UTF_8));
            assertEquals(SIZE, java.nio.file.Files.size(img));
            assertEquals(null, check(img, 1), "the exported image is the snapshot's");
            java.io.ByteArrayOutputStream unknown = new java.io.ByteArrayOutputStream();
            assertEquals(1, export(cluster, unknown, "--snapshot", "nope", "--file", dir.resolve("x.img").toString()));
            String msg = unknown.toString(java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(msg.contains("no snapshot nope of volume s1"), msg);

            int node = NodeCluster.index(cluster.client().getVolume("s1").copies().getFirst().nodeId());
            cluster.kill(node);
            cluster.start(node);
            cluster.awaitVolume("s1", x -> x.state() == VolumeState.READY, 60, "volume ready after the restart");
            assertEquals(List.of("before"), cluster.client().listSnapshots("s1").stream().map(Snapshot::name).toList());


            cluster.client().deleteSnapshot("s1", "before");
            Await.until(() -> cluster.client().listSnapshots("s1").isEmpty(), Duration.ofSeconds(30),
                    "snapshot gone");
            cluster.kill(node);
            assertEquals(null, check(cluster.copyImage(node, v.id()), 2), "live data is the last written");
            System.out.printf("snapshot e2e: snapshot ready at once, %d MiB exclusive after the overwrite, kept across "
                    + "a restart, deleted%n", held.exclusiveBytes() >> 20);
        }
    }

    private static int export(NodeCluster cluster, java.io.ByteArrayOutputStream err, String... more) {
        io.rdmablock.tools.copy.ExportCommand cmd = new io.rdmablock.tools.copy.ExportCommand()
                .err(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        List<String> args = new java.util.ArrayList<>(List.of("--volume", "s1", "--mgmt-url", cluster.mgmtUrl(),
                "--token", NodeCluster.TOKEN, "--provider", "soft", "--no-progress"));
        args.addAll(List.of(more));
        return new picocli.CommandLine(cmd).execute(args.toArray(String[]::new));
    }

    private static void write(NodeCluster cluster, long gen) throws Exception {
        DeviceOptions o = DeviceOptions.defaults().providerMode("soft").ioQueues(1);
        try (BlockDevice dev = VolumeLocator.open(cluster.client(), "s1", null, o)) {
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
    }

    /** The first region of the image that does not hold generation {@code gen}'s stamp, or null. */
    private static String check(Path image, long gen) throws Exception {
        try (FileChannel ch = FileChannel.open(image)) {
            ByteBuffer bb = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            for (long r = 0; r < WRITTEN / REGION; r++) {
                bb.clear();
                ch.read(bb, r * REGION + 4096);
                long got = bb.getLong(0);
                if (got != gen * 1_000_003L + r) {
                    return "region " + r + ": " + got + ", want " + (gen * 1_000_003L + r);
                }
            }
            return null;
        }
    }
}
