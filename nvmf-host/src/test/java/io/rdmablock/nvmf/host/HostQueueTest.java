package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link HostQueue} engine as the initiator drives it ({@link HostQueue.OnTimeout#RESET}, chained posts, block
 * I/O with data placement, detach), against the strict (nvmet-like) {@link FakeTarget} on the soft provider; the
 * {@link HostQueue.OnTimeout#BREAK} side is {@link PeerQueueTest}'s. Time is the test's: deadlines are driven by the
 * {@code nowNs} it passes. Every wait is bounded by a deadline.
 */
@Timeout(60)
class HostQueueTest extends QueueFixture {
    HostQueue queue;

    /** The engine over the association's I/O queue, the initiator's policy; bounce buffers of 4 KiB. */
    private void open(long commandTimeoutNs) {
        connectAssociation();
        QueueConnection c = association.ioQueue(0);
        QueueMemory mem = c.memory();
        int slots = Math.min(c.entries() - 1, mem.capsuleCount());
        queue = new HostQueue(c.qid(), mem, new CapsuleBuilder(null, pd, mem, slots, 0, 4096), 16,
                new HostQueue.Policy(commandTimeoutNs, HostQueue.OnTimeout.RESET, TimeUnit.MILLISECONDS.toNanos(50)),
                this::record);
        use(queue, queue::poll);
        assertEquals(HostQueue.State.DETACHED, queue.state());
        queue.attach(c, true);
    }

    private NvmCommand write(long slba, long offset) {
        return write(slba, 1, offset);
    }

    @Test
    void shouldPostSeveralCapsulesInOneChainAndCompleteEach() {
        open(TimeUnit.SECONDS.toNanos(5));
        long now = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            int slot = queue.claim();
            queue.submit(slot, write(i, (long) i * LBA), 20 + i, now);
        }
        assertEquals(3, queue.outstanding());
        assertTrue(queue.flush(), "one post for the three");
        pollUntil(3);
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int i = 0; i < 3; i++) {
            assertEquals(NvmeStatus.SUCCESS, statuses[i], NvmeStatus.describe(statuses[i]));
            seen.add(tags[i]);
        }
        assertEquals(java.util.Set.of(20, 21, 22), seen);
        assertEquals(0, target.refusals.get(), "strict target refused: " + target.lastRefusal);
    }

    @Test
    void shouldStageUnregisteredMemoryThroughTheBounceBufferBothWays() {
        open(TimeUnit.SECONDS.toNanos(5));
        MemorySegment src = arena.allocate(4096, 4096); // not registered: staged
        for (int i = 0; i < 4096; i += 8) {
            src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, 0x0102030405060708L * (i + 1));
        }
        int slot = queue.claim();
        queue.blockIo(slot, Opcodes.IO_WRITE, 1, 32, 8, 0, src, CapsuleBuilder.SGL_BYTES_OF_DATA, slot,
                System.nanoTime());
        assertTrue(queue.flush());
        pollUntil(1);
        assertEquals(NvmeStatus.SUCCESS, statuses[0], NvmeStatus.describe(statuses[0]));
        MemorySegment dst = arena.allocate(4096, 4096);
        slot = queue.claim();
        queue.blockIo(slot, Opcodes.IO_READ, 1, 32, 8, 0, dst, CapsuleBuilder.SGL_BYTES_OF_DATA, slot,
                System.nanoTime());
        assertTrue(queue.flush());
        pollUntil(2);
        assertEquals(NvmeStatus.SUCCESS, statuses[1], NvmeStatus.describe(statuses[1]));
        queue.copyOutBounce(tags[1], dst); // the slot is not claimed again in between
        assertArrayEquals(src.toArray(ValueLayout.JAVA_BYTE), dst.toArray(ValueLayout.JAVA_BYTE));
        assertEquals(2, queue.copiedTransfers(), "both payloads went through the bounce buffer");
    }

    @Test
    void shouldFreeTheCidsOfTimedOutCommandsAndHandBackTheRestInDescendingSlotOrder() {
        long timeoutNs = TimeUnit.MILLISECONDS.toNanos(300);
        open(timeoutNs);
        CountDownLatch hold = new CountDownLatch(1);
        target.holdResponses = hold;
        long t0 = System.nanoTime();
        int first = queue.claim();
        queue.submit(first, write(0, 0), first, t0);
        int[] later = new int[3];
        for (int i = 0; i < later.length; i++) {
            later[i] = queue.claim();
            queue.submit(later[i], write(1 + i, 0), later[i], t0 + 1_000_000);
        }
        assertTrue(queue.flush());
        assertEquals(0, queue.poll(t0 + timeoutNs - 1), "nothing before the deadline");
        assertEquals(4, queue.poll(t0 + timeoutNs));
        assertEquals(first, tags[0]);
        assertEquals(HostQueue.STATUS_TIMEOUT, statuses[0]);
        for (int i = 1; i < 4; i++) {
            assertEquals(HostQueue.STATUS_PATH_LOST, statuses[i]);
            if (i > 1) {
                assertTrue(tags[i] < tags[i - 1], "descending slots: " + tags[i - 1] + " then " + tags[i]);
            }
        }
        assertEquals(HostQueue.State.BROKEN, queue.state());
        assertEquals(-1, queue.claim(), "a broken queue accepts nothing");
        QueueConnection c = queue.connection();
        assertSame(c, queue.detach());
        assertEquals(HostQueue.State.DETACHED, queue.state());
        assertNull(queue.connection());
        assertEquals(4, completions, "detach adds nothing: everything was completed");
        queue.attach(c, true); // its queue pair is gone: only the slots are checked, nothing is posted
        for (int i = 0; i < queue.capacity(); i++) {
            assertTrue(queue.claim() >= 0, "every cid is free again (RESET): slot " + i);
        }
        assertEquals(-1, queue.claim());
    }

    @Test
    void shouldCompleteOutstandingCommandsAsPathLostOnDetachAndRefuseAnAttachWhileAttached() {
        open(TimeUnit.SECONDS.toNanos(30));
        target.dropResponses.set(2);
        long now = System.nanoTime();
        for (int i = 0; i < 2; i++) {
            int slot = queue.claim();
            queue.submit(slot, write(i, 0), 40 + i, now);
        }
        assertTrue(queue.flush());
        QueueConnection c = queue.connection();
        assertThrows(IllegalStateException.class, () -> queue.attach(c, true));
        queue.detach();
        assertEquals(2, completions);
        assertEquals(HostQueue.STATUS_PATH_LOST, statuses[0]);
        assertEquals(HostQueue.STATUS_PATH_LOST, statuses[1]);
        assertEquals(0, queue.outstanding());
        assertEquals(0, queue.poll(System.nanoTime()), "a detached queue polls nothing");
        queue.attach(c, true);
    }
}
