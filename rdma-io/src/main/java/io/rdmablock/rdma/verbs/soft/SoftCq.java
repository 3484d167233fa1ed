package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.emu.EmuCqRing;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A soft completion queue: a preallocated many-producer (queue-pair engines), one-consumer ring of completion
 * entries ({@link EmuCqRing}, shared with the memory provider; nothing is allocated per completion); this class adds
 * the queue's states, the wake-ups of a waiter and the stepping of the attached queue pairs' engines.
 *
 * <p>Overrun: a producer that finds the ring full puts the CQ in the error state and moves every attached queue pair
 * to ERROR; {@link #poll} and {@link #await} then throw {@link CqOverrunException}.
 */
final class SoftCq implements CompletionQueue {
    private final EmuCqRing ring;
    private final int capacity;
    /** Queue pairs using this CQ (send or receive side), each once; copied on change. */
    private volatile SoftQp[] attached = new SoftQp[0];
    private volatile boolean overrun;
    private volatile boolean closed;
    private volatile Thread waiter;
    private volatile boolean wakeupRequested;
    /** The engine whose selector the waiter blocks in ({@link QpEngine#awaitInline}), else null. */
    volatile QpEngine waitingEngine;

    private final SoftVerbsProvider provider;

    SoftCq(SoftVerbsProvider provider, int requested) {
        this.provider = provider;
        this.ring = new EmuCqRing(requested);
        this.capacity = ring.capacity();
    }

    @Override
    public int capacity() {
        return capacity;
    }

    synchronized void attach(SoftQp qp) {
        SoftQp[] a = attached;
        for (SoftQp q : a) {
            if (q == qp) {
                return;
            }
        }
        SoftQp[] b = java.util.Arrays.copyOf(a, a.length + 1);
        b[a.length] = qp;
        attached = b;
    }

    synchronized void detach(SoftQp qp) {
        SoftQp[] a = attached;
        attached = java.util.Arrays.stream(a).filter(q -> q != qp).toArray(SoftQp[]::new);
    }

    /** True when a waiter need not block: an entry is there, a wake-up was asked for, or the CQ failed or closed. */
    boolean ready() {
        return ring.hasEntry() || wakeupRequested || overrun || closed;
    }

    /**
     * Adds one completion (whichever thread runs an engine). Returns false after an overrun (the entry is lost and the attached queue
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
        if (w != null && w != Thread.currentThread()) {
            wakeWaiter(w);
        }
        return true;
    }

    private void markOverrun() {
        if (overrun) {
            return;
        }
        overrun = true;
        for (SoftQp qp : attached) {
            qp.requestError();
        }
        Thread w = waiter;
        if (w != null) {
            wakeWaiter(w);
        }
    }

    private void wakeWaiter(Thread w) {
        QpEngine e = waitingEngine;
        if (e != null) {
            e.selector.wakeup();
        }
        LockSupport.unpark(w);
    }

    /**
     * Steps the attached queue pairs' engines on the caller's thread (those no other thread runs right now), then
     * moves up to {@code max} entries out; see {@link QpEngine}.
     */
    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (overrun) {
            throw new CqOverrunException("completion queue overrun: capacity=" + capacity
                    + "; attached queue pairs moved to ERROR (IBV_EVENT_CQ_ERR)");
        }
        for (SoftQp qp : attached) {
            qp.engine.driver.pollInline();
        }
        return take(out, max);
    }

    private int take(WorkCompletion[] out, int max) {
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
                SoftQp[] qs = attached;
                if (qs.length == 1 && qs[0].engine.driver.awaitInline(this, left)) {
                    continue; // waited in the queue pair's selector, stepping its engine: no other thread involved
                }
                for (SoftQp qp : qs) {
                    qp.engine.driver.handBack(); // this thread sleeps: the engines' threads serve them meanwhile
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
            wakeWaiter(w);
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
        return "SoftCq{capacity=" + capacity + ", overrun=" + overrun + "}";
    }
}
