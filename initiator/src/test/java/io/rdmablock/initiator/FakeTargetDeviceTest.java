package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.FakeTarget;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The initiator against {@link FakeTarget} (fault hooks the storage node does not offer), on the soft provider. */
@Timeout(60)
class FakeTargetDeviceTest {
    static final String SUBNQN = "nqn.2026-11.io.rdmablock:volume:fake";
    VerbsProvider provider;
    FakeTarget target;
    InetSocketAddress address;
    final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, SUBNQN, 64L << 20, 128L << 20, 512, 128 << 10, true);
        address = target.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        target.close();
        provider.close();
    }

    NvmeBlockDevice open(DeviceOptions o) {
        NvmeBlockDevice d = NvmeBlockDevice.open(address, SUBNQN, null, o.provider(provider));
        toClose.add(d);
        return d;
    }

    static MemorySegment pattern(MemorySegment s, long seed) {
        return DeviceChecks.pattern(s, seed);
    }

    @Test
    void shouldIdentifyAndMoveDataThroughEveryBufferKind() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        assertEquals(64L << 20, d.capacityBytes());
        assertEquals(512, d.lbaSize());
        assertEquals(128 << 10, d.maxTransferBytes());
        assertTrue(d.zeroesAfterTrim());
        try (Arena a = Arena.ofShared()) {
            for (int len : new int[]{512, 4096, 8192, 65536}) {
                MemorySegment reg = pattern(d.allocateBuffer(len), len);
                d.writeSync(0, reg, false);
                MemorySegment back = d.allocateBuffer(len);
                d.readSync(0, back);
                assertEquals(-1, reg.mismatch(back), "registered, len=" + len);
                MemorySegment plain = pattern(a.allocate(len, 8), len + 1);
                d.writeSync(1 << 20, plain, true);
                MemorySegment plainBack = a.allocate(len, 8);
                d.readSync(1 << 20, plainBack);
                assertEquals(-1, plain.mismatch(plainBack), "bounce, len=" + len);
                d.freeBuffer(reg);
                d.freeBuffer(back);
            }
        }
        d.flushSync();
    }

    @Test
    void shouldSplitAboveMdtsAndVerify() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        for (int len : new int[]{512 << 10, 1 << 20, 4 << 20}) {
            MemorySegment w = pattern(d.allocateBuffer(len), len);
            d.writeSync(3 << 20, w, false);
            MemorySegment r = d.allocateBuffer(len);
            d.readSync(3 << 20, r);
            assertEquals(-1, w.mismatch(r), "len=" + len);
            d.freeBuffer(w);
            d.freeBuffer(r);
        }
    }

    @Test
    void shouldDropDuplicateCompletions() {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1).queueEntries(8));
        target.duplicateResponses = true;
        MemorySegment w = pattern(d.allocateBuffer(4096), 9);
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            fs.add(d.write(i * 4096L, w, false));
        }
        fs.forEach(CompletableFuture::join);
        MemorySegment r = d.allocateBuffer(4096);
        d.readSync(49 * 4096L, r);
        assertEquals(-1, w.mismatch(r));
        assertTrue(d.staleCompletions() > 0, "duplicates were seen and dropped");
    }

    @Test
    void shouldFailAReadWhoseBufferWasReleasedInFlightAndKeepTheAssociation() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        target.holdResponses = release;
        int before = target.commands.get();
        Arena a = Arena.ofShared();
        CompletableFuture<Void> f = d.read(0, a.allocate(4096, 4096)); // not registered: staged through a bounce buffer
        Await.until(() -> target.commands.get() != before, Duration.ofSeconds(10), "the READ reached the target");
        a.close(); // the application releases the buffer while the READ is outstanding
        target.holdResponses = null;
        release.countDown();
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalArgumentException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("buffer"), e.getCause().getMessage());
        d.readSync(0, d.allocateBuffer(4096));
        assertEquals(0, d.controller().reconnects(), "the association was not reset for an application error");
    }

    @Test
    void shouldRefuseSynchronousIoFromACompletionCallbackInsteadOfHanging() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1));
        MemorySegment b = d.allocateBuffer(4096);
        MemorySegment r = d.allocateBuffer(4096);
        // the callback runs on the queue's poller: a synchronous read there would wait for that very poller
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        target.holdResponses = release; // the write completes only after the callback is attached
        CompletableFuture<Void> f = d.write(0, b, false).thenRun(() -> d.readSync(0, r));
        target.holdResponses = null;
        release.countDown();
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("completion callback"), e.getCause().getMessage());
        d.write(0, b, false).thenCompose(v -> d.read(0, r)).get(10, TimeUnit.SECONDS); // the asynchronous way
    }

    @Test
    void shouldKeepAnAttachThatRacesAnIdlePoller() throws Exception {
        // the poller read "no connection" and is about to act on it when the controller attaches the queue
        java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
        IoQueue.pollerHook = (q, c) -> {
            if (c == null && once.compareAndSet(false, true)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (q.connection() == null && System.nanoTime() - deadline < 0) {
                    Thread.onSpinWait();
                }
            }
        };
        try {
            NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1));
            assertTrue(once.get(), "the hook saw the detached poller");
            d.write(0, d.allocateBuffer(4096), false).get(10, TimeUnit.SECONDS);
        } finally {
            IoQueue.pollerHook = null;
        }
    }

    @Test
    void shouldCloseAtOnceWhenAReconnectSucceedsDuringClose() throws Exception {
        NvmeBlockDevice d = NvmeBlockDevice.open(address, SUBNQN, null, DeviceOptions.defaults().keepAliveTimeoutMs(1000)
                .reconnectDelayMs(100).ctrlLossTimeoutMs(30_000).provider(provider));
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        try {
            target.cutLink();
            waitUntil(() -> d.state() == AssociationState.RECONNECTING, 10_000, "the association RECONNECTING");
            target.holdAccepts = hold;
            target.restore();
            waitUntil(() -> target.heldAccepts.get() > 0, 10_000, "a reconnect attempt in progress (accept held)");
            CompletableFuture<Void> closed = CompletableFuture.runAsync(d::close);
            waitUntil(() -> d.state() == AssociationState.CLOSED, 10_000, "the association CLOSED");
            hold.countDown(); // the attempt now succeeds, after close() began
            long t0 = System.nanoTime();
            closed.get(30, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 5000, "close() returned after " + ms + " ms");
            assertEquals(AssociationState.CLOSED, d.state(), "the late reconnect did not revive the controller");
        } finally {
            hold.countDown();
            target.holdAccepts = null;
            d.close();
        }
    }

    static void waitUntil(java.util.function.BooleanSupplier c, long timeoutMs, String what) {
        Await.until(c, Duration.ofMillis(timeoutMs), what);
    }

    @Test
    void shouldCompleteASplitIoOnlyWhenNoPartIsOutstanding() throws Exception {
        // a failed part must not complete the I/O while another part still moves data into the caller's buffer
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(2));
        int len = 2 * d.maxTransferBytes(); // two commands: the first on qid 1, the second on qid 2
        MemorySegment b = d.allocateBuffer(len);
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        target.failQid = 1;
        target.holdResponses = hold; // the part on qid 2 is held
        int before = target.commands.get();
        try {
            CompletableFuture<Void> f = d.read(0, b);
            waitUntil(() -> target.commands.get() >= before + 2, 10_000, "both parts reached the target");
            assertThrows(TimeoutException.class, () -> f.get(500, TimeUnit.MILLISECONDS),
                    "the read completed while its part on qid 2 was outstanding");
            hold.countDown();
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
            assertInstanceOf(NvmeStatusException.class, e.getCause());
        } finally {
            hold.countDown();
            target.holdResponses = null;
            target.failQid = 0;
        }
    }

    @Test
    void shouldNotLetATimedOutReadWriteItsBufferAfterItsFutureFailed() throws Exception {
        // the node answers just after the command timeout: the caller owns its buffer again once the future failed
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1).commandTimeoutMs(300).reconnectDelayMs(100));
        MemorySegment b = d.allocateBuffer(4096);
        pattern(target.store().asSlice(0, 4096), 21);
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        target.holdResponses = hold;
        try {
            CompletableFuture<Void> f = d.read(0, b);
            CompletableFuture<Long> changed = f.handle((v, t) -> {
                // on the poller, the moment the future failed: the caller reuses the buffer, the node answers late
                b.fill((byte) 0x5A);
                hold.countDown();
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000);
                while (System.nanoTime() - deadline < 0) {
                    long m = b.mismatch(MemorySegment.ofArray(new byte[4096]).fill((byte) 0x5A));
                    if (m >= 0) {
                        return m;
                    }
                    Thread.onSpinWait();
                }
                return -1L;
            });
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
            assertInstanceOf(TimeoutException.class, e.getCause());
            assertEquals(-1L, changed.get(10, TimeUnit.SECONDS), "late READ data landed in the caller's buffer "
                    + "after its future failed");
        } finally {
            hold.countDown();
            target.holdResponses = null;
        }
        d.readSync(0, b); // the association was reset and works
        assertEquals(-1, b.mismatch(target.store().asSlice(0, 4096)));
    }

    @Test
    void shouldFailACommandThatBreaksEveryAssociationInsteadOfRetryingForever() throws Exception {
        // each attempt resets the association and each reconnect succeeds: the loss timeout never expires
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1).reconnectDelayMs(50).ctrlLossTimeoutMs(60_000));
        MemorySegment b = d.allocateBuffer(4096);
        target.poisonSlba = 8;
        CompletableFuture<Void> f = d.read(8 * 512, b);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        assertInstanceOf(BlockIoException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("attempts"), e.getCause().getMessage());
        target.poisonSlba = -1;
        d.readSync(0, b); // the device keeps working
    }

    @Test
    void shouldNotResubmitToADifferentVolumeBehindTheSameNqn() throws Exception {
        // the node came back with another volume under the same name (deleted and re-created): the held writes
        // must not land on it
        NvmeBlockDevice d = open(DeviceOptions.defaults().keepAliveTimeoutMs(1000).reconnectDelayMs(100)
                .ctrlLossTimeoutMs(30_000));
        MemorySegment w = pattern(d.allocateBuffer(4096), 9);
        target.cutLink();
        waitUntil(() -> d.state() == AssociationState.RECONNECTING, 10_000, "the association RECONNECTING");
        CompletableFuture<Void> f = d.write(0, w, false);
        int before = target.commands.get();
        target.serial = "another-volume-id";
        target.restore();
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(DeviceLostException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("serial"), e.getCause().getMessage());
        assertEquals(before, target.commands.get(), "no I/O reached the other volume");
    }

    @Test
    void shouldTimeOutAStalledCommandAndKeepWorking() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1).commandTimeoutMs(500).reconnectDelayMs(100));
        MemorySegment b = d.allocateBuffer(4096);
        target.dropResponses.set(1);
        CompletableFuture<Void> f = d.read(0, b);
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, e.getCause());
        d.readSync(0, b); // after the association reset
    }

    @Test
    void shouldResumeAfterLinkRestoredWithinLossTimeout() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().keepAliveTimeoutMs(1000).reconnectDelayMs(300)
                .ctrlLossTimeoutMs(10_000));
        MemorySegment w = pattern(d.allocateBuffer(1 << 20), 5);
        d.writeSync(0, w, false);
        target.cutLink();
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            fs.add(d.write((i + 1L) << 20, w, false));
        }
        Thread.sleep(1000); // the link stays down for a while: this is the scenario, not synchronisation
        target.restore();
        for (CompletableFuture<Void> f : fs) {
            f.get(20, TimeUnit.SECONDS);
        }
        MemorySegment r = d.allocateBuffer(1 << 20);
        for (int i = 0; i <= 32; i++) {
            d.readSync((long) i << 20, r);
            assertEquals(-1, w.mismatch(r), "chunk " + i);
        }
    }

    @Test
    void shouldFailOutstandingIoWhenLinkNeverComesBack() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().keepAliveTimeoutMs(1000).reconnectDelayMs(300)
                .ctrlLossTimeoutMs(2000));
        MemorySegment w = d.allocateBuffer(4096);
        target.cutLink();
        long t0 = System.nanoTime();
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            fs.add(d.write(i * 4096L, w, false));
        }
        for (CompletableFuture<Void> f : fs) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
            assertInstanceOf(DeviceLostException.class, e.getCause());
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 2000 + 1000 + 1500, "failed within ctrlLoss + kato (+ slack): " + ms + " ms");
        assertThrows(DeviceLostException.class, () -> d.writeSync(0, w, false));
    }

    @Test
    void shouldSeeResizeOnOutOfRangeIo() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        MemorySegment b = d.allocateBuffer(4096);
        long end = d.capacityBytes();
        NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> d.writeSync(end, b, false));
        assertEquals(0x80, e.sc());
        target.resize(end + (16 << 20));
        d.writeSync(end, b, false);
        assertEquals(end + (16 << 20), d.capacityBytes());
    }

    @Test
    void shouldCompleteZeroLengthIoWithoutACommand() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        int before = target.commands.get();
        d.readSync(0, d.allocateBuffer(4096).asSlice(0, 0));
        d.trimSync(d.capacityBytes(), 0);
        d.writeZeroesSync(0, 0);
        assertEquals(before, target.commands.get());
    }

    @Test
    void shouldRejectMisalignedAndHeapBuffers() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        assertThrows(IllegalArgumentException.class, () -> d.readSync(100, d.allocateBuffer(512)));
        assertThrows(IllegalArgumentException.class, () -> d.readSync(0, MemorySegment.ofArray(new byte[512])));
        CompletionException ce = assertThrows(CompletionException.class, () -> d.write(0, d.allocateBuffer(100), false).join());
        assertInstanceOf(IllegalArgumentException.class, ce.getCause());
    }

    @Test
    void shouldZeroOnWriteZeroesAndTrim() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        MemorySegment w = pattern(d.allocateBuffer(65536), 3);
        d.writeSync(0, w, false);
        d.writeZeroesSync(4096, 4096);
        d.trimSync(16384, 4096);
        MemorySegment r = d.allocateBuffer(65536);
        d.readSync(0, r);
        byte[] zero = new byte[4096];
        assertArrayEquals(zero, r.asSlice(4096, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(zero, r.asSlice(16384, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(-1, w.asSlice(0, 4096).mismatch(r.asSlice(0, 4096)));
    }

    @Test
    void shouldLetExcessIoWaitWhenQueueIsFull() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1).queueEntries(8));
        DeviceChecks.submitBurst(d, 7);
        DeviceChecks.submitBurst(d, 8);
        DeviceChecks.submitBurst(d, 9);
        DeviceChecks.submitBurst(d, 200);
    }

    @Test
    void shouldVerifyByteExactUnderConcurrentLoad() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(3).queueEntries(32));
        for (int qd : new int[]{1, 16, 64}) {
            long ops = DeviceChecks.randomVerifiedLoad(d, 0, 48L << 20, 2, qd, 1500, 8000, qd);
            assertTrue(ops > 0);
        }
    }
}
