package io.rdmablock.initiator;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Lock-free multi-producer single-consumer hand-off of {@link IoRequest}s from application threads to a queue's
 * poller: producers push onto an intrusive Treiber stack (one CAS, no node allocation: the request is the node);
 * the poller takes the whole stack with one swap and reverses it into submission order.
 */
final class SubmissionStack {
    private final AtomicReference<IoRequest> top = new AtomicReference<>();

    /** Pushes {@code r}; safe from any thread. */
    void push(IoRequest r) {
        IoRequest t;
        do {
            t = top.get();
            r.next = t;
        } while (!top.compareAndSet(t, r));
    }

    boolean isEmpty() {
        return top.get() == null;
    }

    /** Takes every pushed request, oldest first (linked by {@link IoRequest#next}); null when empty. Poller only. */
    IoRequest drain() {
        IoRequest r = top.getAndSet(null);
        IoRequest prev = null;
        while (r != null) {
            IoRequest n = r.next;
            r.next = prev;
            prev = r;
            r = n;
        }
        return prev;
    }
}
