package io.rdmablock.node.replica;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;


/**
 * The write side of one host I/O queue of a primary: every write-type command (WRITE, FLUSH, WRITE ZEROES,
 * DATASET MANAGEMENT) goes to the local copy (started by the caller) and to every in-sync secondary through this
 * queue's {@link ForwardQueue}s, and completes once, with one merged status, when all of them did (the merge rule
 * of Mayastor's nexus {@code complete}: the host sees success only if the local copy succeeded and every copy that
 * did not is out of the in-sync set).
 *
 * <p>Per command slot, in order:
 * <ol>
 *   <li>{@link #begin}: refuses with Namespace Not Ready (retryable) when fewer copies than {@code minInSync} are in
 *       sync; marks the regions in the bitmaps of stale copies; forwards to each in-sync copy (or waits for its
 *       queue: connecting, or every slot busy) with the view's epoch.</li>
 *   <li>Children complete ({@link #localDone}, forwarded completions in {@link #poll}). A secondary that fails,
 *       times out or cannot be reached within the replica timeout is reported to the {@link ReplicaSet}.</li>
 *   <li>If a copy failed: waits until the set's view no longer lists it in sync (the management plane confirmed the
 *       drop, epoch + 1), then marks the command's regions in its bitmap.</li>
 *   <li>Waits until every bitmap the command marked is durable, then completes.</li>
 * </ol>
 *
 * <p>Reservation Conflict from a secondary (its epoch fence): to a command sent at an epoch below the set's current
 * view it is this primary's own bump (another copy was dropped meanwhile) and the command is sent again under the
 * current epoch; to a command sent at the current view it means the secondary accepted an epoch this primary does
 * not know (docs/failover.md "Old primary"): the command waits, unacknowledged, until the set has read the record
 * ({@link ReplicaSet#reportFenced}); deposed, it is answered {@link #ANA_TRANSITION} (as is every later command), a
 * higher epoch with this node still primary is adopted and the command sent again.
 *
 * <p>Resync (docs/resync.md): a copy {@link ReplicaSet.View#isSyncing syncing} gets every command too and its
 * completion is awaited, but its failure aborts its resync ({@link Resyncs#syncFailed}) instead of failing the
 * host's command; a failure seen while its resync declares it in sync ({@code promoting}) is settled once that is
 * decided (in sync by then: the ordinary drop). While a region walk runs ({@link RegionGate}), a command touching the
 * walked region is held ({@link #held}: nothing started anywhere) until the walker left it, then started through
 * the {@link Starter}; admitted commands are counted in the gate until they completed everywhere.
 *
 * <p>Threading: one owner thread (the host queue's poller) calls every method; completions of {@link ForwardQueue}s
 * arrive from within {@link #poll}. Preallocated per slot; no allocation or lock per command.
 */
public final class ReplicatedWrites implements RegionGate.Writer {
    /** Starts the local copy's execution of a command that was {@link #held}; called from within {@link #poll}. */
    public interface Starter {
        void startLocal(int slot);
    }

    /** Completion of a command slot, called from within {@link #localDone} or {@link #poll}. */
    public interface Completer {
        void completed(int slot, int nvmeStatus);
    }

