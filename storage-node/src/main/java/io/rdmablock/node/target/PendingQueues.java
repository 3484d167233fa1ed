package io.rdmablock.node.target;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The counts of pending queues (accepted at the CM level, no validated Fabrics Connect yet, not torn down) on the node
 * and per peer IP address, against {@link TargetOptions.PendingLimits}. A queue counts from its connect request
 * ({@link #reserve}) through its handshake until its Connect succeeds or it is torn down ({@link #done}).
 * Thread-safe.
 */
final class PendingQueues {
    /** Placeholder key of peers whose address is unknown. */
    static final InetAddress UNKNOWN_PEER = InetAddress.getLoopbackAddress();

    private final TargetOptions.PendingLimits limits;
    private final AtomicInteger node = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> byAddress = new ConcurrentHashMap<>();

    PendingQueues(TargetOptions.PendingLimits limits) {
        this.limits = limits;
    }

    /** Pending queues on the node now. */
    int count() {
        return node.get();
    }

    /** Pending queues from {@code addr} now. */
    int countOf(InetAddress addr) {
        return byAddress.getOrDefault(addr, 0);
    }

    /**
     * Counts a new pending queue from {@code addr}; false (nothing counted) when the node's
     * ({@link TargetOptions.PendingLimits#maxPerNode()}) or the address's
     * ({@link TargetOptions.PendingLimits#maxPerAddress()}) limit is reached.
     */
    boolean reserve(InetAddress addr) {
        if (node.incrementAndGet() > limits.maxPerNode()) {
            node.decrementAndGet();
            return false;
        }
        boolean[] ok = {false};
        byAddress.compute(addr, (k, v) -> {
            int n = v == null ? 0 : v;
            if (n >= limits.maxPerAddress()) {
                return v;
            }
            ok[0] = true;
            return n + 1;
        });
        if (!ok[0]) {
            node.decrementAndGet();
        }
        return ok[0];
    }

    /** Undoes one {@link #reserve} of {@code addr}. */
    void release(InetAddress addr) {
        byAddress.computeIfPresent(addr, (k, v) -> v <= 1 ? null : v - 1);
        node.decrementAndGet();
    }

    /**
     * The queue is no longer pending (its Connect succeeded, or it is torn down): takes it off the counts.
     * Idempotent; called by whoever owns the queue (acceptor, handshake thread, then its poller).
     */
    void done(RdmaQueue q) {
        if (q.pending) {
            q.pending = false;
            release(q.peerAddress == null ? UNKNOWN_PEER : q.peerAddress);
        }
    }
}
