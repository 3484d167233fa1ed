package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A soft completion queue: a preallocated many-producer (queue-pair engines), one-consumer ring of completion
 * entries in parallel primitive arrays, capacity rounded up to a power of two. Producers claim a slot with a CAS on the
 * tail and publish it through a per-slot sequence (bounded MPMC queue after D. Vyukov); the consumer copies entries
 * into caller-owned {@link WorkCompletion}s. Nothing is allocated per completion.
 *
 * <p>Overrun: a producer that finds the ring full puts the CQ in the error state and moves every attached queue pair
 * to ERROR; {@link #poll} and {@link #await} then throw {@link CqOverrunException}.
 */
final class SoftCq implements CompletionQueue {
    private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);
    private static final WcOpcode[] OPCODES = WcOpcode.values();
    private static final WcStatus[] STATUSES = WcStatus.values();

    private final int capacity;
    private final int mask;
    private final long[] seq;
    private final long[] wrId;
    private final int[] byteLen;
    private final int[] imm;
    private final int[] qpNum;
    private final byte[] status;
    private final byte[] opcode;
    private final boolean[] withImm;
    private final AtomicLong tail = new AtomicLong();
    private long head;
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
        int cap = Integer.highestOneBit(Math.max(requested, 2) - 1) << 1;
        this.capacity = cap;
        this.mask = cap - 1;
        seq = new long[cap];
        for (int i = 0; i < cap; i++) {
            seq[i] = i;
        }
        wrId = new long[cap];
        byteLen = new int[cap];
        imm = new int[cap];
        qpNum = new int[cap];
        status = new byte[cap];
        opcode = new byte[cap];
        withImm = new boolean[cap];
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
        return (long) SEQ.getAcquire(seq, (int) head & mask) == head + 1 || wakeupRequested || overrun || closed;
    }

    /**
     * Adds one completion (whichever thread runs an engine). Returns false after an overrun (the entry is lost and the attached queue
     * pairs are being moved to ERROR).
     */
    boolean push(long id, WcStatus st, WcOpcode op, int len, boolean hasImm, int immData, int qp) {
        if (overrun || closed) {
            return false;
        }
        long t;
        int i;
        while (true) {
            t = tail.get();
            i = (int) t & mask;
            long s = (long) SEQ.getAcquire(seq, i);
            if (s == t) {
                if (tail.compareAndSet(t, t + 1)) {
                    break;
                }
            } else if (s < t) {
                markOverrun();
                return false;
            } else {
                Thread.onSpinWait();
            }
        }
        wrId[i] = id;
        status[i] = (byte) st.ordinal();
        opcode[i] = (byte) op.ordinal();
        byteLen[i] = len;
        withImm[i] = hasImm;
        imm[i] = immData;
        qpNum[i] = qp;
        // volatile (not release) store: the read of waiter below must not move before it (lost wake-up otherwise)
        SEQ.setVolatile(seq, i, t + 1);
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
        int n = Math.min(max, out.length);
        int got = 0;
        while (got < n) {
            int i = (int) head & mask;
            if ((long) SEQ.getAcquire(seq, i) != head + 1) {
                break;
            }
            WorkCompletion wc = out[got++];
            wc.wrId = wrId[i];
            wc.status = STATUSES[status[i]];
            wc.opcode = OPCODES[opcode[i]];
            wc.byteLen = byteLen[i];
            wc.withImm = withImm[i];
            wc.imm = imm[i];
            wc.qpNum = qpNum[i];
            wc.vendorErr = 0;
            SEQ.setRelease(seq, i, head + capacity);
            head++;
        }
        return got;
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
