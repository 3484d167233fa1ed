package io.rdmablock.e2e;

import io.rdmablock.initiator.DeviceChecks;
import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.NvmeStatusException;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The initiator library against an in-process storage node (cases C1-C3, C11-C14, every command, load). */
@Tag("rdma-e2e")
@Timeout(180)
class NodeE2eTest {
    @TempDir
    Path dir;
    StorageNode node;
    final List<AutoCloseable> toClose = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        if (node != null) {
            node.close();
        }
    }

    NvmeBlockDevice setUp(String provider, String volume, long sizeBytes, int lba, DeviceOptions opts) {
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume(volume, sizeBytes, lba, Set.of("*"));
        return open(provider, volume, opts);
    }

    NvmeBlockDevice open(String provider, String volume, DeviceOptions opts) {
        NvmeBlockDevice d = NodeFixtures.open(node, provider, volume, opts);
        toClose.add(d);
        return d;
    }

    static MemorySegment pattern(MemorySegment s, long seed) {
        return DeviceChecks.pattern(s, seed);
    }

    static byte[] zeroes(int n) {
        return new byte[n];
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldServeEveryCommandWithEveryBufferKind(String provider) {
        NvmeBlockDevice d = setUp(provider, "every", 64L << 20, 512, DeviceOptions.defaults());
        assertEquals(64L << 20, d.capacityBytes());
        assertEquals(512, d.lbaSize());
        try (Arena a = Arena.ofShared()) {
            MemorySegment keyed = pattern(d.allocateBuffer(256 << 10), 1);
            MemorySegment inCapsule = pattern(d.allocateBuffer(4096), 2);
            MemorySegment bounce = pattern(a.allocate(64 << 10, 4096), 3);
            MemorySegment bounceSmall = pattern(a.allocate(2048, 8), 4);
            d.writeSync(0, keyed, false);
            d.writeSync(1 << 20, inCapsule, true);
            d.writeSync(2 << 20, bounce, false);
            d.writeSync(3 << 20, bounceSmall, false);
            d.flushSync();
            MemorySegment r = d.allocateBuffer(256 << 10);
            d.readSync(0, r);
            assertEquals(-1, keyed.mismatch(r));
            d.readSync(1 << 20, r.asSlice(0, 4096));
            assertEquals(-1, inCapsule.mismatch(r.asSlice(0, 4096)));
            MemorySegment rb = a.allocate(64 << 10, 4096);
            d.readSync(2 << 20, rb);
            assertEquals(-1, bounce.mismatch(rb));
            d.readSync(3 << 20, rb.asSlice(0, 2048));
            assertEquals(-1, bounceSmall.mismatch(rb.asSlice(0, 2048)));

            d.writeZeroesSync(4096, 8192);
            d.readSync(0, r.asSlice(0, 16384));
            assertArrayEquals(zeroes(8192), r.asSlice(4096, 8192).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(-1, keyed.asSlice(0, 4096).mismatch(r.asSlice(0, 4096)));
            assertEquals(-1, keyed.asSlice(12288, 4096).mismatch(r.asSlice(12288, 4096)));
        }
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldZeroAfterWriteZeroesAndTrimAsAdvertised(String provider) {
        // C14: pattern over a larger allocation unit, TRIM 4 KiB inside it, WRITE ZEROES the same range
        NvmeBlockDevice d = setUp(provider, "c14", 64L << 20, 4096, DeviceOptions.defaults());
        MemorySegment w = pattern(d.allocateBuffer(1 << 20), 14);
        d.writeSync(0, w, false);
        d.trimSync(64 << 10, 4096);
        MemorySegment r = d.allocateBuffer(1 << 20);
        d.readSync(0, r);
        if (d.zeroesAfterTrim()) {
            assertArrayEquals(zeroes(4096), r.asSlice(64 << 10, 4096).toArray(ValueLayout.JAVA_BYTE),
                    "zeroes after trim are advertised (DLFEAT 001b)");
        }
        assertEquals(-1, w.asSlice(0, 64 << 10).mismatch(r.asSlice(0, 64 << 10)), "data before the trim kept");
        assertEquals(-1, w.asSlice(68 << 10, 4096).mismatch(r.asSlice(68 << 10, 4096)), "data after the trim kept");
        d.writeZeroesSync(64 << 10, 4096);
        d.readSync(0, r);
        assertArrayEquals(zeroes(4096), r.asSlice(64 << 10, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(-1, w.asSlice(68 << 10, 1 << 16).mismatch(r.asSlice(68 << 10, 1 << 16)));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldRejectShortSglWithoutWritingAndKeepServing(String provider) throws Exception {
        // C1: WRITE slba 0 nlb 10 (5,120 B) whose keyed SGL covers 4,096 B
        NvmeBlockDevice d = setUp(provider, "c1", 16L << 20, 512, DeviceOptions.defaults().ioQueues(1));
        MemorySegment buf = pattern(d.allocateBuffer(5120), 1);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> d.submitRaw(Opcodes.IO_WRITE, 1, 0, 10, buf, 4096).get(10, TimeUnit.SECONDS));
        NvmeStatusException s = assertInstanceOf(NvmeStatusException.class, e.getCause());
        assertEquals(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID, s.sc());
        MemorySegment r = d.allocateBuffer(5120);
        d.readSync(0, r);
        assertArrayEquals(zeroes(5120), r.toArray(ValueLayout.JAVA_BYTE), "nothing was written");
        MemorySegment w = pattern(d.allocateBuffer(4096), 2);
        d.writeSync(0, w, false);
        d.readSync(0, r.asSlice(0, 4096));
        assertEquals(-1, w.mismatch(r.asSlice(0, 4096)));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldSplitAboveMdtsAndRejectRawOversize(String provider) throws Exception {
        // C2: MDTS 128 KiB; 512 KiB, 1 MiB and 4 MiB reads and writes verify; a raw oversize capsule is invalid field
        NvmeBlockDevice d = setUp(provider, "c2", 64L << 20, 4096, DeviceOptions.defaults());
        assertEquals(128 << 10, d.maxTransferBytes());
        for (int len : new int[]{512 << 10, 1 << 20, 4 << 20}) {
            MemorySegment w = pattern(d.allocateBuffer(len), len);
            d.writeSync(8L << 20, w, false);
            MemorySegment r = d.allocateBuffer(len);
            d.readSync(8L << 20, r);
            assertEquals(-1, w.mismatch(r), "len=" + len);
            d.freeBuffer(w);
            d.freeBuffer(r);
        }
        MemorySegment big = d.allocateBuffer(256 << 10);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> d.submitRaw(Opcodes.IO_READ, 1, 0, 64, big, -1).get(10, TimeUnit.SECONDS));
        assertEquals(NvmeStatus.SC_INVALID_FIELD, assertInstanceOf(NvmeStatusException.class, e.getCause()).sc());
        d.readSync(0, big.asSlice(0, 4096));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldCompleteNMinusOneNAndNPlusOneRightAfterAttach(String provider) throws Exception {
        // C3: N = 8 entries; at most 7 outstanding, the rest waits on the host
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume("c3", 16L << 20, 4096, Set.of("*"));
        for (int count : new int[]{7, 8, 9}) {
            try (NvmeBlockDevice d = NodeFixtures.open(node, provider, "c3", DeviceOptions.defaults().ioQueues(1).queueEntries(8))) {
                DeviceChecks.submitBurst(d, count);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldSeeEachResizeKeepOldDataAndReadZeroInNewSpace(String provider) throws Exception {
        // C11: grow three times with I/O running
        NvmeBlockDevice d = setUp(provider, "c11", 32L << 20, 4096, DeviceOptions.defaults());
        MemorySegment w = pattern(d.allocateBuffer(1 << 20), 11);
        d.writeSync(0, w, false);
        d.writeSync((32L << 20) - (1 << 20), w, false);
        MemorySegment b = d.allocateBuffer(4096);
        long size = 32L << 20;
        for (int step = 1; step <= 3; step++) {
            long oldEnd = size;
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> d.writeSync(oldEnd, b, false));
            assertEquals(NvmeStatus.SC_LBA_OUT_OF_RANGE, e.sc(), "I/O past the end fails before the resize");
            size += 32L << 20;
            StoreVolume v = node.store().resize("c11", size);
            assertEquals(size, v.sizeBytes());
            long expect = size;
            // the Asynchronous Event (namespace attribute changed) refreshes the size
            Await.until(() -> d.capacityBytes() == expect, Duration.ofSeconds(10),
                    "new size " + expect + " visible after step " + step + " without I/O");
            MemorySegment r = d.allocateBuffer(1 << 20);
            d.readSync(oldEnd, r);
            assertArrayEquals(zeroes(1 << 20), r.toArray(ValueLayout.JAVA_BYTE), "new space reads zero");
            d.writeSync(oldEnd, b, false);
            d.readSync(0, r);
            assertEquals(-1, w.mismatch(r), "old data intact");
            d.freeBuffer(r);
        }
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldAnswerZeroLengthIoWithoutStateChange(String provider) {
        // C12 through the library: length 0 completes at once (NLB is 0-based, DSM cannot carry 0 ranges)
        NvmeBlockDevice d = setUp(provider, "c12", 16L << 20, 4096, DeviceOptions.defaults());
        MemorySegment w = pattern(d.allocateBuffer(4096), 12);
        d.writeSync(0, w, false);
        MemorySegment empty = d.allocateBuffer(4096).asSlice(0, 0);
        for (long off : new long[]{0, d.capacityBytes()}) {
            d.readSync(off, empty);
            d.writeSync(off, empty, false);
            d.writeZeroesSync(off, 0);
            d.trimSync(off, 0);
        }
        MemorySegment r = d.allocateBuffer(4096);
        d.readSync(0, r);
        assertEquals(-1, w.mismatch(r));
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldAnswerOutOfRangeAndInvalidNamespace(String provider) throws Exception {
        // C13 with raw commands (no host-side checks)
        NvmeBlockDevice d = setUp(provider, "c13", 16L << 20, 4096, DeviceOptions.defaults().ioQueues(1));
        long cap = d.capacityBytes() / 4096;
        MemorySegment b = d.allocateBuffer(8192);
        expect(NvmeStatus.SC_LBA_OUT_OF_RANGE, d.submitRaw(Opcodes.IO_READ, 1, cap, 1, b.asSlice(0, 4096), -1));
        expect(NvmeStatus.SC_LBA_OUT_OF_RANGE, d.submitRaw(Opcodes.IO_WRITE, 1, cap, 1, b.asSlice(0, 4096), -1));
        expect(NvmeStatus.SC_LBA_OUT_OF_RANGE, d.submitRaw(Opcodes.IO_READ, 1, cap - 1, 2, b, -1));
        expect(NvmeStatus.SC_LBA_OUT_OF_RANGE, d.submitRaw(Opcodes.IO_READ, 1, 1L << 63, 1, b.asSlice(0, 4096), -1));
        expect(NvmeStatus.SC_LBA_OUT_OF_RANGE, d.submitRaw(Opcodes.IO_READ, 1, -1L, 2, b, -1));
        expect(NvmeStatus.SC_INVALID_NAMESPACE, d.submitRaw(Opcodes.IO_READ, 0, 0, 1, b.asSlice(0, 4096), -1));
        expect(NvmeStatus.SC_INVALID_NAMESPACE, d.submitRaw(Opcodes.IO_READ, 7, 0, 1, b.asSlice(0, 4096), -1));
        NvmeStatusException e = assertThrows(NvmeStatusException.class,
                () -> d.readSync(d.capacityBytes(), b.asSlice(0, 4096)));
        assertEquals(NvmeStatus.SC_LBA_OUT_OF_RANGE, e.sc());
        MemorySegment w = pattern(d.allocateBuffer(4096), 13);
        d.writeSync(d.capacityBytes() - 4096, w, false);
        d.readSync(d.capacityBytes() - 4096, b.asSlice(0, 4096));
        assertEquals(-1, w.mismatch(b.asSlice(0, 4096)), "the last valid LBA still works");
    }

    private static void expect(int sc, CompletableFuture<Void> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertEquals(sc, assertInstanceOf(NvmeStatusException.class, e.getCause()).sc(), e.getCause().getMessage());
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldVerifyByteExactAtQueueDepthOneToOneHundredTwentyEight(String provider) throws Exception {
        NvmeBlockDevice d = setUp(provider, "load", 128L << 20, 4096, DeviceOptions.defaults().ioQueues(4));
        long total = 0;
        for (int[] cfg : new int[][]{{1, 1}, {2, 4}, {2, 16}, {4, 32}}) { // threads x per-thread QD: 1, 8, 32, 128
            total += DeviceChecks.randomVerifiedLoad(d, 0, 128L << 20, cfg[0], cfg[1], 4000, 6000, cfg[1]);
        }
        assertTrue(total > 0);
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldKeepTheAssociationAliveWhileIdle(String provider) throws Exception {
        // KATO 1 s: the node destroys a silent controller after KATO + grace; Keep Alive every KATO/2 prevents it.
        // rdmablock.test.katoMs raises it where connection setup alone can take longer than 1 s (TCG-emulated rxe/siw)
        long katoMs = Long.getLong("rdmablock.test.katoMs", 1000);
        NvmeBlockDevice d = setUp(provider, "kato", 16L << 20, 4096, DeviceOptions.defaults().keepAliveTimeoutMs(katoMs));
        Thread.sleep(katoMs * 7 / 2); // idle longer than KATO + the node's grace: the scenario, not a synchronisation
        MemorySegment b = d.allocateBuffer(4096);
        d.readSync(0, b);
        assertEquals(0, d.reconnects(), "no association reset");
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldLetTwoDevicesWithOneHostnqnCoexist(String provider) throws Exception {
        // an allow-list makes every tool of a host use one hostnqn: their associations must not evict each other
        String host = "nqn.2014-08.org.nvmexpress:uuid:22222222-2222-3333-4444-555555555555";
        node = NodeFixtures.startNode(dir, provider, 0);
        node.createVolume("shared", 16L << 20, 4096, Set.of(host));
        // one I/O queue each: siw under TCG refused a 6th queue pair of the node with EAGAIN (see the rdma-vm README)
        DeviceOptions o = DeviceOptions.defaults().ioQueues(1).providerMode(provider);
        NvmeBlockDevice a = NvmeBlockDevice.open(node.fabricAddress(), NodeFixtures.subnqn("shared"), host, o);
        toClose.add(a);
        NvmeBlockDevice b = NvmeBlockDevice.open(node.fabricAddress(), NodeFixtures.subnqn("shared"), host, o);
        toClose.add(b);
        MemorySegment buf = a.allocateBuffer(4096);
        for (int i = 0; i < 20; i++) {
            a.writeSync(0, buf, false);
            b.readSync(4096, buf);
        }
        assertEquals(0, a.reconnects(), "first device kept its association");
        assertEquals(0, b.reconnects(), "second device kept its association");
        assertNull(a.lossReason());
        assertNull(b.lossReason());
    }

    @ParameterizedTest
    @MethodSource("io.rdmablock.e2e.NodeFixtures#providers")
    void shouldRefuseAHostNotOnTheAllowList(String provider) {
        node = NodeFixtures.startNode(dir, provider, 0);
        String allowed = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
        node.createVolume("acl", 16L << 20, 4096, Set.of(allowed));
        NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> NvmeBlockDevice.open(
                node.fabricAddress(), NodeFixtures.subnqn("acl"), "nqn.2014-08.org.nvmexpress:uuid:other",
                DeviceOptions.defaults().providerMode(provider)));
        assertEquals(NvmeStatus.SCT_COMMAND_SPECIFIC, e.sct());
        assertEquals(NvmeStatus.SC_CONNECT_INVALID_HOST, e.sc());
        NvmeBlockDevice d = NvmeBlockDevice.open(node.fabricAddress(), NodeFixtures.subnqn("acl"), allowed,
                DeviceOptions.defaults().providerMode(provider));
        toClose.add(d);
        d.readSync(0, d.allocateBuffer(4096));
    }
}
