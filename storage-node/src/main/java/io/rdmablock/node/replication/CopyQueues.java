package io.rdmablock.node.replication;

import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.util.concurrent.CompletableFuture;

/**
 * The {@link ForwardQueue}s of one host I/O queue of a primary, one per copy that writes go to (in sync or syncing,
 * {@link ReplicaSet.View#targets()}): opened when a copy becomes a target (the set-up runs on the copy's link
 * thread), adopted when the set-up finished, closed when the copy is no longer a target. Owner thread only (the host
 * queue's poller, or the thread of an {@link io.rdmablock.node.failover.Activation}); part of {@link ReplicatedWrites}.
 */
final class CopyQueues {
    /** A copy's queue cannot be had (set-up failed or took too long, or the queue broke). */
    interface Failure {
        void failed(int copy, String why);
    }

    /** Completions of the queue to one copy. */
    interface Listeners {
        ForwardQueue.Listener of(int copy);
    }

    private final ReplicaSet set;
    private final int entries;
    private final long openTimeoutNs;
    private final ProtectionDomain pd;
    private final Listeners listeners;
    private final ForwardQueue[] queues;
    private final CompletableFuture<ForwardQueue>[] opening;
    private final long[] openDeadlineNs;
    /** Copies a queue was asked for since they became targets (not asked again while they stay one). */
    private long tried;

    @SuppressWarnings("unchecked")
    CopyQueues(ReplicaSet set, int cap, int entries, long openTimeoutNs, ProtectionDomain pd, Listeners listeners) {
        this.set = set;
        this.entries = entries;
        this.openTimeoutNs = openTimeoutNs;
        this.pd = pd;
        this.listeners = listeners;
        this.queues = new ForwardQueue[cap];
        this.opening = new CompletableFuture[cap];
        this.openDeadlineNs = new long[cap];
    }

    /** The live queue to {@code copy}, or null. */
    ForwardQueue get(int copy) {
        return queues[copy];
    }

    /** True while the queue to {@code copy} is being set up. */
    boolean opening(int copy) {
        return opening[copy] != null;
    }

    /** Asks queues of new targets; takes the queues whose set-up finished; fails those that failed or took too long. */
    int adopt(long nowNs, Failure failure) {
        int work = 0;
        ReplicaSet.View v = set.view();
        long want = v.targets() & ~tried;
        while (want != 0) {
            int i = Long.numberOfTrailingZeros(want);
            want &= ~(1L << i);
            tried |= 1L << i;
            opening[i] = v.copies()[i].link.open(entries, pd, listeners.of(i));
            openDeadlineNs[i] = nowNs + openTimeoutNs; // set-up takes several round trips
            work++;
        }
        for (int i = 0; i < queues.length; i++) {
            CompletableFuture<ForwardQueue> f = opening[i];
            if (f == null) {
                continue;
            }
            if (f.isDone()) {
                opening[i] = null;
                try {
                    queues[i] = f.join();
                } catch (RuntimeException e) {
                    failure.failed(i, "no queue to the secondary: " + e.getMessage());
                }
                work++;
            } else if (nowNs - openDeadlineNs[i] > 0) {
                opening[i] = null;
                f.thenAccept(ForwardQueue::close);
                failure.failed(i, "no queue to the secondary within " + openTimeoutNs / 1_000_000 + " ms");
                work++;
            }
        }
        return work;
    }

    /**
     * Polls the queues; closes those of copies no longer targets (dropped, resync ended: this thread owns them, what
     * is outstanding completes as path lost) and those broken (reported to {@code failure}).
     */
    int poll(long nowNs, Failure failure) {
        int work = 0;
        long targets = set.view().targets();
        for (int i = 0; i < queues.length; i++) {
            ForwardQueue q = queues[i];
            if ((targets & (1L << i)) == 0) {
                tried &= ~(1L << i);
                if (q != null) {
                    q.close();
                    queues[i] = null;
                }
                if (opening[i] != null) {
                    opening[i].thenAccept(ForwardQueue::close);
                    opening[i] = null;
                }
                continue;
            }
            if (q != null) {
                work += q.poll(nowNs);
                if (q.isBroken()) {
                    // its queue pair is gone already (the secondary can no longer touch our buffers); every
                    // command on it was reported; what is still to be sent to it fails at once
                    q.close();
                    queues[i] = null;
                    failure.failed(i, "queue to the secondary broken");
                }
            }
        }
        return work;
    }

    /**
     * Waits on the queues with commands outstanding, for an owner with nothing else to do: up to {@code timeoutNs} on
     * the one such queue, or, with several, in turn on each for its share of {@code timeoutNs} until one answers
     * ({@link ForwardQueue#await}; a user-space provider serves the peer's RDMA READ only while its queue is polled
     * or waited on, so none is left unattended for long).
     *
     * @return false (nothing waited) when no queue has commands outstanding, one is being set up, or one cannot be
     *     waited on
     */
    boolean awaitBusy(long timeoutNs) {
        int busy = 0;
        for (int i = 0; i < queues.length; i++) {
            if (opening[i] != null) {
                return false;
            }
            ForwardQueue q = queues[i];
            if (q != null) {
                int n = q.outstanding();
                if (n < 0) {
                    return false;
                }
                busy += n > 0 ? 1 : 0;
            }
        }
        if (busy == 0) {
            return false;
        }
        long share = Math.max(1_000L, timeoutNs / busy);
        for (ForwardQueue q : queues) {
            if (q != null && q.outstanding() > 0 && q.await(share) > 0) {
                break;
            }
        }
        return true;
    }

    /** Closes every queue (the secondaries can no longer read the host queue's buffers). */
    void closeAll() {
        for (int i = 0; i < queues.length; i++) {
            if (queues[i] != null) {
                queues[i].close();
                queues[i] = null;
            }
            CompletableFuture<ForwardQueue> f = opening[i];
            if (f != null) {
                f.thenAccept(ForwardQueue::close);
                opening[i] = null;
            }
        }
    }
}
