package io.rdmablock.node.replica;

/**
 * The in-flight table of one {@link ReplicatedWrites}: per command slot of the host queue (tags {@code 0 ..
 * slots - 1}) the state of its write and the bookkeeping of its acknowledgement, i.e. which children (the local copy
 * and one forward per target copy) still owe an answer, which copies failed it, which bitmap generations must be
 * durable, and the one merged status it completes with ({@link #acknowledge}).
 *
 * <p>Shapes: the per-slot arrays have {@code slots} elements; {@link #sentUnder} and {@link #needGen} have
 * {@code slots x copiesCap}, index {@code slot * copiesCap + copy}. A set of copies is a bit mask (bit
 * {@link ReplicaSet.Copy#index}). Epochs are the record's; deadlines are {@link System#nanoTime} nanoseconds.
 * {@link #phase} is one of {@link #IDLE}, {@link #IN_FLIGHT}, {@link #WAIT_DROP}, {@link #WAIT_DURABLE},
 * {@link #HELD}; {@link #counted}, the slot's count in the region gate, one of {@link #UNCOUNTED}, {@link #COUNTED},
 * {@link #NOT_COUNTED}.
 *
 * <p>Threading: the owner thread of its {@link ReplicatedWrites} only (which reads and writes the fields directly).
 * Preallocated; no allocation or lock per command.
 */
final class InflightWrites {
    static final int IDLE = 0;
    static final int IN_FLIGHT = 1;
    static final int WAIT_DROP = 2;
    static final int WAIT_DURABLE = 3;
    static final int HELD = 4;
    static final byte UNCOUNTED = 0;
    static final byte COUNTED = 1;
    static final byte NOT_COUNTED = 2;

    private final ReplicaSet set;
    private final RegionGate gate;
    private final ReplicatedWrites.Completer done;
    /** Copies per slot in {@link #sentUnder} and {@link #needGen}: {@link ReplicaSet#MAX_COPIES}. */
    final int copiesCap;
    /** The slot's forward command (shared with its {@link ReplicatedWrites}). */
    private final ForwardCommand[] commands;
    final int[] phase;
    /** Children (local copy, forwards) of the slot that have not answered yet. */
    final int[] pending;
    /** Copies the slot is still to be sent to. */
    final long[] toSend;
    /** Copies the slot was sent to that have not answered yet. */
    final long[] sent;
    /** Copies that failed the slot (dropped from the in-sync set before it completes). */
    final long[] failed;
    /** Syncing copies whose forward of the slot failed (their resync aborts; settled before completion). */
    final long[] syncFailed;
    /** The slot's count in the region gate: {@link #COUNTED} (striped), {@link #NOT_COUNTED} or none (held). */
    final byte[] counted;
    final boolean[] ignoreMin;
    /** Admitted while no region walk ran and not yet complete (not in the gate's counters). */
    int notCounted;
    /** Copies that answered Reservation Conflict to the slot's current epoch: waiting for the record to be read. */
    final long[] fenced;
    /** Resends of a slot answered ANA Transition by a secondary (its queue re-opening after a role change). */
    final int[] transitions;
    /** The slot is answered ANA Transition (this primary was deposed while it was in flight). */
    final boolean[] deposedSlot;
    final int[] localStatus;
    final long[] epoch;
    /** Per slot and copy ({@code slot * copiesCap + copy}): the epoch its last send to that copy carried. */
    final long[] sentUnder;
    final long[] sendDeadlineNs;
    /** [slot * copiesCap + copy]: bitmap generation that must be durable, 0 = none. */
    final long[] needGen;

    InflightWrites(ReplicaSet set, ForwardCommand[] commands, ReplicatedWrites.Completer done) {
        int slots = commands.length;
        this.set = set;
        this.gate = set.gate();
        this.done = done;
        this.copiesCap = ReplicaSet.MAX_COPIES;
        this.commands = commands;
        this.phase = new int[slots];
        this.pending = new int[slots];
        this.toSend = new long[slots];
        this.sent = new long[slots];
        this.failed = new long[slots];
        this.syncFailed = new long[slots];
        this.counted = new byte[slots];
        this.ignoreMin = new boolean[slots];
        this.fenced = new long[slots];
        this.transitions = new int[slots];
        this.deposedSlot = new boolean[slots];
        this.localStatus = new int[slots];
        this.epoch = new long[slots];
        this.sentUnder = new long[slots * copiesCap];
        this.sendDeadlineNs = new long[slots];
        this.needGen = new long[slots * copiesCap];
    }

    /**
     * The slot is admitted under view {@code v}: in flight at its epoch, to be sent to its targets by
     * {@code sendDeadlineNs}, awaiting them and the local copy; its regions are marked in the bitmaps of the copies
     * that are not in sync (the flusher woken when one was).
     */
    void open(int slot, ReplicaSet.View v, long sendDeadline) {
        ForwardCommand c = commands[slot];
        c.epoch = v.epoch();
        epoch[slot] = v.epoch();
        phase[slot] = IN_FLIGHT;
        failed[slot] = 0;
        syncFailed[slot] = 0;
        fenced[slot] = 0;
        transitions[slot] = 0;
        deposedSlot[slot] = false;
        sent[slot] = 0;
        localStatus[slot] = 0;
        int base = slot * copiesCap;
        boolean marked = false;
        for (ReplicaSet.Copy copy : v.copies()) {
            needGen[base + copy.index] = 0;
            if (!v.isInSync(copy.index)) {
                DirtyRegions d = copy.missed;
                if (d != null && c.lengthBytes > 0) {
                    long g = d.mark(c.offsetBytes, c.lengthBytes);
                    needGen[base + copy.index] = g;
                    marked |= g > 0;
                }
            }
        }
        if (marked) {
            set.bitmapMarked();
        }
        toSend[slot] = v.targets();
        pending[slot] = 1 + Long.bitCount(v.targets());
        sendDeadlineNs[slot] = sendDeadline;
    }

