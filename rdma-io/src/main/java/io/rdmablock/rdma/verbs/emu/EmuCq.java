package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The completion queue of both emulated providers: a preallocated many-producer (whichever threads run the queue
 * pairs' transports), one-consumer ring of completion entries ({@link EmuCqRing}; nothing is allocated per
 * completion); this class adds the queue's states, the wake-ups of a waiter and the stepping of the attached queue
 * pairs' transports on the poller's thread ({@link EmuQp#pollStep}, {@link EmuQp#awaitStep}: soft's engines run
 * there; the memory transport does its work when posting and has nothing to step). Shared implementation of the
 * emulated providers, not an API for users.
 *
 * <p>Overrun: a producer that finds the ring full puts the CQ in the error state and moves every attached queue pair
 * to ERROR; {@link #poll} and {@link #await} then throw {@link CqOverrunException}.
 */
public final class EmuCq implements CompletionQueue {
    private static final EmuQp[] NONE = new EmuQp[0];
    private final EmuCqRing ring;
    private final int capacity;
    private final String name;
    private final String deviceName;
    private final EmuResources resources;
    /** Queue pairs using this CQ (send or receive side), each once; copied on change. */
    private volatile EmuQp[] attached = NONE;
    private volatile boolean overrun;
    private volatile boolean closed;
    private volatile Thread waiter;
    private volatile boolean wakeupRequested;
    /** The queue pair whose transport the waiter blocks in ({@link EmuQp#awaitStep}), else null. */
    private volatile EmuQp waitingQp;

    /**
     * @param name the simple name {@code toString} begins with ({@code SoftCq}, {@code MemCq})
     * @param deviceName the device whose queue pairs may use it
     */
    EmuCq(String name, String deviceName, EmuResources resources, int requested) {
        this.name = name;
        this.deviceName = deviceName;
        this.resources = resources;
        this.ring = new EmuCqRing(requested);
        this.capacity = ring.capacity();
    }

    @Override
    public int capacity() {
        return capacity;
    }

    String deviceName() {
        return deviceName;
    }

    synchronized void attach(EmuQp qp) {
        EmuQp[] a = attached;
        for (EmuQp q : a) {
            if (q == qp) {
                return;
            }
        }
        EmuQp[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = qp;
        attached = b;
    }

    synchronized void detach(EmuQp qp) {
        attached = Arrays.stream(attached).filter(q -> q != qp).toArray(EmuQp[]::new);
    }

    /** A transport blocks in {@code qp}'s own wait for this CQ's waiter (null: it stopped); see {@link #wakeWaiter}. */
    public void waitingIn(EmuQp qp) {
        waitingQp = qp;
    }

    /** True when a waiter need not block: an entry is there, a wake-up was asked for, or the CQ failed or closed. */
    public boolean ready() {
        return ring.hasEntry() || wakeupRequested || overrun || closed;
    }

    /**
     * Adds one completion (whichever thread runs a transport). Returns false after an overrun (the entry is lost and
     * the attached queue pairs are being moved to ERROR).
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
        for (EmuQp qp : attached) {
            qp.requestError();
        }
        Thread w = waiter;
        if (w != null) {
            wakeWaiter(w);
        }
    }

    private void wakeWaiter(Thread w) {
        EmuQp q = waitingQp;
        if (q != null) {
            q.wakeAwait();
        }
        LockSupport.unpark(w);
    }

    /**
     * Steps the attached queue pairs' transports on the caller's thread (those no other thread runs right now), then
     * moves up to {@code max} entries out.
     */
    @Override
    public int poll(WorkCompletion[] out, int max) {
        if (overrun) {
            throw new CqOverrunException("completion queue overrun: capacity=" + capacity
                    + "; attached queue pairs moved to ERROR (IBV_EVENT_CQ_ERR)");
        }
        for (EmuQp qp : attached) {
            qp.pollStep();
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
                EmuQp[] qs = attached;
                if (qs.length == 1 && qs[0].awaitStep(this, left)) {
                    continue; // waited in the queue pair's transport, stepping it: no other thread involved
                }
                for (EmuQp qp : qs) {
                    qp.handBack(); // this thread sleeps: the transports' own threads serve them meanwhile
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
        resources.untrack(this);
    }

    @Override
    public String toString() {
        return name + "{capacity=" + capacity + ", overrun=" + overrun + "}";
    }
}
