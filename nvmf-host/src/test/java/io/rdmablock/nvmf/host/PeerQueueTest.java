package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
class PeerQueueTest extends QueueFixture {
    PeerQueue queue;

    private void connect(long commandTimeoutNs) {
        connectAssociation();
        queue = new PeerQueue(association.ioQueue(0), commandTimeoutNs, this::record);
        use(queue, queue::poll);
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
        assertTrue(queue.forward(hostSqe, 9, data.address() + 8192, LBA, dataMr.rkey(), dataMr.lkey(), 31,
                System.nanoTime())); // no in-capsule limit set: keyed SGL
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
    void shouldSendAForwardsDataInTheCapsuleUpToTheControllersInCapsuleSize() {
        connect(TimeUnit.SECONDS.toNanos(5));
        int limit = association.limits().inCapsuleBytes();
        assertTrue(limit >= LBA, "the fake target takes in-capsule data: " + limit);
        queue.inCapsuleBytes(limit);
        pattern(data, 44);
        MemorySegment hostSqe = arena.allocate(SqeDescriptor.LENGTH);
        SqeDescriptor.opcode(hostSqe, Opcodes.IO_WRITE);
        SqeDescriptor.flags(hostSqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.nsid(hostSqe, 1);
        SqeDescriptor.slba(hostSqe, 24);
        SqeDescriptor.cdw(hostSqe, 12, 0); // NLB 0-based: one block
        // rkey 0: an RDMA READ by the target would fail, so the data can only have come in the capsule
        assertTrue(queue.forward(hostSqe, 9, data.address() + 4096, LBA, 0, dataMr.lkey(), 32, System.nanoTime()));
        long deadline = System.nanoTime() + WAIT_NS;
        while (completions == 0 && System.nanoTime() - deadline < 0) {
            queue.await(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertEquals(1, completions);
        assertEquals(NvmeStatus.SUCCESS, statuses[0], NvmeStatus.describe(statuses[0]));
        assertEquals(0, target.refusals.get(), "strict target refused: " + target.lastRefusal);
        assertArrayEquals(data.asSlice(4096, LBA).toArray(ValueLayout.JAVA_BYTE),
                target.store().asSlice(24L * LBA, LBA).toArray(ValueLayout.JAVA_BYTE), "the capsule's data");
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
