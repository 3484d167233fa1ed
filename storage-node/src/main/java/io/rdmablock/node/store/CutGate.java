package io.rdmablock.node.store;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The snapshot barrier of one mapped volume (docs/snapshots.md, "The cut"): every write-type command (WRITE, WRITE
 * ZEROES, TRIM) is admitted into the current phase and counted there until it completes. {@link #close} opens a new
 * phase that holds its commands (they wait, parked in their queue, and touch nothing) and returns the old one; once
 * the old phase has drained (every command admitted before the close completed), the caller freezes the map and
 * {@link #release}s the new phase. So a snapshot holds every write completed before it was asked for and every
 * write admitted before the barrier, and none admitted after it; I/O is held only while the barrier passes.
 *
 * <p>Cost per command when no snapshot is being taken: one volatile read and one atomic increment at admission, one
 * atomic decrement at completion; no lock, no allocation (the pattern of {@link EpochFence}).
 */
final class CutGate {
    private static final long CLOSED = Long.MIN_VALUE;

    /** Commands admitted in one phase; the sign bit is set when the phase is closed. */
    static final class Phase {
        private final AtomicLong count = new AtomicLong();
        private volatile boolean held;

        private Phase(boolean held) {
            this.held = held;
        }

        /** Ends one command admitted by {@link CutGate#admit}. */
        void exit() {
            count.decrementAndGet();
        }

        /** True when the phase is closed and none of its commands is in flight. */
        boolean drained() {
            return count.get() == CLOSED;
        }

        /** Commands of this phase still in flight. */
        long inFlight() {
            return count.get() & Long.MAX_VALUE;
        }
    }

    private volatile Phase current = new Phase(false);

    /** Admits one command; its phase (call {@link Phase#exit} when it completes), or null: wait and try again. */
    Phase admit() {
        Phase p = current;
        if (p.held) {
            return null;
        }
        if (p.count.incrementAndGet() < 0) { // closed under us: the next phase decides
            p.count.decrementAndGet();
            return null;
        }
        return p;
    }

    /** Starts a barrier (callers serialized): new commands wait from now on; returns the phase to drain. */
    Phase close() {
        Phase old = current;
        current = new Phase(true);
        old.count.getAndAdd(CLOSED);
        return old;
    }

    /** Ends a barrier: held commands go on. */
    void release() {
        current.held = false;
    }
}
