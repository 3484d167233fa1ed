package io.rdmablock.node.replication;

import io.rdmablock.node.resync.DirtyRegions;
import java.lang.foreign.MemorySegment;

import io.rdmablock.rdma.fabric.SqeDescriptor;

import io.rdmablock.node.target.VolumeIo;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The merge rule and the drop-before-acknowledge rule of {@link ReplicatedWrites}, against fake secondaries. */
class ReplicatedWritesTest {
    private static final long TIMEOUT_NS = 200_000_000L;
    private static final long VOLUME_BYTES = 64L << 20;

    @TempDir
    Path dir;

    private final Map<String, FakeLink> links = new ConcurrentHashMap<>();
    private volatile boolean unreachable;
    private final AtomicBoolean mgmtUp = new AtomicBoolean(true);
    private final AtomicInteger drops = new AtomicInteger();
    private final Map<Integer, Integer> completed = new ConcurrentHashMap<>();
    private final AtomicInteger completions = new AtomicInteger();
    private ReplicaSet set;
    /** What the fake management plane's record says (null: unreachable). */
    private volatile ReplicaSet.Primacy record;
    /** The fake management plane answers not-primary to a drop. */
    private volatile boolean notPrimary;
    private final AtomicInteger recordReads = new AtomicInteger();

    @AfterEach
    void closeSet() {
        if (set != null) {
            set.close();
        }
    }

    private ReplicatedWrites writes(int minInSync, boolean... inSync) {
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries = new ArrayList<>();
        for (int i = 0; i < inSync.length; i++) {
            FakeLink l = new FakeLink();
            links.put("n" + (i + 2), l);
            secondaries.add(Map.entry("n" + (i + 2), Map.entry(l, inSync[i])));
        }
        set = new ReplicaSet("vol", VOLUME_BYTES, dir, 5, minInSync, secondaries, new ReplicaSet.Dropper() {
            @Override
            public long markStale(String node, long epoch) {
                if (!mgmtUp.get()) {
                    throw new IllegalStateException("management plane unreachable");
                }
                if (notPrimary) {
                    throw new ReplicaSet.NotPrimaryException("409 not-primary");
                }
                drops.incrementAndGet();
                return epoch + 1;
            }

            @Override
            public ReplicaSet.Primacy primacy() {
                recordReads.incrementAndGet();
                ReplicaSet.Primacy r = record;
                if (r == null) {
                    throw new IllegalStateException("management plane unreachable");
                }
                return r;
            }
        });
        return new ReplicatedWrites(set, 8, 8, TIMEOUT_NS, null, (slot, status) -> {
            completed.put(slot, status);
            completions.incrementAndGet();
        }, (slot, nowNs) -> VolumeIo.IN_FLIGHT); // the local copy answers through localDone
    }

    private static void fill(ReplicatedWrites w, int slot, long offset, int length) {
        Write c = w.slot(slot);
        MemorySegment sqe = MemorySegment.ofArray(new byte[SqeDescriptor.LENGTH]);
        SqeDescriptor.opcode(sqe, 0x01);
        SqeDescriptor.nsid(sqe, 1);
        c.sqe = sqe;
        c.offsetBytes = offset;
        c.lengthBytes = length;
        c.dataAddress = 0x1000;
        c.dataLength = length;
        c.rkey = 77;
    }

