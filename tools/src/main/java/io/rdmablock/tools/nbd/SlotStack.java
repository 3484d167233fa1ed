package io.rdmablock.tools.nbd;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A lock-free stack of {@link NbdSlot}s, intrusive through {@link NbdSlot#next}: any thread pushes, exactly one
 * thread pops (so a pop's compare-and-set cannot suffer ABA: nobody else removes nodes). The consumer may park in
 * {@link #await(long)}; a push unparks it. Used for the free slots (reader pops, writer pushes) and the ready replies
 * (device completion threads push, writer takes all).
 */
final class SlotStack {
    private final AtomicReference<NbdSlot> head = new AtomicReference<>();
    private volatile Thread waiter;

    void push(NbdSlot s) {
        NbdSlot h;
        do {
            h = head.get();
            s.next = h;
        } while (!head.compareAndSet(h, s));
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** Pops one slot or returns null; consumer thread only. */
    NbdSlot pop() {
        NbdSlot h;
        do {
            h = head.get();
            if (h == null) {
                return null;
            }
        } while (!head.compareAndSet(h, h.next));
        h.next = null;
        return h;
    }

    /** Takes every slot, oldest first; consumer thread only. Returns null when empty. */
    NbdSlot popAll() {
        NbdSlot h = head.getAndSet(null);
        NbdSlot fifo = null;
        while (h != null) {
            NbdSlot n = h.next;
            h.next = fifo;
            fifo = h;
            h = n;
        }
        return fifo;
    }

    boolean isEmpty() {
        return head.get() == null;
    }

    /** Parks the consumer until a push or {@code timeoutNs} elapse (or a spurious wakeup); consumer thread only. */
    void await(long timeoutNs) {
        waiter = Thread.currentThread();
        if (head.get() == null) {
            LockSupport.parkNanos(this, timeoutNs);
        }
        waiter = null;
    }

    /** Wakes the consumer if it is parked (used to signal stop). */
    void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }
}
