package io.rdmablock.node.failover;

import io.rdmablock.node.replication.ForwardLink;
import io.rdmablock.node.replication.ForwardQueue;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.SentCommand;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A new primary's activation (docs/failover.md "Promotion"): the epoch to every in-sync secondary, then the lease. */
class ActivationTest {
    private static final long TIMEOUT_NS = 200_000_000L;
    private static final long LEASE_NS = 400_000_000L;
    private static final long EPOCH = 7;

    @TempDir
    Path dir;

    private final Map<String, Fake> links = new ConcurrentHashMap<>();
    private final List<String> dropped = new CopyOnWriteArrayList<>();
    private final AtomicInteger dropEpochs = new AtomicInteger();
    private ReplicaSet set;

    @AfterEach
    void close() {
        if (set != null) {
            set.close();
        }
    }

    /** Secondaries n2.. with the given in-sync flags and answers (0 success, a negative status, or NEVER). */
    private void set(boolean[] inSync, int[] answers) {
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries = new ArrayList<>();
        for (int i = 0; i < inSync.length; i++) {
            Fake f = new Fake(answers[i]);
            links.put("n" + (i + 2), f);
            secondaries.add(Map.entry("n" + (i + 2), Map.entry(f, inSync[i])));
        }
        set = new ReplicaSet("vol", 64L << 20, dir, EPOCH, 2, secondaries, (node, epoch) -> {
            dropped.add(node);
            dropEpochs.set((int) epoch);
            return epoch + 1;
        });
    }

    @Test
    void sendsTheNewEpochToEveryInSyncSecondaryThenWaitsOutTheLeaseBeforeServing() {
        set(new boolean[]{true, false, true}, new int[]{0, 0, 0});
        long learnt = System.nanoTime();
        Activation.Outcome outcome = Activation.run(set, 1, TIMEOUT_NS, learnt, LEASE_NS, 5_000_000_000L, () -> false);
        long returned = System.nanoTime();
        assertEquals(Activation.Outcome.DONE, outcome);
        assertTrue(returned - learnt >= LEASE_NS, "served before one full lease: " + (returned - learnt) / 1_000_000
                + " ms");
        for (String n : List.of("n2", "n4")) {
            Fake f = links.get(n);
            assertEquals(1, f.sent.size(), n + ": one FLUSH");
            assertEquals(Activation.FLUSH, f.sent.getFirst().opcode(), n);
            assertEquals(EPOCH, f.sent.getFirst().epoch(), n + ": carrying the new epoch");
            assertEquals(1, f.sent.getFirst().nsid(), n);
            assertTrue(f.sentAtNs.getFirst() - learnt < LEASE_NS, n + ": the epoch went out before the lease wait");
            assertTrue(f.queueClosed.get(), n + ": the activation's queue is closed again");
        }
        assertFalse(links.get("n3").opened, "nothing to a stale copy");
        assertEquals(List.of(), dropped);
    }

    @Test
    void aSecondaryThatFailsTheFlushIsDroppedByCasAndTheActivationGoesOn() {
        set(new boolean[]{true, true}, new int[]{0, ForwardQueue.PATH_LOST});
        Activation.Outcome outcome = Activation.run(set, 1, TIMEOUT_NS, System.nanoTime(), 0, 5_000_000_000L,
                () -> false);
        assertEquals(Activation.Outcome.DONE, outcome);
        assertEquals(List.of("n3"), dropped);
        assertEquals(EPOCH, dropEpochs.get(), "dropped at the new epoch");
        assertEquals(EPOCH + 1, set.view().epoch());
        assertTrue(set.view().isInSync(0));
        assertFalse(set.view().isInSync(1));
    }

    @Test
    void anUnansweredFlushFailsTheActivationWithinItsBound() {
        set(new boolean[]{true}, new int[]{Fake.NEVER});
        long start = System.nanoTime();
        assertEquals(Activation.Outcome.FAILED, Activation.run(set, 1, TIMEOUT_NS, start, 0, 300_000_000L,
                () -> false));
        assertTrue(System.nanoTime() - start < 5_000_000_000L);
    }

    @Test
    void aCancelledActivationStopsDuringTheLeaseWait() {
        set(new boolean[]{true}, new int[]{0});
        long start = System.nanoTime();
        // cancelled once the FLUSH is over (the activation closes its forward queue before the 60 s lease wait)
        Fake n2 = links.get("n2");
        assertEquals(Activation.Outcome.CANCELLED, Activation.run(set, 1, TIMEOUT_NS, start, 60_000_000_000L,
                5_000_000_000L, () -> n2.queueClosed.get()));
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "bounded");
        assertEquals(1, n2.sent.size());
    }

    /** A link whose queue answers every command with a fixed status from within poll (NEVER: no answer). */
    private static final class Fake implements ForwardLink {
        static final int NEVER = Integer.MIN_VALUE;
        final int answer;
        final List<SentCommand> sent = new CopyOnWriteArrayList<>();
        final List<Long> sentAtNs = new CopyOnWriteArrayList<>();
        final AtomicBoolean queueClosed = new AtomicBoolean();
        volatile boolean opened;

        Fake(int answer) {
            this.answer = answer;
        }

        @Override
        public CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener listener) {
            opened = true;
            return CompletableFuture.completedFuture(new ForwardQueue() {
                final List<Integer> tags = new ArrayList<>();
                boolean broken;

                @Override
                public boolean forward(MemorySegment sqe, long epoch, long dataAddress, int dataLength, int rkey, int lkey,
                                       int tag, long nowNs) {
                    sent.add(SentCommand.forwarded(sqe, epoch, dataAddress, dataLength, rkey, tag));
                    sentAtNs.add(nowNs);
                    tags.add(tag);
                    return true;
                }

                @Override
                public boolean submit(io.rdmablock.nvmf.host.NvmCommand c, int tag, long nowNs) {
                    throw new AssertionError("the activation forwards its FLUSH, it builds no command");
                }

                @Override
                public boolean isBroken() {
                    return broken;
                }

                @Override
                public int poll(long nowNs) {
                    if (answer == NEVER || tags.isEmpty()) {
                        return 0;
                    }
                    int n = tags.size();
                    for (int tag : List.copyOf(tags)) {
                        broken |= answer < 0;
                        listener.forwarded(tag, answer);
                    }
                    tags.clear();
                    return n;
                }

                @Override
                public void close() {
                    queueClosed.set(true);
                }
            });
        }

        @Override
        public void close() {
        }
    }
}
