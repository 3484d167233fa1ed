package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.AnaLog;
import io.rdmablock.nvmf.host.FakeTarget;
import io.rdmablock.rdma.fabric.NvmeStatus;
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
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The multipath device against two {@link FakeTarget}s over one shared store (the copies of a volume whose
 * replication is instant), on the soft provider: path A starts Optimized, B Inaccessible.
 */
@Timeout(90)
class MultipathDeviceTest {
    static final String SUBNQN = "nqn.2026-11.io.rdmablock:volume:mp";
    static final long CAPACITY = 16L << 20;
    static final int BLOCK = 4096;
    static final int BLOCKS = 512;
    static final int QD = 16;
    static final int NOT_READY = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_NAMESPACE_NOT_READY, false);

    VerbsProvider provider;
    Arena arena;
    FakeTarget a;
    FakeTarget b;
    InetSocketAddress addrA;
    InetSocketAddress addrB;
    final List<String> reports = new CopyOnWriteArrayList<>();
    final AtomicInteger reads = new AtomicInteger();
    volatile CopySource.Copies record;
    MultipathDevice dev;

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        arena = Arena.ofShared();
        MemorySegment store = arena.allocate(CAPACITY, 4096);
        a = new FakeTarget(provider, SUBNQN, CAPACITY, store, 512, 128 << 10, true);
        b = new FakeTarget(provider, SUBNQN, CAPACITY, store, 512, 128 << 10, true);
        a.anaState = AnaLog.OPTIMIZED;
        b.anaState = AnaLog.INACCESSIBLE;
        addrA = a.start();
        addrB = b.start();
        record = new CopySource.Copies(7, List.of(
                new CopySource.Copy("node-a", true, "127.0.0.1:" + addrA.getPort()),
                new CopySource.Copy("node-b", false, "127.0.0.1:" + addrB.getPort())));
    }

    @AfterEach
    void tearDown() {
        if (dev != null) {
            dev.close();
        }
        a.close();
        b.close();
        arena.close();
        provider.close();
    }

    DeviceOptions options() {
        return DeviceOptions.defaults().provider(provider).ioQueues(2).queueEntries(32).pathTimeoutMs(300)
                .failoverTimeoutMs(10_000).reconnectDelayMs(200).connectTimeoutMs(2000).keepAliveTimeoutMs(2000);
    }

    MultipathDevice open(DeviceOptions o) {
        CopySource source = new CopySource() {
            @Override
            public Copies read() {
                reads.incrementAndGet();
                return record;
            }

            @Override
            public void reportUnreachable(String nodeId, long epoch, String reporter) {
                reports.add(nodeId + "@" + epoch + "@" + reporter);
                throw new IllegalStateException("404 (the server route is not there yet)");
            }
        };
        dev = MultipathDevice.open("mp", record, SUBNQN, "nqn.2014-08.org.nvmexpress:uuid:mp-test", o, source);
        return dev;
    }

    static void waitFor(String what, long timeoutMs, BooleanSupplier cond) {
        Await.until(cond, Duration.ofMillis(timeoutMs), what);
    }

    static void fill(MemorySegment s, long seed) {
        Random r = new Random(seed);
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
    }

    /**
     * Writes rounds of {@link #QD} distinct blocks with fresh patterns, each round waited for, and records every
     * acknowledged write; bounded by count and time. A failed write is kept as the load's failure.
     */
    final class Load implements Runnable {
        final long[] acked = new long[BLOCKS]; // seed of the acknowledged content of each block, 0 = never written
        final AtomicInteger rounds = new AtomicInteger();
        volatile boolean stop;
        volatile Throwable failure;
        final Thread thread = Thread.ofPlatform().daemon().name("mp-load").unstarted(this);
        final int maxRounds;
        final long maxMs;

        Load(int maxRounds, long maxMs) {
            this.maxRounds = maxRounds;
            this.maxMs = maxMs;
        }

        Load start() {
            thread.start();
            return this;
        }

        @Override
        public void run() {
            MemorySegment[] bufs = new MemorySegment[QD];
            for (int i = 0; i < QD; i++) {
                bufs[i] = dev.allocateBuffer(BLOCK);
            }
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMs);
            try {
                for (int round = 1; round <= maxRounds && !stop && System.nanoTime() - end < 0; round++) {
                    List<CompletableFuture<Void>> fs = new ArrayList<>();
                    long[] seeds = new long[QD];
                    for (int i = 0; i < QD; i++) {
                        int blockNo = (round * QD + i) % BLOCKS;
                        seeds[i] = (long) round << 20 | blockNo;
                        fill(bufs[i], seeds[i]);
                        fs.add(dev.write((long) blockNo * BLOCK, bufs[i], false));
                    }
                    for (int i = 0; i < QD; i++) {
                        fs.get(i).get(30, TimeUnit.SECONDS);
                        acked[(round * QD + i) % BLOCKS] = seeds[i];
                    }
                    rounds.incrementAndGet();
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void finish() throws InterruptedException {
            stop = true;
            thread.join(40_000);
            assertTrue(!thread.isAlive(), "load did not stop");
            if (failure != null) {
                throw new AssertionError("a write failed during failover: " + failure, failure);
            }
        }

        /** Every acknowledged write reads back (through the device, on whatever path is active now). */
        void verify() {
            MemorySegment r = dev.allocateBuffer(BLOCK);
            MemorySegment expect = arena.allocate(BLOCK, 8);
            int checked = 0;
            for (int blk = 0; blk < BLOCKS; blk++) {
                if (acked[blk] == 0) {
                    continue;
                }
                dev.readSync((long) blk * BLOCK, r);
                fill(expect, acked[blk]);
                assertEquals(-1, expect.mismatch(r), "block " + blk + " does not hold its acknowledged write");
                checked++;
            }
            assertTrue(checked > 0, "no write was acknowledged");
            dev.freeBuffer(r);
        }
    }

    @Test
    void shouldSendIoToTheOptimizedPathOnly() {
        open(options());
        assertEquals(addrA.getPort(), dev.activePath().address().getPort());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 1);
        int bBefore = b.commands.get();
        for (int i = 0; i < 20; i++) {
            dev.writeSync((long) i * BLOCK, w, false);
        }
        assertEquals(bBefore, b.commands.get(), "I/O reached the Inaccessible path");
        assertTrue(a.commands.get() >= 20);
    }

    @Test
    void shouldResubmitOnBWhenAAnswersInaccessible() throws Exception {
        open(options());
        Load load = new Load(100_000, 20_000).start();
        waitFor("load on A", 10_000, () -> load.rounds.get() >= 20 || load.failure != null);
        int bBefore = b.commands.get();
        b.setAnaState(AnaLog.OPTIMIZED, false); // no notices: the SCT 3h/02h answers of A are the trigger
        a.setAnaState(AnaLog.INACCESSIBLE, false);
        waitFor("I/O on B", 10_000, () -> b.commands.get() > bBefore + 200 || load.failure != null);
        int at = load.rounds.get();
        waitFor("more rounds", 10_000, () -> load.rounds.get() > at + 10 || load.failure != null);
        load.finish();
        assertEquals(addrB.getPort(), dev.activePath().address().getPort());
        load.verify();
    }

    @Test
    void shouldFollowAnAnaChangeNotice() throws Exception {
        open(options());
        Load load = new Load(100_000, 20_000).start();
        waitFor("load on A", 10_000, () -> load.rounds.get() >= 20 || load.failure != null);
        b.setAnaState(AnaLog.OPTIMIZED, true);
        a.setAnaState(AnaLog.INACCESSIBLE, true);
        waitFor("B active", 10_000, () -> dev.activePath() != null
                && dev.activePath().address().getPort() == addrB.getPort());
        int at = load.rounds.get();
        waitFor("more rounds", 10_000, () -> load.rounds.get() > at + 10 || load.failure != null);
        load.finish();
        load.verify();
    }

    @Test
    void shouldFailOverWhenAsConnectionIsKilledAndBTurnsOptimized() throws Exception {
        open(options());
        Load load = new Load(100_000, 30_000).start();
        waitFor("load on A", 10_000, () -> load.rounds.get() >= 20 || load.failure != null);
        a.cutLink();
        // no Optimized path meanwhile: I/O is held until the device reported the primary unreachable
        waitFor("the primary reported unreachable", 10_000,
                () -> reports.contains("node-a@7@nqn.2014-08.org.nvmexpress:uuid:mp-test"));
        b.setAnaState(AnaLog.OPTIMIZED, true);
        waitFor("B active", 10_000, () -> dev.activePath() != null
                && dev.activePath().address().getPort() == addrB.getPort());
        int at = load.rounds.get();
        waitFor("more rounds", 10_000, () -> load.rounds.get() > at + 10 || load.failure != null);
        load.finish();
        load.verify();
        assertTrue(reports.contains("node-a@7@nqn.2014-08.org.nvmexpress:uuid:mp-test"), reports.toString());
        assertTrue(reads.get() > 0, "the volume record was not re-read");
        assertNull(dev.lossReason());
    }

    @Test
    void shouldFenceAPathThatStopsAnsweringAndResubmitOnB() throws Exception {
        open(options());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 42);
        dev.writeSync(5L * BLOCK, w, false);
        MemorySegment r = dev.allocateBuffer(BLOCK); // registered on A: A's late RDMA WRITE would land here
        CountDownLatch hold = new CountDownLatch(1);
        a.holdResponses = hold;
        b.setAnaState(AnaLog.OPTIMIZED, false);
        long t0 = System.nanoTime();
        try {
            CompletableFuture<Void> f = dev.read(5L * BLOCK, r);
            f.get(5, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 250, "completed before pathTimeoutMs: " + ms + " ms");
            assertEquals(-1, w.mismatch(r), "read data");
            assertEquals(addrB.getPort(), dev.activePath().address().getPort());
            r.fill((byte) 0x5A);
        } finally {
            hold.countDown(); // A answers now, late: its READ data must not reach r
        }
        // a sleep is right here: it proves a late transfer does NOT arrive, and nothing marks its absence
        Thread.sleep(500);
        for (long i = 0; i < BLOCK; i++) {
            if (r.get(ValueLayout.JAVA_BYTE, i) != 0x5A) {
                fail("a late transfer of the fenced path reached the buffer at offset " + i);
            }
        }
        dev.writeSync(6L * BLOCK, w, true); // and the device goes on, on B
        MemorySegment back = dev.allocateBuffer(BLOCK);
        dev.readSync(6L * BLOCK, back);
        assertEquals(-1, w.mismatch(back));
    }

    @Test
    void shouldRetryAnAnaTransitionOnAStillOptimizedPath() {
        open(options());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 3);
        a.injectedStatus = NvmeStatus.of(3, 0x03, false); // ANA transition
        a.injectedResponses.set(3);
        dev.writeSync(0, w, false);
        dev.writeSync(BLOCK, w, false);
        assertEquals(0, a.injectedResponses.get());
        assertEquals(addrA.getPort(), dev.activePath().address().getPort());
        MemorySegment back = dev.allocateBuffer(BLOCK);
        dev.readSync(BLOCK, back);
        assertEquals(-1, w.mismatch(back));
    }

    @Test
    void shouldSendAgainAWriteAnsweredNamespaceNotReadyUntilItIsReady() {
        open(options());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 4);
        a.injectedStatus = NOT_READY;
        a.injectedResponses.set(5); // a volume below minInSync for ~5 retries (~500 ms)
        long t0 = System.nanoTime();
        dev.writeSync(2L * BLOCK, w, false);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(0, a.injectedResponses.get());
        assertTrue(ms >= 5 * NotReadyRetries.DELAY_MS, "acknowledged after " + ms + " ms: not delayed between tries");
        assertEquals(addrA.getPort(), dev.activePath().address().getPort(), "a Not Ready answer is no path failure");
        MemorySegment back = dev.allocateBuffer(BLOCK);
        dev.readSync(2L * BLOCK, back);
        assertEquals(-1, w.mismatch(back));
    }

    @Test
    void shouldFailAWriteAnsweredNamespaceNotReadyForFailoverTimeout() {
        open(options().failoverTimeoutMs(700));
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 5);
        a.injectedStatus = NOT_READY;
        a.injectedResponses.set(1_000_000);
        long t0 = System.nanoTime();
        CompletionException e = assertThrows(CompletionException.class, () -> dev.write(0, w, false).join());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        NvmeStatusException s = assertInstanceOf(NvmeStatusException.class, e.getCause());
        assertEquals(0x82, s.sc());
        assertTrue(ms >= 700, "failed after " + ms + " ms, before failoverTimeoutMs");
        assertTrue(s.getMessage().contains("failoverTimeoutMs=700"), s.getMessage());
        a.injectedResponses.set(0);
        dev.writeSync(0, w, false); // the device itself is not lost
    }

    @Test
    void shouldFailAtOnceANamespaceNotReadyWithDoNotRetry() {
        open(options());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 6);
        a.injectedStatus = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_NAMESPACE_NOT_READY, true);
        a.injectedResponses.set(1);
        long t0 = System.nanoTime();
        CompletionException e = assertThrows(CompletionException.class, () -> dev.write(0, w, false).join());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        NvmeStatusException s = assertInstanceOf(NvmeStatusException.class, e.getCause());
        assertTrue(s.dnr() && s.sc() == 0x82, s.getMessage());
        assertTrue(ms < 5_000, "DNR set: not retried, failed after " + ms + " ms");
    }

    @Test
    void shouldBeLostWhenNoPathTurnsOptimizedWithinFailoverTimeout() throws Exception {
        open(options().failoverTimeoutMs(1500));
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 9);
        dev.writeSync(0, w, false);
        a.cutLink();
        long t0 = System.nanoTime();
        CompletableFuture<Void> f = dev.write(BLOCK, w, false);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> f.get(20, TimeUnit.SECONDS));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertInstanceOf(DeviceLostException.class, e.getCause());
        assertTrue(ms >= 1400, "lost after " + ms + " ms, before failoverTimeoutMs");
        assertNotNull(dev.lossReason());
        CompletableFuture<Void> later = dev.write(0, w, false);
        ExecutionException e2 = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> later.get(5, TimeUnit.SECONDS));
        assertInstanceOf(DeviceLostException.class, e2.getCause());
        assertTrue(!reports.isEmpty(), "the primary was not reported unreachable");
    }

    @Test
    void shouldConnectACopyThatIsDownAtOpenInTheBackground() {
        b.cutLink();
        open(options());
        assertSame(dev.multipath().paths().get(0).device(), dev.activePath());
        b.restore();
        waitFor("path B connected", 15_000, () -> dev.multipath().paths().get(1).device() != null);
        b.setAnaState(AnaLog.OPTIMIZED, true);
        a.setAnaState(AnaLog.INACCESSIBLE, true);
        waitFor("B active", 10_000, () -> dev.activePath() != null
                && dev.activePath().address().getPort() == addrB.getPort());
        MemorySegment w = dev.allocateBuffer(BLOCK);
        fill(w, 11);
        dev.writeSync(0, w, false);
        MemorySegment back = dev.allocateBuffer(BLOCK);
        dev.readSync(0, back);
        assertEquals(-1, w.mismatch(back));
    }

    @Test
    void shouldStayZeroCopyAfterFailoverOnBuffersAllocatedBeforeAPathConnected() {
        b.cutLink();
        open(options());
        MemorySegment w = dev.allocateBuffer(BLOCK * 4); // before B connects: adopted by B when it does
        MemorySegment back = dev.allocateBuffer(BLOCK * 4);
        fill(w, 23);
        dev.writeSync(0, w, false);
        MemorySegment small = w.asSlice(0, 512); // in-capsule sized: a second SGE, not a copy into the capsule
        dev.writeSync(8L * BLOCK, small, false);
        b.restore();
        waitFor("path B connected", 15_000, () -> dev.multipath().paths().get(1).device() != null);
        NvmeBlockDevice onB = dev.multipath().paths().get(1).device();
        b.setAnaState(AnaLog.OPTIMIZED, true);
        a.setAnaState(AnaLog.INACCESSIBLE, true);
        waitFor("B active", 10_000, () -> dev.activePath() == onB);
        dev.readSync(0, back);
        assertEquals(-1, w.mismatch(back), "data read on B");
        fill(w, 24);
        dev.writeSync(4L * BLOCK, w, true);
        dev.writeSync(9L * BLOCK, small, false);
        dev.readSync(4L * BLOCK, back);
        assertEquals(-1, w.mismatch(back), "data written and read on B");
        assertTrue(b.commands.get() >= 4, "I/O did not reach B");
        assertEquals(0, onB.copiedTransfers(), "payloads copied on B: buffers not registered there");
        assertEquals(0, dev.multipath().paths().get(0).device().copiedTransfers(), "payloads copied on A");
        MemorySegment foreign = arena.allocate(BLOCK, 4096); // not from allocateBuffer: still served, by a copy
        dev.readSync(0, foreign);
        assertEquals(1, onB.copiedTransfers(), "an unregistered segment is staged through a bounce buffer");
        dev.freeBuffer(w);
        dev.freeBuffer(back);
        assertThrows(IllegalArgumentException.class, () -> dev.freeBuffer(w), "double free");
    }
}
