package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.emu.EmuCqRing;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * A memory-provider completion queue: a preallocated many-producer (the threads that run a connection's work),
 * one-consumer ring of completion entries ({@link EmuCqRing}, shared with the soft provider; nothing is allocated per
 * completion); this class adds the queue's states and the wake-ups of a waiter.
 *
 * <p>Overrun: a producer that finds the ring full puts the CQ in the error state and moves every attached queue pair
 * to ERROR; {@link #poll} and {@link #await} then throw {@link CqOverrunException}.
 */
final class MemCq implements CompletionQueue {
    private final EmuCqRing ring;
    private final int capacity;
    private final CopyOnWriteArrayList<MemQp> attached = new CopyOnWriteArrayList<>();
    private volatile boolean overrun;
    private volatile boolean closed;
    private volatile Thread waiter;
    private volatile boolean wakeupRequested;

    private final MemVerbsProvider provider;

    MemCq(MemVerbsProvider provider, int requested) {
        this.provider = provider;
        this.ring = new EmuCqRing(requested);
        this.capacity = ring.capacity();
    }

    @Override
    public int capacity() {
        return capacity;
    }

    void attach(MemQp qp) {
        attached.addIfAbsent(qp);
    }

    void detach(MemQp qp) {
        attached.remove(qp);
    }

    /**
     * Adds one completion (engine threads). Returns false after an overrun (the entry is lost and the attached queue
     * pairs are being moved to ERROR).
     */
    boolean push(long id, WcStatus st, WcOpcode op, int len, boolean hasImm, int immData, int qp) {
        if (overrun || closed) {
            return false;
        }
        if (!ring.offer(id, st, op, len, hasImm, immData, qp)) {
            markOverrun();
            return false;
        }
        // the ring published the entry with a volatile store: this read of waiter does not move before it
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
        return true;
    }

    private void markOverrun() {
        if (overrun) {
            return;
        }
        overrun = true;
        for (MemQp qp : attached) {
            qp.requestError();
        }
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (overrun) {
            throw new CqOverrunException("completion queue overrun: capacity=" + capacity
                    + "; attached queue pairs moved to ERROR (IBV_EVENT_CQ_ERR)");
        }
        return ring.take(out, max);
    }

    @Override
    public int await(WorkCompletion[] out, int max, long timeoutNs) {
        int n = poll(out, max);
        if (n > 0 || timeoutNs <= 0) {
            return n;
        }
        long deadline = System.nanoTime() + timeoutNs;
        waiter = Thread.currentThread();
        VarHandle.fullFence(); // pairs with the volatile publish in push
        try {
            while (true) {
                n = poll(out, max);
                if (n > 0) {
                    return n;
                }
                if (wakeupRequested) {
                    wakeupRequested = false;
                    return 0;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || closed) {
                    return 0;
                }
                LockSupport.parkNanos(this, left);
            }
        } finally {
            waiter = null;
        }
    }

    @Override
    public void wakeup() {
        wakeupRequested = true;
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        wakeup();
        provider.untrack(this);
    }

    @Override
    public String toString() {
        return "MemCq{capacity=" + capacity + ", overrun=" + overrun + "}";
    }
}
