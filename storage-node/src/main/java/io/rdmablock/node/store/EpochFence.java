package io.rdmablock.node.store;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory side of a volume's accepted replication epoch (docs/failover.md, "Fencing on a secondary"): the
 * highest epoch accepted, and per epoch the number of commands admitted under it and not yet completed, so that a
 * raise is a barrier. One per {@link StoreVolume} ({@link StoreVolume#epochFence()}), shared by every queue of every
 * poller; raised only by {@link VolumeStore#raiseEpoch} after the new epoch is durable.
 *
 * <p>Protocol, per write-type command carrying epoch {@code e}:
 * <ol>
 * <li>{@link #enter}{@code (e)}: the {@link Phase} of {@code e} when it is the current epoch (the command is counted
 *     in it), else null (below: refuse; above: raise first, then enter again);</li>
 * <li>the command may touch the store only once its phase is {@link Phase#ready()}: every command of every lower
 *     epoch admitted before the raise to {@code e} has {@link Phase#exit exited}. A phase that is
 *     {@link Phase#superseded()} before it got ready (an even higher epoch was raised) must not execute: its
 *     commands are refused;</li>
 * <li>{@link Phase#exit()} exactly once when the command is complete in the store (or refused).</li>
 * </ol>
 * Cost of the common case (no epoch change): one volatile read and one atomic increment in {@link #enter}, one
 * atomic decrement in {@link Phase#exit}, one volatile read in {@link Phase#ready()}; no lock, no allocation. A raise
 * allocates one {@link Phase}.
 *
 * <p>Counting: a phase's counter is its commands in flight; its sign bit is set when a higher epoch is raised
 * (closed). An {@link #enter} whose increment sees the bit set undoes it, so once a closed phase's counter reads
 * exactly {@link Long#MIN_VALUE} (closed, none in flight) no command of it is in flight and none can be admitted
 * any more.
 */
public final class EpochFence {
    private static final long CLOSED = Long.MIN_VALUE;

    /** The phase of the highest accepted epoch. Replaced (under the store's epoch lock) by {@link #raise}. */
    private volatile Phase current;

    /** A fence at {@code epoch} (the persisted value; 0 = none accepted yet), with nothing in flight. */
    EpochFence(long epoch) {
        current = new Phase(epoch, null);
    }

    /** The highest accepted epoch (0 = none); one volatile read. */
    public long epoch() {
        return current.epoch;
    }

    /**
     * True when no command of an epoch below the current one is in flight any more (every one admitted before the
     * last raise completed): what a newly promoted primary waits for on its own copy before it serves. Any thread.
     */
    public boolean settled() {
        return current.ready();
    }

    /**
     * Admits one command of {@code epoch} into the current phase (counted until its {@link Phase#exit}).
     *
     * @return the phase the command counts in when {@code epoch} is the current epoch; null when it is not (below:
     * the command is refused; above: {@link VolumeStore#raiseEpoch} first, then call this again)
     */
    public Phase enter(long epoch) {
        while (true) {
            Phase p = current;
            if (p.epoch != epoch) {
                return null;
            }
            if (p.inFlight.incrementAndGet() > 0) {
                return p;
            }
            // closed by a raise since the read of current: undo, and look again (the new phase was published
            // before the old one was closed, so the next round reads it)
            p.inFlight.decrementAndGet();
        }
    }

    /**
     * Makes {@code epoch} the current epoch: publishes its phase, then closes the previous one (whose commands in
     * flight the new phase waits for). Callers: {@link VolumeStore} under its epoch lock, after the epoch is durable
     * (or at load). Does nothing when {@code epoch} is not above the current one.
     */
    void raise(long epoch) {
        Phase old = current;
        if (epoch <= old.epoch) {
            return;
        }
        current = new Phase(epoch, old);
        old.inFlight.getAndAdd(CLOSED);
    }

    /**
     * The commands admitted under one epoch. {@link #exit} is called from any thread (the poller whose queue
     * admitted the command).
     */
    public static final class Phase {
        private final long epoch;
        /** Commands in flight; sign bit: closed (a higher epoch was raised). */
        private final AtomicLong inFlight = new AtomicLong();
        /** The phase raised before this one, until every phase before this one drained (then null). */
        private volatile Phase previous;

        private Phase(long epoch, Phase previous) {
            this.epoch = epoch;
            this.previous = previous;
        }

        /** The epoch of this phase. */
        public long epoch() {
            return epoch;
        }

        /**
         * True when every command of every lower epoch admitted before this epoch was raised has exited: commands of
         * this phase may execute. Once true, stays true (one volatile read from then on). Any thread.
         */
        public boolean ready() {
            Phase q = previous;
            if (q == null) {
                return true;
            }
            for (Phase p = q; p != null; p = p.previous) {
                if (p.inFlight.get() != CLOSED) {
                    return false; // still has commands in flight (or a transient, undone increment)
                }
            }
            previous = null;
            return true;
        }

        /** True when a higher epoch has been raised after this one (its commands are refused from then on). */
        public boolean superseded() {
            return inFlight.get() < 0;
        }

        /** Commands of this phase in flight now (admitted, not exited). */
        public long inFlight() {
            return inFlight.get() & Long.MAX_VALUE;
        }

        /** One command admitted by {@link EpochFence#enter} completed (or was refused): exactly once per command. */
        public void exit() {
            inFlight.decrementAndGet();
        }

        @Override
        public String toString() {
            return "Phase[epoch=" + epoch + ", inFlight=" + inFlight() + ", superseded=" + superseded() + "]";
        }
    }
}