    private static void pollUntil(ReplicatedWrites w, BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            w.poll(System.nanoTime());
            Thread.onSpinWait();
        }
    }

    @Test
    void completesOnceWhenLocalAndEverySecondaryCompleted() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        fill(w, 3, 4096, 4096);
        assertEquals(0, w.begin(3, System.nanoTime()));
        FakeQueue q2 = links.get("n2").queue;
        FakeQueue q3 = links.get("n3").queue;
        assertEquals(1, q2.sent.size());
        assertEquals(5, q2.sent.get(0).epoch(), "forwarded with the view's epoch");
        assertEquals(77, q2.sent.get(0).rkey(), "the primary's own buffer, no copy");
        w.localDone(3, 0, System.nanoTime());
        q2.answer(3, 0);
        w.poll(System.nanoTime());
        assertEquals(0, completions.get(), "n3 has not answered");
        q3.answer(3, 0);
        w.poll(System.nanoTime());
        assertEquals(1, completions.get());
        assertEquals(0, completed.get(3));
        q3.answer(3, 0); // duplicate: ignored
        w.poll(System.nanoTime());
        assertEquals(1, completions.get());
    }

    @Test
    void aFailedSecondaryIsDroppedAtTheManagementPlaneBeforeTheWriteIsAcknowledged() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        mgmtUp.set(false);
        fill(w, 1, 1L << 20, 8192);
        assertEquals(0, w.begin(1, System.nanoTime()));
        w.localDone(1, 0, System.nanoTime());
        links.get("n2").queue.answer(1, 0);
        links.get("n3").queue.answer(1, ForwardQueue.TIMED_OUT);
        long until = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < until) {
            w.poll(System.nanoTime());
        }
        assertEquals(0, completions.get(), "acknowledged while the record still lists n3 in sync");
        assertTrue(links.get("n3").queue.closed, "a broken queue is closed by its owner after the poll round");
        mgmtUp.set(true);
        pollUntil(w, () -> completions.get() == 1, "completion after the drop");
        assertEquals(0, completed.get(1), "R=3, M=2: still enough copies");
        assertEquals(6, set.view().epoch());
        assertEquals(2, set.view().inSyncCount());
        DirtyRegions missed = set.view().copies()[1].missed();
        assertNotNull(missed);
        assertTrue(missed.isMarked((int) ((1L << 20) / DirtyRegions.DEFAULT_REGION_BYTES)));
        assertTrue(DirtyRegions.load(dir.resolve("vol.dirty-n3"), VOLUME_BYTES)
                .isMarked((int) ((1L << 20) / DirtyRegions.DEFAULT_REGION_BYTES)), "durable before the ack");
        assertTrue(links.get("n3").queue.closed, "the dropped copy's queue is closed by its owner (the poller)");

        // the next write is not forwarded to n3 and marks its bitmap
        fill(w, 2, 8L << 20, 4096);
        assertEquals(0, w.begin(2, System.nanoTime()));
        assertEquals(1, links.get("n3").queue.sent.size(), "nothing more to the dropped copy");
        w.localDone(2, 0, System.nanoTime());
        links.get("n2").queue.answer(2, 0);
        pollUntil(w, () -> completions.get() == 2, "second write");
        assertTrue(missed.isMarked((int) ((8L << 20) / DirtyRegions.DEFAULT_REGION_BYTES)));
        assertEquals(1, drops.get());
    }

    @Test
    void aReservationConflictFromAnEpochBumpIsResentUnderTheNewEpochNotADrop() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        w.poll(System.nanoTime());
        fill(w, 0, 0, 4096);
        fill(w, 1, 1L << 20, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        assertEquals(0, w.begin(1, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        w.localDone(1, 0, System.nanoTime());
        // slot 1's copy on n3 fails: n3 is dropped, epoch 5 -> 6; n2 learns epoch 6 (e.g. from a heartbeat)
        links.get("n3").queue.answer(1, ForwardQueue.PATH_LOST);
        links.get("n3").queue.answer(0, ForwardQueue.PATH_LOST);
        links.get("n2").queue.answer(1, 0);
        pollUntil(w, () -> set.view().epoch() == 6, "drop of n3");
        int conflict = NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT);
        links.get("n2").queue.answer(0, conflict); // slot 0 was sent at epoch 5
        w.poll(System.nanoTime());
        assertEquals(3, links.get("n2").queue.sent.size(), "slot 0 sent to n2 again");
        assertEquals(6, links.get("n2").queue.sent.get(2).epoch(), "under the current epoch");
        links.get("n2").queue.answer(0, 0);
        pollUntil(w, () -> completions.get() == 2, "both completions");
        assertEquals(0, completed.get(0));
        assertTrue(set.view().isInSync(0), "n2 stays in sync");
        assertEquals(1, drops.get());
    }

    @Test
    void aReservationConflictFromAPromotedPrimarysEpochIsNeitherResentNorAcknowledged() {
        ReplicatedWrites w = writes(2, true, true);
        AtomicBoolean change = new AtomicBoolean();
        set.onDeposed(() -> change.set(true));
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        fill(w, 0, 0, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        links.get("n2").queue.answer(0, 0);
        // n3 was promoted (epoch 6) and persisted its new epoch: it refuses this primary's epoch 5
        links.get("n3").queue.answer(0, NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT));
        long until = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < until) { // the record cannot be read yet: the command waits
            w.poll(System.nanoTime());
        }
        assertEquals(0, completions.get(), "acknowledged although a secondary is past this primary's epoch");
        assertTrue(recordReads.get() >= 1, "the record is read");
        record = new ReplicaSet.Primacy(6, false, 2, Map.of("n2", true, "n3", true));
        pollUntil(w, () -> completions.get() == 1, "completion once the record names another primary");
        assertEquals(ReplicatedWrites.ANA_TRANSITION, completed.get(0), "ANA Transition, DNR clear");
        assertEquals(NvmeStatus.of(3, 0x03, false), ReplicatedWrites.ANA_TRANSITION);
        assertEquals(1, links.get("n3").queue.sent.size(), "not resent");
        assertEquals(0, drops.get(), "no copy dropped: the old primary has no say any more");
        assertTrue(set.deposed());
        assertTrue(change.get(), "the subsystem goes to ANA Change");
        fill(w, 1, 0, 4096);
        assertEquals(ReplicatedWrites.ANA_TRANSITION, w.begin(1, System.nanoTime()), "nothing more is started");
    }

    @Test
    void aReservationConflictAtTheViewsEpochWhileStillPrimaryAdoptsTheRecordAndResends() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        fill(w, 0, 0, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        links.get("n3").queue.answer(0, 0);
        // the record is at epoch 6 with this node still primary (a change this set has not seen yet)
        record = new ReplicaSet.Primacy(6, true, 2, Map.of("n2", true, "n3", true));
        links.get("n2").queue.answer(0, NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT));
        pollUntil(w, () -> links.get("n2").queue.sent.size() == 2, "resent to n2");
        assertEquals(6, links.get("n2").queue.sent.get(1).epoch(), "under the record's epoch");
        links.get("n2").queue.answer(0, 0);
        pollUntil(w, () -> completions.get() == 1, "completion");
        assertEquals(0, completed.get(0));
        assertFalse(set.deposed());
        assertEquals(6, set.view().epoch());
        assertEquals(0, drops.get());
    }

    @Test
    void aDropRefusedAsNotPrimaryDeposesAndFailsTheCommandWithAnaTransition() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        notPrimary = true;
        fill(w, 0, 0, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        links.get("n2").queue.answer(0, 0);
        links.get("n3").queue.answer(0, ForwardQueue.TIMED_OUT);
        pollUntil(w, () -> completions.get() == 1, "completion");
        assertEquals(ReplicatedWrites.ANA_TRANSITION, completed.get(0), "never acknowledged");
        assertTrue(set.deposed());
        assertTrue(set.view().isInSync(1), "this set did not drop n3 on its own");
    }

    @Test
    void belowMinInSyncWritesFailRetryable() {
        ReplicatedWrites w = writes(2, true);
        pollUntil(w, () -> links.get("n2").queue != null, "queue");
        fill(w, 0, 0, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        links.get("n2").queue.answer(0, ForwardQueue.PATH_LOST);
        pollUntil(w, () -> completions.get() == 1, "completion");
        int notReady = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_NAMESPACE_NOT_READY, false);
        assertEquals(notReady, completed.get(0));
        fill(w, 1, 0, 4096);
        assertEquals(notReady, w.begin(1, System.nanoTime()), "refused before anything is written");
    }

    @Test
    void aLocalErrorIsTheHostsAnswer() {
        ReplicatedWrites w = writes(1, true);
        pollUntil(w, () -> links.get("n2").queue != null, "queue");
        fill(w, 4, 0, 4096);
        assertEquals(0, w.begin(4, System.nanoTime()));
        int writeFault = NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_WRITE_FAULT, false);
        w.localDone(4, writeFault, System.nanoTime());
        links.get("n2").queue.answer(4, 0);
        pollUntil(w, () -> completions.get() == 1, "completion");
        assertEquals(writeFault, completed.get(4));
    }

    @Test
    void anIdleOwnerWaitsOnTheSecondariesThatOweAnswersAndNotOtherwise() {
        ReplicatedWrites w = writes(2, true, true);
        pollUntil(w, () -> links.get("n2").queue != null && links.get("n3").queue != null, "queues");
        FakeQueue q2 = links.get("n2").queue;
        FakeQueue q3 = links.get("n3").queue;
        assertFalse(w.awaitPeers(100_000), "nothing outstanding: the caller parks");
        fill(w, 1, 0, 4096);
        assertEquals(0, w.begin(1, System.nanoTime()));
        w.localDone(1, 0, System.nanoTime());
        q2.answer(1, 0); // answered while the owner waits: seen by the wait, not by a later poll
        assertTrue(w.awaitPeers(100_000), "two secondaries owe answers");
        assertEquals(List.of(50_000L), q2.awaits, "each busy queue gets its share of the wait; n2 answered first");
        assertTrue(q3.awaits.isEmpty(), "the wait ended with n2's answer");
        assertTrue(w.awaitPeers(100_000), "n3 still owes");
        assertEquals(List.of(100_000L), q3.awaits, "the one busy queue gets the whole wait");
        q3.answer(1, 0);
        assertTrue(w.awaitPeers(100_000));
        assertEquals(1, completions.get(), "both answered within waits: completed");
        assertFalse(w.awaitPeers(100_000), "nothing outstanding any more");
    }

    @Test
    void aStaleCopyGetsNothingButItsRegionsAreMarkedDurablyFirst() {
        ReplicatedWrites w = writes(1, false);
        fill(w, 0, 3 * DirtyRegions.DEFAULT_REGION_BYTES, 4096);
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        pollUntil(w, () -> completions.get() == 1, "completion");
        assertEquals(0, completed.get(0));
        assertFalse(links.get("n2").opened, "no queue to a stale copy");
        assertTrue(DirtyRegions.load(dir.resolve("vol.dirty-n2"), VOLUME_BYTES).isMarked(3));
    }

    @Test
    void aSecondaryThatCannotBeReachedIsDropped() {
        unreachable = true;
        ReplicatedWrites w = writes(1, true);
        fill(w, 0, 0, 4096);
        pollUntil(w, () -> !set.view().isInSync(0), "drop");
        assertEquals(0, w.begin(0, System.nanoTime()));
        w.localDone(0, 0, System.nanoTime());
        pollUntil(w, () -> completions.get() == 1, "completion");
        assertEquals(0, completed.get(0));
    }

    private final class FakeLink implements ForwardLink {
        final CompletableFuture<ForwardQueue> pending = new CompletableFuture<>();
        volatile FakeQueue queue;
        volatile boolean opened;
        volatile boolean closed;

        @Override
        public CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener listener) {
            opened = true;
            if (unreachable) {
                pending.completeExceptionally(new IllegalStateException("connection refused"));
            } else if (!pending.isDone()) {
                queue = new FakeQueue(listener);
                pending.complete(queue);
            }
            return pending;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private static final class FakeQueue implements ForwardQueue {
        final Listener listener;
        final List<SentCommand> sent = new ArrayList<>();
        final List<int[]> answers = new ArrayList<>();
        /** The timeouts {@link #await} was called with. */
        final List<Long> awaits = new ArrayList<>();
        int delivered;
        boolean closed;
        boolean broken;

        FakeQueue(Listener listener) {
            this.listener = listener;
        }

        void answer(int tag, int status) {
            answers.add(new int[]{tag, status});
        }

        @Override
        public boolean forward(MemorySegment sqe, long epoch, long dataAddress, int dataLength, int rkey, int lkey, int tag,
                               long nowNs) {
            sent.add(SentCommand.forwarded(sqe, epoch, dataAddress, dataLength, rkey, tag));
            return true;
        }

        @Override
        public boolean submit(io.rdmablock.nvmf.host.NvmCommand c, int tag, long nowNs) {
            throw new AssertionError("host writes are forwarded, not built");
        }

        @Override
        public boolean isBroken() {
            return broken;
        }

        @Override
        public int outstanding() {
            return sent.size() - delivered;
        }

        @Override
        public int await(long timeoutNs) {
            awaits.add(timeoutNs);
            return poll(System.nanoTime());
        }

        @Override
        public int poll(long nowNs) {
            delivered += answers.size();
            int n = answers.size();
            for (int[] a : answers) {
                broken |= a[1] == ForwardQueue.TIMED_OUT || a[1] == ForwardQueue.PATH_LOST;
                listener.forwarded(a[0], a[1]);
            }
            answers.clear();
            return n;
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