    /** The slot no longer counts in the region gate (completed, refused or forgotten). */
    void release(int slot) {
        if (counted[slot] == COUNTED) {
            gate.exit(commands[slot].offsetBytes, commands[slot].lengthBytes);
        } else if (counted[slot] == NOT_COUNTED) {
            notCounted--;
        }
        counted[slot] = UNCOUNTED;
    }

    /** True when no command is in flight or waiting. */
    boolean idle() {
        for (int p : phase) {
            if (p != IDLE) {
                return false;
            }
        }
        return true;
    }

    /** Teardown: every slot not idle leaves the region gate ({@link #release}). */
    void releaseAll() {
        for (int slot = 0; slot < phase.length; slot++) {
            if (phase[slot] != IDLE) {
                release(slot);
            }
        }
    }

    /** Teardown: every slot is forgotten (idle), none answered. */
    void forgetAll() {
        java.util.Arrays.fill(phase, IDLE);
    }

    /**
     * Every child answered: the acknowledgement. {@link #WAIT_DROP}: waits until the set's view no longer lists the
     * failed copies in sync (the management plane confirmed the drop; deposed, it never will: the slot is answered
     * ANA Transition), then marks the command's regions in their bitmaps. {@link #WAIT_DURABLE}: waits until every
     * bitmap generation the slot needs is durable, then completes it ({@link #finish}).
     *
     * @return true while the slot must stay on the waiting list (drop not yet confirmed, bitmap not yet durable)
     */
    boolean acknowledge(int slot) {
        ReplicaSet.View v = set.view();
        if (phase[slot] == WAIT_DROP && set.deposed()) {
            // the drop will never be confirmed (the record names another primary): not acknowledged
            deposedSlot[slot] = true;
            finish(slot, v);
            return false;
        }
        if (phase[slot] == WAIT_DROP) {
            if ((v.inSync() & failed[slot]) != 0) {
                return true; // the management plane has not confirmed the drop yet
            }
            ForwardCommand c = commands[slot];
            int base = slot * copiesCap;
            boolean marked = false;
            for (ReplicaSet.Copy copy : v.copies()) {
                if ((failed[slot] & (1L << copy.index)) != 0 && copy.missed != null && c.lengthBytes > 0) {
                    long g = copy.missed.mark(c.offsetBytes, c.lengthBytes);
                    needGen[base + copy.index] = Math.max(needGen[base + copy.index], g);
                    marked |= g > 0;
                }
            }
            if (marked) {
                set.bitmapMarked();
            }
            phase[slot] = WAIT_DURABLE;
        }
        if (phase[slot] == WAIT_DURABLE) {
            int base = slot * copiesCap;
            for (ReplicaSet.Copy copy : v.copies()) {
                long g = needGen[base + copy.index];
                if (g > 0 && (copy.missed == null || copy.missed.durableGeneration() < g)) {
                    return true;
                }
            }
            finish(slot, v);
        }
        return false;
    }

    /**
     * Completes the slot with the merged status: ANA Transition when deposed, else the local copy's, turned into
     * Namespace Not Ready when a copy failed and fewer than min-in-sync copies are left in sync.
     */
    private void finish(int slot, ReplicaSet.View v) {
        phase[slot] = IDLE;
        release(slot);
        if (deposedSlot[slot]) {
            done.completed(slot, ReplicatedWrites.ANA_TRANSITION);
            return;
        }
        int status = localStatus[slot];
        if (status == 0 && failed[slot] != 0 && v.inSyncCount() < v.minInSync()) {
            status = ReplicatedWrites.NOT_READY; // it landed on every copy still in sync, but on fewer than minInSync
        }
        done.completed(slot, status);
    }

    /**
     * Settles the syncing copies that failed the slot: still being declared in sync → not yet (false); in sync by
     * now → a failed child (the ordinary drop); otherwise its resync aborted: the slot's regions are marked in its
     * bitmap (normally already) and it does not count.
     */
    boolean settleSyncFailed(int slot) {
        long rest = syncFailed[slot];
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            ReplicaSet.Copy cp = set.view().copies()[copy];
            if (cp.promoting) {
                return false;
            }
            ReplicaSet.View v = set.view(); // read after promoting
            syncFailed[slot] &= ~bit;
            if (v.isInSync(copy)) {
                failed[slot] |= bit;
                set.reportFailure(cp, epoch[slot], "a write forwarded while it resynced failed");
                continue;
            }
            DirtyRegions d = cp.missed;
            ForwardCommand c = commands[slot];
            if (d != null && c.lengthBytes > 0) {
                long g = d.mark(c.offsetBytes, c.lengthBytes);
                int i = slot * copiesCap + copy;
                needGen[i] = Math.max(needGen[i], g);
                if (g > 0) {
                    set.bitmapMarked();
                }
            }
        }
        return true;
    }
}
