package io.rdmablock.e2e;

import io.rdmablock.initiator.BlockDevice;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.NvmeStatusException;
import io.rdmablock.initiator.VolumeLocator;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.TargetOptions;
import io.rdmablock.testing.Await;
import io.rdmablock.tools.copy.ExportCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock export --snapshot-id} against an in-process storage node (docs/snapshots.md, "Export"): the image
 * is the snapshot's byte for byte while a host keeps overwriting the volume during the export; an unknown id fails
 * with exit code 1 and a message naming it; a read past the snapshot's size is LBA Out of Range; a delete of the
 * snapshot is refused while a queue reads it and allowed once that host disconnected.
 */
@Tag("rdma-e2e")
@Timeout(180)
class SnapshotExportTest {
    private static final long SIZE = 32L << 20;
    private static final long REGION = 1L << 20;

    @TempDir
    Path dir;
    StorageNode node;

    @AfterEach
    void tearDown() {
        if (node != null) {
            node.close();
        }
    }

    private static String provider() {
        String p = System.getProperty("rdmablock.test.providers", "soft").split(",")[0].trim();
        return p.isEmpty() ? "soft" : p;
    }

    private String address() {
        InetSocketAddress a = node.fabricAddress();
        return a.getHostString() + ":" + a.getPort();
    }

    private NvmeBlockDevice open(String volume) {
        return NvmeBlockDevice.open(VolumeLocator.parseAddress(address()), Subsystem.nqnFor(volume), null,
                DeviceOptions.defaults().providerMode(provider()).ioQueues(1));
    }

    private int export(ByteArrayOutputStream err, String volume, String... more) {
        ExportCommand cmd = new ExportCommand().err(new PrintStream(err, true, StandardCharsets.UTF_8));
        String[] base = {"--address", address(), "--subnqn", Subsystem.nqnFor(volume), "--provider", provider(),
                "--no-progress"};
        String[] args = new String[base.length + more.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(more, 0, args, base.length, more.length);
        return new CommandLine(cmd).execute(args);
    }

    @Test
    void shouldExportTheSnapshotWhileTheVolumeIsOverwritten() throws Exception {
        node = new StorageNode(new NodeConfig(dir.resolve("node"), new InetSocketAddress(
                System.getProperty("rdmablock.test.address", "127.0.0.1"), 0), provider(), null, null, "n1", null,
                null, 1000, List.of(), TargetOptions.defaults())).start();
        StoreVolume v = node.createVolume("snx", SIZE, 4096, Set.of("*"));
        byte[] a = new byte[(int) SIZE];
        new Random(11).nextBytes(a);
        try (NvmeBlockDevice dev = open("snx")) {
            MemorySegment buf = dev.allocateBuffer(REGION);
            for (long off = 0; off < SIZE; off += REGION) {
                MemorySegment.copy(MemorySegment.ofArray(a), off, buf, 0, REGION);
                dev.writeSync(off, buf, false);
            }
            dev.flushSync();
            dev.freeBuffer(buf);
        }
        node.store().snapshots().create(v.id(), 7, "s7");

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong writes = new AtomicLong();
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc;
        try (NvmeBlockDevice dev = open("snx")) {
            Thread writer = new Thread(() -> {
                MemorySegment buf = dev.allocateBuffer(REGION);
                buf.fill((byte) 0x5B); // pattern B over the first half, again and again
                long deadline = System.nanoTime() + 60_000_000_000L;
                try {
                    for (long i = 0; i < 100_000 && !stop.get() && System.nanoTime() < deadline; i++) {
                        dev.writeSync((i % 16) * REGION, buf, false);
                        writes.incrementAndGet();
                    }
                } catch (Throwable t) {
                    writerFailed.set(t);
                } finally {
                    dev.freeBuffer(buf);
                }
            }, "pattern-b");
            writer.start();
            Await.until(() -> writes.get() >= 16, Duration.ofSeconds(30), "pattern B being written");
            long before = writes.get();
            rc = export(err, "snx", "--snapshot-id", "7", "--file", dir.resolve("s7.img").toString(),
                    "--chunk", "262144", "--iodepth", "4");
            long during = writes.get() - before;
            stop.set(true);
            writer.join(30_000);
            assertNull(writerFailed.get(), "the writer failed");
            assertEquals(0, rc, err.toString(StandardCharsets.UTF_8));
            assertTrue(during > 0, "B was written during the export: " + during);
            System.out.println("snapshot export: " + SIZE + " bytes equal to the snapshot, " + during
                    + " writes of 1 MiB of B during the export");
        }
        assertArrayEquals(a, Files.readAllBytes(dir.resolve("s7.img")), "the image is the snapshot's");
        try (NvmeBlockDevice dev = open("snx")) { // the volume itself holds B where it was written
            MemorySegment buf = dev.allocateBuffer(REGION);
            dev.readSync(3 * REGION, buf);
            assertEquals((byte) 0x5B, buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4095));
            dev.freeBuffer(buf);
        }

        ByteArrayOutputStream unknown = new ByteArrayOutputStream();
        assertEquals(1, export(unknown, "snx", "--snapshot-id", "99", "--file", dir.resolve("x.img").toString()));
        String msg = unknown.toString(StandardCharsets.UTF_8);
        assertTrue(msg.contains("no snapshot of id 99"), msg);
        ByteArrayOutputStream bad = new ByteArrayOutputStream();
        assertEquals(2, export(bad, "snx", "--snapshot-id", "0", "--file", dir.resolve("x.img").toString()));
        ByteArrayOutputStream noMgmt = new ByteArrayOutputStream();
        assertEquals(2, export(noMgmt, "snx", "--snapshot", "s7", "--file", dir.resolve("x.img").toString()));
        assertTrue(noMgmt.toString(StandardCharsets.UTF_8).contains("--snapshot-id"), noMgmt.toString());

        node.store().resize(v.id(), 2 * SIZE);
        try (NvmeBlockDevice dev = open("snx")) {
            MemorySegment buf = dev.allocateBuffer(REGION);
            dev.readSnapshot(7, SIZE - REGION, buf).join(); // the view is open on this queue now
            CompletionException past = assertThrows(CompletionException.class,
                    () -> dev.readSnapshot(7, SIZE, buf).join());
            NvmeStatusException st = assertInstanceOf(NvmeStatusException.class, past.getCause());
            assertEquals(0x80, st.sc(), "past the snapshot's size: LBA Out of Range");
            IllegalStateException inUse = assertThrows(IllegalStateException.class,
                    () -> node.store().snapshots().delete(v.id(), "s7"));
            assertTrue(inUse.getMessage().contains("in use"), inUse.getMessage());
            dev.freeBuffer(buf);
        }
        Await.until(() -> {
            try {
                node.store().snapshots().delete(v.id(), "s7");
                return true;
            } catch (IllegalStateException e) {
                return false;
            }
        }, Duration.ofSeconds(30), "the delete allowed once the reading host disconnected");
        assertTrue(node.store().snapshots().list(v.id()).isEmpty());
    }
}