    /** Namespace Not Ready with DNR clear: the host retries (NVMe Base 2.0 figure 100, SC 82h). */
    static final int NOT_READY = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_NAMESPACE_NOT_READY, false);
    /**
     * Asymmetric Access Transition (SCT 3h Path Related, SC 03h), DNR clear: the answer of a deposed primary (a
     * secondary accepted a later primary's epoch); the host retries, on this or another path (docs/failover.md).
     */
    public static final int ANA_TRANSITION = NvmeStatus.of(3, 0x03, false);
    /**
     * Longest wait for a forward queue's set-up (CM connect, Fabrics Connect, enable) before the copy is dropped:
     * system property {@value #OPEN_TIMEOUT_PROPERTY} in ms, default 10000 (a loaded machine or an emulated guest
     * needs more: the VM runner's children use 120000).
     */
    static final String OPEN_TIMEOUT_PROPERTY = "rdmablock.replica.openTimeoutMs";
    static final long OPEN_TIMEOUT_NS = Long.getLong(OPEN_TIMEOUT_PROPERTY, 10_000) * 1_000_000L;
    private static final int IDLE = 0;
    private static final int IN_FLIGHT = 1;
    private static final int WAIT_DROP = 2;
    private static final int WAIT_DURABLE = 3;
    private static final int HELD = 4;
    private static final byte UNCOUNTED = 0;
    private static final byte COUNTED = 1;
    private static final byte NOT_COUNTED = 2;

    private final ReplicaSet set;
    private final Completer done;
    private final Starter starter;
    private final RegionGate gate;
    private final long timeoutNs;
    private final int copiesCap;
    private final CopyQueues queues;
    private final CopyQueues.Failure queueFailed = this::copyFailed;
    private final ForwardCommand[] commands;
    private final int[] phase;
    private final int[] pending;
    private final long[] toSend;
    private final long[] sent;
    private final long[] failed;
    /** Syncing copies whose forward of the slot failed (their resync aborts; settled before completion). */
    private final long[] syncFailed;
    /** The slot's count in the region gate: {@link #COUNTED} (striped), {@link #NOT_COUNTED} or none (held). */
    private final byte[] counted;
    private final boolean[] ignoreMin;
    /** Admitted while no region walk ran and not yet complete (not in the gate's counters). */
    private int notCounted;
    private volatile int drained;
    /** Copies that answered Reservation Conflict to the slot's current epoch: waiting for the record to be read. */
    private final long[] fenced;
    /** Resends of a slot answered ANA Transition by a secondary (its queue re-opening after a role change). */
    private final int[] transitions;
    /** The slot is answered ANA Transition (this primary was deposed while it was in flight). */
    private final boolean[] deposedSlot;
    private final int[] localStatus;
    private final long[] epoch;
    /** Per slot and copy ({@code slot * copiesCap + copy}): the epoch its last send to that copy carried. */
    private final long[] sentUnder;
    private final long[] sendDeadlineNs;
    /** [slot * copiesCap + copy]: bitmap generation that must be durable, 0 = none. */
    private final long[] needGen;
    private final int[] waiting;
    private int waitingCount;
    private boolean closed;

    /**
     * @param slots     command slots of the host queue (tags 0..slots-1)
     * @param entries   slots of each forward queue
     * @param timeoutNs replica timeout: longest wait for a secondary's answer or queue
     * @param pd        protection domain of the host queue's buffers (forward queues are created in it)
     */
    public ReplicatedWrites(ReplicaSet set, int slots, int entries, long timeoutNs, ProtectionDomain pd,
                            Completer done) {
        this(set, slots, entries, timeoutNs, pd, done, null);
    }

    /**
     * @param starter starts the local execution of a command that was {@link #held}; null: nothing is ever held
     *                (only for commands without a byte range, e.g. the activation FLUSH)
     */
    public ReplicatedWrites(ReplicaSet set, int slots, int entries, long timeoutNs, ProtectionDomain pd,
                            Completer done, Starter starter) {
        this.set = set;
        this.done = done;
        this.starter = starter;
        this.gate = set.gate();
        this.timeoutNs = timeoutNs;
        this.copiesCap = ReplicaSet.MAX_COPIES;
        this.queues = new CopyQueues(set, copiesCap, entries, Math.max(OPEN_TIMEOUT_NS, timeoutNs), pd,
                copy -> (tag, status) -> forwarded(copy, tag, status));
        this.commands = new ForwardCommand[slots];
        for (int i = 0; i < slots; i++) {
            commands[i] = new ForwardCommand();
        }
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
        this.waiting = new int[slots];
        this.drained = gate.state();
        gate.register(this);
        queues.adopt(System.nanoTime(), queueFailed);
    }

    @Override
    public int drainedState() {
        return drained;
    }

    /** True when the command of {@code slot} was held by a region walk: the caller must not start it locally. */
    public boolean held(int slot) {
        return phase[slot] == HELD;
    }

    /** The command slot's preallocated forward command, to fill before {@link #begin}. */
    public ForwardCommand command(int slot) {
        return commands[slot];
    }

    /**
     * Starts a write-type command whose {@link #command} is filled. On 0 the caller starts the local copy's
     * execution and later calls {@link #localDone}; otherwise the command must be answered with the returned
     * status at once (nothing was started).
     */
    public int begin(int slot, long nowNs) {
        return begin(slot, nowNs, false);
    }

    /**
     * As {@link #begin(int, long)}; {@code ignoreMinInSync}: forwarded even below min-in-sync (the activation FLUSH
     * of a new primary, which must carry the epoch to every in-sync secondary whatever their number).
     */
    public int begin(int slot, long nowNs, boolean ignoreMinInSync) {
        if (closed) {
            return NvmeStatus.generic(NvmeStatus.SC_ABORTED_SQ_DELETION);
        }
        if (set.deposed()) {
            return ANA_TRANSITION;
        }
        ForwardCommand c = commands[slot];
        int gs = gate.state(); // the one volatile read when no walk runs
        if (!RegionGate.active(gs)) {
            counted[slot] = NOT_COUNTED;
            notCounted++;
        } else if (gate.tryEnter(c.offsetBytes, c.lengthBytes)) {
            counted[slot] = COUNTED;
        } else if (starter != null) {
            counted[slot] = UNCOUNTED;
            phase[slot] = HELD;
            ignoreMin[slot] = ignoreMinInSync;
            addWaiting(slot);
            return 0;
        } else {
            counted[slot] = NOT_COUNTED;
            notCounted++;
        }
        int status = admit(slot, nowNs, ignoreMinInSync); // the view is read after the gate (docs/resync.md)
        if (status != 0) {
            release(slot);
        }
        return status;
    }

    /** Forwards an admitted command: the rest of {@link #begin}. */
    private int admit(int slot, long nowNs, boolean ignoreMinInSync) {
        ReplicaSet.View v = set.view();
        if (!ignoreMinInSync && v.inSyncCount() < v.minInSync()) {
            return NOT_READY;
        }
        queues.adopt(nowNs, queueFailed);
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
        sendDeadlineNs[slot] = nowNs + timeoutNs;
        if (stillWaiting(slot, nowNs)) {
            addWaiting(slot);
        }
        return 0;
    }

    /** The local copy finished the command of {@code slot} with {@code nvmeStatus}. */
    public void localDone(int slot, int nvmeStatus) {
        if (phase[slot] != IN_FLIGHT) {
            return;
        }
        localStatus[slot] = nvmeStatus;
        childDone(slot);
    }

    /** The slot no longer counts in the region gate (completed, refused or forgotten). */
    private void release(int slot) {
        if (counted[slot] == COUNTED) {
            gate.exit(commands[slot].offsetBytes, commands[slot].lengthBytes);
        } else if (counted[slot] == NOT_COUNTED) {
            notCounted--;
        }
        counted[slot] = UNCOUNTED;
    }

    /** Polls the forward queues and the waiting commands; returns the number of events. */
    public int poll(long nowNs) {
        int gs = gate.state();
        if (gs != drained && notCounted == 0) {
            drained = gs; // no write admitted uncounted is in flight: a walk that started may go on
        }
        int work = queues.adopt(nowNs, queueFailed);
        work += queues.poll(nowNs, queueFailed);
        for (int w = 0; w < waitingCount; w++) {
            int slot = waiting[w];
            if (!stillWaiting(slot, nowNs)) {
                waiting[w--] = waiting[--waitingCount];
                work++;
            }
        }
        return work;
    }

    /** True when no command is in flight or waiting. */
    public boolean idle() {
        for (int p : phase) {
            if (p != IDLE) {
                return false;
            }
        }
        return true;
    }

    /**
     * Teardown of the host queue: closes every forward queue (the secondaries can no longer read the host queue's
     * buffers) and forgets every command (the host queue answers none of them). Idempotent.
     */
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        queues.closeAll();
        for (int slot = 0; slot < phase.length; slot++) {
            if (phase[slot] != IDLE) {
                release(slot);
            }
        }
        gate.unregister(this);
        java.util.Arrays.fill(phase, IDLE);
        waitingCount = 0;
    }

    private void forwarded(int copy, int slot, int status) {
        long bit = 1L << copy;
        if (closed || phase[slot] != IN_FLIGHT || (sent[slot] & bit) == 0) {
            return; // late, duplicate or after teardown
        }
        sent[slot] &= ~bit;
        ReplicaSet.View v = set.view();
        // the epoch this copy refused is the one its send carried: another copy's resend may have moved the slot's on
        long under = sentUnder[slot * copiesCap + copy];
        if (isReservationConflict(status) && under < v.epoch() && (v.targets() & bit) != 0) {
            // the secondary already accepted the epoch of a later change of the in-sync set (another copy was
            // dropped meanwhile): this command is still this primary's; send it again under the current epoch
            epoch[slot] = v.epoch();
            commands[slot].epoch = v.epoch();
            toSend[slot] |= bit;
            sendDeadlineNs[slot] = System.nanoTime() + timeoutNs;
            addWaiting(slot);
            return;
        }
        if (isReservationConflict(status) && under >= v.epoch()) {
            // the secondary accepted an epoch above this primary's view: not this primary's own bump. Neither resent
            // nor acknowledged until the record is read: another primary deposes this one (ANA Transition), a
            // higher epoch with this node still primary is adopted and the command sent again
            fenced[slot] |= bit;
            set.reportFenced(set.view().copies()[copy], under);
            addWaiting(slot);
            return;
        }
        if (isAnaTransition(status) && (v.targets() & bit) != 0 && transitions[slot] < MAX_TRANSITION_RESENDS) {
            // the secondary's queue is re-opening its volume I/O after a change of its role (e.g. it learnt of this
            // primary's promotion): a passing state, not a failed copy; sent again (bounded)
            transitions[slot]++;
            toSend[slot] |= bit;
            sendDeadlineNs[slot] = System.nanoTime() + timeoutNs;
            addWaiting(slot);
            return;
        }
        if (status != 0) {
            String why = status == ForwardQueue.TIMED_OUT ? "no answer within " + timeoutNs / 1_000_000 + " ms"
                    : status == ForwardQueue.PATH_LOST ? "connection lost" : "status " + NvmeStatus.name(status);
            childFailed(slot, copy, why);
        }
        childDone(slot);
    }

    /** Resends allowed per command answered ANA Transition by a secondary before it counts as failed. */
    static final int MAX_TRANSITION_RESENDS = 64;

    /** Asymmetric Access Transition (SCT 3h, SC 03h). */
    private static boolean isAnaTransition(int status) {
        return status > 0 && NvmeStatus.sct(status) == 3 && NvmeStatus.sc(status) == 0x03;
    }

    /** Reservation Conflict (SCT 0, SC 83h), whatever DNR says: the secondary's epoch fence. */
    private static boolean isReservationConflict(int status) {
        return status > 0 && NvmeStatus.sct(status) == NvmeStatus.SCT_GENERIC
                && NvmeStatus.sc(status) == NvmeStatus.SC_RESERVATION_CONFLICT;
    }

    private void childDone(int slot) {
        if (--pending[slot] > 0) {
            return;
        }
        if (stillWaiting(slot, System.nanoTime())) {
            addWaiting(slot);
        }
    }

    /**
     * Moves a slot on as far as it goes; true while it must stay on the waiting list (forwards not yet sent, drop
     * not yet confirmed, bitmap not yet durable), false when it completed or only waits for completions.
     */
    private boolean stillWaiting(int slot, long nowNs) {
        if (phase[slot] == HELD) {
            if (closed || set.deposed()) {
                phase[slot] = IDLE;
                done.completed(slot, ANA_TRANSITION);
                return false;
            }
            if (!gate.tryEnter(commands[slot].offsetBytes, commands[slot].lengthBytes)) {
                return true; // the walker is still on its region
            }
            counted[slot] = COUNTED;
            int status = admit(slot, nowNs, ignoreMin[slot]);
            if (status != 0) {
                release(slot);
                phase[slot] = IDLE;
                done.completed(slot, status);
                return false;
            }
            starter.startLocal(slot);
            return stillWaiting(slot, nowNs);
        }
        if (phase[slot] == IN_FLIGHT) {
            if (fenced[slot] != 0) {
                resolveFenced(slot, nowNs);
            }
            if (toSend[slot] != 0) {
                send(slot, nowNs);
            }
            if (pending[slot] > 0) {
                return toSend[slot] != 0 || fenced[slot] != 0;
            }
            if (syncFailed[slot] != 0 && !settleSyncFailed(slot)) {
                return true; // a failed syncing copy is being declared in sync: wait for the outcome
            }
            phase[slot] = failed[slot] != 0 ? WAIT_DROP : WAIT_DURABLE;
        }
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
     * Settles the copies that refused the slot's epoch, once the set knows more: deposed → the slot is answered ANA
     * Transition; a higher epoch with the copy in sync → sent again under it; the copy dropped → a failed child.
     */
    private void resolveFenced(int slot, long nowNs) {
        ReplicaSet.View v = set.view();
        long rest = fenced[slot];
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            if (set.deposed()) {
                fenced[slot] &= ~bit;
                deposedSlot[slot] = true;
                pending[slot]--;
            } else if ((v.targets() & bit) == 0) {
                fenced[slot] &= ~bit;
                failed[slot] |= bit;
                pending[slot]--;
            } else if (v.epoch() > epoch[slot]) {
                fenced[slot] &= ~bit;
                epoch[slot] = v.epoch();
                commands[slot].epoch = v.epoch();
                toSend[slot] |= bit;
                sendDeadlineNs[slot] = nowNs + timeoutNs;
            }
        }
    }

    private void finish(int slot, ReplicaSet.View v) {
        phase[slot] = IDLE;
        release(slot);
        if (deposedSlot[slot]) {
            done.completed(slot, ANA_TRANSITION);
            return;
        }
        int status = localStatus[slot];
        if (status == 0 && failed[slot] != 0 && v.inSyncCount() < v.minInSync()) {
            status = NOT_READY; // it landed on every copy still in sync, but on fewer than minInSync
        }
        done.completed(slot, status);
    }

    /** Sends to the copies not yet sent to; a copy without a queue (failed) or past the deadline fails its child. */
    private void send(int slot, long nowNs) {
        long rest = toSend[slot];
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            ForwardQueue q = queues.get(copy);
            if (q != null && q.submit(commands[slot], slot)) {
                sentUnder[slot * copiesCap + copy] = commands[slot].epoch;
                sent[slot] |= bit;
                toSend[slot] &= ~bit;
            } else if (q == null ? !queues.opening(copy) : nowNs - sendDeadlineNs[slot] > 0) {
                // no queue and none coming (its set-up failed or took too long: the open deadline), or a live
                // queue without a free slot for longer than the replica timeout
                toSend[slot] &= ~bit;
                pending[slot]--;
                childFailed(slot, copy, q == null ? "no queue to the secondary"
                        : "no free slot on the queue to the secondary within " + timeoutNs / 1_000_000 + " ms");
            }
        }
    }

    /** The queue to {@code copy} cannot be had: an in-sync copy is dropped, a syncing one's resync aborts. */
    private void copyFailed(int copy, String why) {
        ReplicaSet.View v = set.view();
        if (v.isSyncing(copy)) {
            syncAbort(v.copies()[copy], why);
        } else {
            set.reportFailure(v.copies()[copy], v.epoch(), why);
        }
    }

    /**
     * The forward of {@code slot} to {@code copy} failed: a syncing copy's resync aborts (the host's command does not
     * fail); any other copy fails the child (dropped from the in-sync set before the command completes).
     */
    private void childFailed(int slot, int copy, String why) {
        ReplicaSet.View v = set.view();
        long bit = 1L << copy;
        if (v.isSyncing(copy)) {
            syncFailed[slot] |= bit;
            syncAbort(v.copies()[copy], why);
        } else {
            failed[slot] |= bit;
            set.reportFailure(v.copies()[copy], epoch[slot], why);
        }
    }

    private void syncAbort(ReplicaSet.Copy c, String why) {
        c.syncAbort = true; // before reading promoting (settleSyncFailed): the resync sees one or the other
        Resyncs r = set.resyncs();
        if (r != null) {
            r.syncFailed(c, why);
        }
    }

    /**
     * Settles the syncing copies that failed the slot: still being declared in sync → not yet (false); in sync by
     * now → a failed child (the ordinary drop); otherwise its resync aborted: the slot's regions are marked in its
     * bitmap (normally already) and it does not count.
     */
    private boolean settleSyncFailed(int slot) {
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

    private void addWaiting(int slot) {
        for (int i = 0; i < waitingCount; i++) {
            if (waiting[i] == slot) {
                return;
            }
        }
        waiting[waitingCount++] = slot;
    }
}
