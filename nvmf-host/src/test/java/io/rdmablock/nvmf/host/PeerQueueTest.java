package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PeerQueue} and {@link PeerAssociation} against the strict (nvmet-like) {@link FakeTarget} on the soft
 * provider: the target fetches a forwarded write's data from memory that is not the queue's; a command without a
 * response times out once and a late response is ignored; a lost connection completes every outstanding command
 * once. Every wait is bounded by a deadline.
 */
@Timeout(60)
class PeerQueueTest {
    static final String SUBNQN = "nqn.2026-11.io.rdmablock:volume:peer";
    static final String HOSTNQN = "nqn.2026-11.io.rdmablock:node:primary";
    static final int LBA = 512;
    static final int ENTRIES = 8;
    static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    VerbsProvider provider;
    FakeTarget target;
    InetSocketAddress address;
    CmId routeId;
    ProtectionDomain pd;
    Arena arena;
    MemorySegment data;
    MemoryRegion dataMr;
    PeerAssociation association;
    PeerQueue queue;
    final NvmCommand cmd = new NvmCommand();
    /** Completions as the handler saw them (preallocated: the handler allocates nothing). */
    final int[] tags = new int[64];
    final int[] statuses = new int[64];
    int completions;

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, SUBNQN, 16L << 20, 16L << 20, LBA, 128 << 10, true).nvmetLike();
        address = target.start();
        routeId = provider.createId();
        routeId.resolve(address, TimeUnit.SECONDS.toNanos(5));
        pd = routeId.device().allocPd();
        arena = Arena.ofShared();
        data = arena.allocate(64 << 10, 4096);
        // the primary's request buffer: registered on the association's PD, readable by the peer
        dataMr = pd.registerMemory(data, Access.LOCAL_WRITE | Access.REMOTE_READ);
    }

    @AfterEach
    void tearDown() {
        CountDownLatch hold = target.holdResponses;
        if (hold != null) {
            hold.countDown();
        }
        if (queue != null) {
            queue.close();
        }
        if (association != null) {
            association.close();
        }
        target.close();
        dataMr.close();
        arena.close();
        pd.close();
        routeId.close();
        provider.close();
    }

    private void connect(long commandTimeoutNs) {
        association = PeerAssociation.connect(provider, pd, new PeerAssociation.Params(address, SUBNQN, HOSTNQN, 1,
                ENTRIES, 10_000, TimeUnit.SECONDS.toNanos(5)));
        queue = new PeerQueue(association.ioQueue(0), commandTimeoutNs, (tag, status) -> {
            tags[completions] = tag;
            statuses[completions] = status;
            completions++;
        });
    }

    /** A forwarded WRITE of {@code blocks} blocks at {@code slba} from {@code data} at {@code offset}, epoch 7. */
    private NvmCommand write(long slba, int blocks, long offset) {
        return cmd.clear().opcode(Opcodes.IO_WRITE).nsid(1).epoch(7).slba(slba).cdw(12, blocks - 1)
                .keyedSgl(data.address() + offset, blocks * LBA, dataMr.rkey());
    }

    /** Polls with the real clock until {@code n} completions arrived or the deadline passed. */
    private void pollUntil(int n) {
        long deadline = System.nanoTime() + WAIT_NS;
        while (completions < n && System.nanoTime() - deadline < 0) {
            if (queue.poll(System.nanoTime()) == 0) {
                Thread.onSpinWait();
            }
        }
        assertEquals(n, completions, "completions within " + WAIT_NS / 1_000_000 + " ms");
    }

    private static void pattern(MemorySegment s, long seed) {
        java.util.Random r = new java.util.Random(seed);
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
    }

    @Test
    void shouldLetTheTargetFetchAForwardedWriteFromTheCallersRegisteredBuffer() {
        connect(TimeUnit.SECONDS.toNanos(5));
        pattern(data, 42);
        assertTrue(queue.submit(write(8, 8, 4096), 77, System.nanoTime()));
        assertEquals(1, queue.outstanding());
        pollUntil(1);
        assertEquals(77, tags[0]);
        assertEquals(NvmeStatus.SUCCESS, statuses[0], NvmeStatus.describe(statuses[0]));
        assertEquals(0, target.refusals.get(), "strict target refused: " + target.lastRefusal);
        assertArrayEquals(data.asSlice(4096, 4096).toArray(ValueLayout.JAVA_BYTE),
                target.store().asSlice(8L * LBA, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, queue.outstanding());
        assertEquals(PeerQueue.State.LIVE, queue.state());
    }

    @Test
    void shouldForwardAHostsSqeWithItsOwnCidAndSglAndDeliverTheAnswerToAWait() {
        connect(TimeUnit.SECONDS.toNanos(5));
        pattern(data, 43);
        // the host's SQE as it arrived: its cid, an SGL naming the host's memory, bytes in MPTR
        MemorySegment hostSqe = arena.allocate(SqeDescriptor.LENGTH);
        hostSqe.fill((byte) 0x5A);
        SqeDescriptor.opcode(hostSqe, Opcodes.IO_WRITE);
        SqeDescriptor.flags(hostSqe, SqeDescriptor.PSDT_SGL | 0x01); // a fused bit the forward must not carry
        SqeDescriptor.nsid(hostSqe, 1);
        for (int n = 13; n <= 15; n++) {
            SqeDescriptor.cdw(hostSqe, n, 0);
        }
        SqeDescriptor.slba(hostSqe, 16);
        SqeDescriptor.cdw(hostSqe, 12, 0); // NLB 0-based: one block
        assertTrue(queue.forward(hostSqe, 9, data.address() + 8192, LBA, dataMr.rkey(), 31, System.nanoTime()));
        assertEquals(1, queue.outstanding());
        long deadline = System.nanoTime() + WAIT_NS;
        while (completions == 0 && System.nanoTime() - deadline < 0) {
            queue.await(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertEquals(1, completions, "answer delivered by await");
        assertEquals(31, tags[0]);
        assertEquals(NvmeStatus.SUCCESS, statuses[0], NvmeStatus.describe(statuses[0]));
        assertEquals(0, target.refusals.get(), "strict target refused: " + target.lastRefusal);
        assertArrayEquals(data.asSlice(8192, LBA).toArray(ValueLayout.JAVA_BYTE),
                target.store().asSlice(16L * LBA, LBA).toArray(ValueLayout.JAVA_BYTE), "fetched from the SGL given");
        assertEquals((byte) 0x5A, hostSqe.get(ValueLayout.JAVA_BYTE, 16), "the host's SQE is not written");
        assertEquals(0, queue.await(1_000_000), "nothing outstanding: no wait");
    }

    @Test
    void shouldDeliverTheTargetsErrorStatusWithTheTag() {
        connect(TimeUnit.SECONDS.toNanos(5));
        assertTrue(queue.submit(write(1L << 40, 1, 0), 5, System.nanoTime())); // beyond the namespace
        pollUntil(1);
        assertEquals(5, tags[0]);
        assertEquals(NvmeStatus.SC_LBA_OUT_OF_RANGE, NvmeStatus.sc(statuses[0]), NvmeStatus.describe(statuses[0]));
        assertEquals(PeerQueue.State.LIVE, queue.state());
    }

    @Test
    void shouldAcceptAtMostEntriesMinusOneCommands() {
        connect(TimeUnit.SECONDS.toNanos(5));
        CountDownLatch hold = new CountDownLatch(1);
        target.holdResponses = hold;
        long now = System.nanoTime();
        for (int i = 0; i < ENTRIES - 1; i++) {
            assertTrue(queue.submit(write(i, 1, 0), i, now), "command " + i);
        }
        assertFalse(queue.submit(write(0, 1, 0), 99, now), "the SQHD rule: entries - 1 outstanding at most");
        assertEquals(ENTRIES - 1, queue.capacity());
        hold.countDown();
        pollUntil(ENTRIES - 1);
        for (int i = 0; i < ENTRIES - 1; i++) {
            assertEquals(NvmeStatus.SUCCESS, statuses[i]);
        }
        assertTrue(queue.submit(write(0, 1, 0), 8, System.nanoTime()), "slots are free again");
        pollUntil(ENTRIES);
    }

    @Test
    void shouldTimeOutACommandWithoutResponseOnceAndIgnoreItsLateResponse() {
        long timeoutNs = TimeUnit.MILLISECONDS.toNanos(300);
        connect(timeoutNs);
        CountDownLatch hold = new CountDownLatch(1);
        target.holdResponses = hold;
        long t0 = System.nanoTime();
        assertTrue(queue.submit(write(0, 1, 0), 1, t0));
        assertTrue(queue.submit(write(1, 1, 0), 2, t0 + 1_000_000));
        assertEquals(0, queue.poll(t0 + timeoutNs - 1), "nothing before the deadline");
        assertEquals(2, queue.poll(t0 + timeoutNs));
        assertEquals(1, tags[0]);
        assertEquals(PeerQueue.STATUS_TIMEOUT, statuses[0]);
        assertEquals(2, tags[1]);
        assertEquals(PeerQueue.STATUS_PATH_LOST, statuses[1], "the broken queue fails the rest at once");
        assertEquals(PeerQueue.State.BROKEN, queue.state());
        assertTrue(queue.failure().contains("timed out"), queue.failure());
        assertFalse(queue.submit(write(0, 1, 0), 3, t0), "a broken queue accepts nothing");
        hold.countDown(); // the target answers now: too late
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        while (System.nanoTime() - until < 0) {
            queue.poll(System.nanoTime());
        }
        assertEquals(2, completions, "each command completed exactly once");
    }

    @Test
    void shouldCompleteEveryOutstandingCommandAsPathLostOnceWhenTheTargetDisconnects() {
        connect(TimeUnit.SECONDS.toNanos(30));
        target.dropResponses.set(3);
        int before = target.commands.get(); // the I/O queue's Fabrics Connect counts too
        long now = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            assertTrue(queue.submit(write(i, 1, 0), 10 + i, now));
        }
        long deadline = System.nanoTime() + WAIT_NS;
        while (target.commands.get() < before + 3 && System.nanoTime() - deadline < 0) {
            queue.poll(System.nanoTime());
        }
        assertEquals(before + 3, target.commands.get(), "the target consumed the commands");
        assertEquals(0, completions);
        target.cutLink();
        pollUntil(3);
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < 3; i++) {
            assertEquals(PeerQueue.STATUS_PATH_LOST, statuses[i]);
            seen.add(tags[i]);
        }
        assertEquals(java.util.Set.of(10, 11, 12), seen);
        assertEquals(PeerQueue.State.LOST, queue.state());
        for (int i = 0; i < 20; i++) {
            queue.poll(System.nanoTime());
        }
        queue.close();
        assertEquals(3, completions, "path lost is delivered once, close adds nothing");
        assertEquals(PeerQueue.State.CLOSED, queue.state());
    }

    @Test
    void shouldCompleteOutstandingCommandsAsPathLostOnCloseAndCloseIdempotently() {
        connect(TimeUnit.SECONDS.toNanos(30));
        target.dropResponses.set(1);
        assertTrue(queue.submit(write(0, 1, 0), 4, System.nanoTime()));
        queue.close();
        assertEquals(1, completions);
        assertEquals(PeerQueue.STATUS_PATH_LOST, statuses[0]);
        queue.close();
        assertEquals(0, queue.poll(System.nanoTime()));
        assertFalse(queue.submit(write(0, 1, 0), 5, System.nanoTime()));
        assertEquals(1, completions);
    }

    @Test
    void shouldKeepTheAssociationAliveAndReportItsLoss() {
        connect(TimeUnit.SECONDS.toNanos(5));
        assertEquals(TimeUnit.SECONDS.toNanos(5), association.keepAliveIntervalNs());
        association.keepAlive();
        assertTrue(association.cntlid() > 0);
        assertEquals(HOSTNQN, target.lastHostnqn);
        target.cutLink();
        assertThrows(NvmfHostException.class, association::keepAlive);
    }

    @Test
    void shouldRefuseAnUnknownSubsystemWithTheConnectStatus() {
        NvmfStatusException e = assertThrows(NvmfStatusException.class, () -> PeerAssociation.connect(provider, pd,
                new PeerAssociation.Params(address, SUBNQN + "-other", HOSTNQN, 1, ENTRIES, 10_000,
                        TimeUnit.SECONDS.toNanos(5))));
        assertEquals(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS, e.sc());
    }

    @Test
    void shouldTakeTheTargetsQueueSizeWhenItIsSmaller() {
        target.cap = NvmetRules.CAP & ~0xFFFFL | 63; // MQES 63: 64 entries (the admin queue has 32)
        try (PeerAssociation a = PeerAssociation.connect(provider, pd,
                new PeerAssociation.Params(address, SUBNQN, HOSTNQN, 1, 128, 10_000, TimeUnit.SECONDS.toNanos(5)))) {
            assertEquals(64, a.ioQueue(0).entries(), "queues of the target's size, not a failed association");
        }
    }

    @Test
    void shouldParseTheFabricAddressAsHostAndPort() {
        assertEquals(4420, FabricAddress.parse("127.0.0.1:4420").getPort());
        assertEquals(4420, FabricAddress.parse("[::1]:4420").getPort());
        assertThrows(IllegalArgumentException.class, () -> FabricAddress.parse("127.0.0.1"));
        assertThrows(IllegalArgumentException.class, () -> FabricAddress.parse("127.0.0.1:0"));
    }
}
