package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ring of completion entries behind the completion queue of the emulated providers ({@link EmuCq}):
 * preallocated, many producers, one consumer, entries in parallel primitive arrays, capacity rounded
 * up to a power of two. Producers claim a slot with a CAS on the tail and publish it through a per-slot sequence
 * (bounded MPMC queue after D. Vyukov); the consumer copies entries into caller-owned {@link WorkCompletion}s.
 * Nothing is allocated per completion and no lock is taken. The queue's states (overrun, closed, the waiter) and
 * wake-ups stay with the queue. Shared implementation of the emulated providers, not an API for users.
 */
public final class EmuCqRing {
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

    /** A ring of at least {@code requested} entries (a power of two, at least 2). */
    public EmuCqRing(int requested) {
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

    public int capacity() {
        return capacity;
    }

    /**
     * Adds one entry (any thread). Returns false, writing nothing, when the ring is full. The entry is published with
     * a volatile store, so that a read of the queue's waiter after this call cannot move before it (lost wake-up).
     */
    public boolean offer(long id, WcStatus st, WcOpcode op, int len, boolean hasImm, int immData, int qp) {
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
        // volatile (not release) store: the caller's read of the waiter must not move before it
        SEQ.setVolatile(seq, i, t + 1);
        return true;
    }

    /** True when an entry is there to take (the consumer). */
    public boolean hasEntry() {
        return (long) SEQ.getAcquire(seq, (int) head & mask) == head + 1;
    }

    /** Moves up to {@code min(max, out.length)} entries into {@code out} (the consumer); returns how many. */
    public int take(WorkCompletion[] out, int max) {
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
}
