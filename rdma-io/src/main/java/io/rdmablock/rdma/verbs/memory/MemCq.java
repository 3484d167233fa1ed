package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A memory-provider completion queue: a preallocated many-producer (the threads that run a connection's work),
 * one-consumer ring of completion entries in parallel primitive arrays, capacity rounded up to a power of two.
 * Producers claim a slot with a CAS on the
 * tail and publish it through a per-slot sequence (bounded MPMC queue after D. Vyukov); the consumer copies entries
 * into caller-owned {@link WorkCompletion}s. Nothing is allocated per completion.
 *
 * <p>Overrun: a producer that finds the ring full puts the CQ in the error state and moves every attached queue pair
 * to ERROR; {@link #poll} and {@link #await} then throw {@link CqOverrunException}.
 */
final class MemCq implements CompletionQueue {
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
    private final CopyOnWriteArrayList<MemQp> attached = new CopyOnWriteArrayList<>();
    private volatile boolean overrun;
    private volatile boolean closed;
    private volatile Thread waiter;
    private volatile boolean wakeupRequested;

    private final MemVerbsProvider provider;

    MemCq(MemVerbsProvider provider, int requested) {
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
