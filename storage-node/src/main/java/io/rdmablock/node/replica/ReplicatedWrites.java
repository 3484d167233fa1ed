package io.rdmablock.node.replica;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import static io.rdmablock.node.replica.InflightWrites.COUNTED;
import static io.rdmablock.node.replica.InflightWrites.HELD;
import static io.rdmablock.node.replica.InflightWrites.IDLE;
import static io.rdmablock.node.replica.InflightWrites.IN_FLIGHT;
import static io.rdmablock.node.replica.InflightWrites.NOT_COUNTED;
import static io.rdmablock.node.replica.InflightWrites.UNCOUNTED;
import static io.rdmablock.node.replica.InflightWrites.WAIT_DROP;
import static io.rdmablock.node.replica.InflightWrites.WAIT_DURABLE;

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
 * <p>The per-slot state and the acknowledgement (step 1's bitmap marking, steps 3 and 4, the merged status) are the {@link InflightWrites}
 * table; this class forwards and drives the slots through it.
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

    private final ReplicaSet set;
    private final Completer done;
    private final Starter starter;
    private final RegionGate gate;
    private final long timeoutNs;
    private final int copiesCap;
    private final CopyQueues queues;
    private final CopyQueues.Failure queueFailed = this::copyFailed;
    private final ForwardCommand[] commands;
    /** Per slot: phase, children owed, copies to send to / sent / failed / fenced, epochs, bitmap generations. */
    private final InflightWrites inflight;
    private final int[] waiting;
    private int waitingCount;
    private volatile int drained;
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
        this.inflight = new InflightWrites(set, commands, done);
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
        return inflight.phase[slot] == HELD;
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
            inflight.counted[slot] = NOT_COUNTED;
            inflight.notCounted++;
        } else if (gate.tryEnter(c.offsetBytes, c.lengthBytes)) {
            inflight.counted[slot] = COUNTED;
        } else if (starter != null) {
            inflight.counted[slot] = UNCOUNTED;
            inflight.phase[slot] = HELD;
            inflight.ignoreMin[slot] = ignoreMinInSync;
            addWaiting(slot);
            return 0;
        } else {
            inflight.counted[slot] = NOT_COUNTED;
            inflight.notCounted++;
        }
        int status = admit(slot, nowNs, ignoreMinInSync); // the view is read after the gate (docs/resync.md)
        if (status != 0) {
            inflight.release(slot);
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
        inflight.open(slot, v, nowNs + timeoutNs);
        if (stillWaiting(slot, nowNs)) {
            addWaiting(slot);
        }
        return 0;
    }

    /** The local copy finished the command of {@code slot} with {@code nvmeStatus}. */
    public void localDone(int slot, int nvmeStatus) {
        if (inflight.phase[slot] != IN_FLIGHT) {
            return;
        }
        inflight.localStatus[slot] = nvmeStatus;
        childDone(slot);
    }

    /** Polls the forward queues and the waiting commands; returns the number of events. */
    public int poll(long nowNs) {
        int gs = gate.state();
        if (gs != drained && inflight.notCounted == 0) {
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
        return inflight.idle();
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
        inflight.releaseAll();
        gate.unregister(this);
        inflight.forgetAll();
        waitingCount = 0;
    }

    private void forwarded(int copy, int slot, int status) {
        long bit = 1L << copy;
        if (closed || inflight.phase[slot] != IN_FLIGHT || (inflight.sent[slot] & bit) == 0) {
            return; // late, duplicate or after teardown
        }
        inflight.sent[slot] &= ~bit;
        ReplicaSet.View v = set.view();
        // the epoch this copy refused is the one its send carried: another copy's resend may have moved the slot's on
        long under = inflight.sentUnder[slot * copiesCap + copy];
        if (isReservationConflict(status) && under < v.epoch() && (v.targets() & bit) != 0) {
            // the secondary already accepted the epoch of a later change of the in-sync set (another copy was
            // dropped meanwhile): this command is still this primary's; send it again under the current epoch
            inflight.epoch[slot] = v.epoch();
            commands[slot].epoch = v.epoch();
            inflight.toSend[slot] |= bit;
            inflight.sendDeadlineNs[slot] = System.nanoTime() + timeoutNs;
            addWaiting(slot);
            return;
        }
        if (isReservationConflict(status) && under >= v.epoch()) {
            // the secondary accepted an epoch above this primary's view: not this primary's own bump. Neither resent
            // nor acknowledged until the record is read: another primary deposes this one (ANA Transition), a
            // higher epoch with this node still primary is adopted and the command sent again
            inflight.fenced[slot] |= bit;
            set.reportFenced(set.view().copies()[copy], under);
            addWaiting(slot);
            return;
        }
        if (isAnaTransition(status) && (v.targets() & bit) != 0
                && inflight.transitions[slot] < MAX_TRANSITION_RESENDS) {
            // the secondary's queue is re-opening its volume I/O after a change of its role (e.g. it learnt of this
            // primary's promotion): a passing state, not a failed copy; sent again (bounded)
            inflight.transitions[slot]++;
            inflight.toSend[slot] |= bit;
            inflight.sendDeadlineNs[slot] = System.nanoTime() + timeoutNs;
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
        if (--inflight.pending[slot] > 0) {
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
        if (inflight.phase[slot] == HELD) {
            if (closed || set.deposed()) {
                inflight.phase[slot] = IDLE;
                done.completed(slot, ANA_TRANSITION);
                return false;
            }
            if (!gate.tryEnter(commands[slot].offsetBytes, commands[slot].lengthBytes)) {
                return true; // the walker is still on its region
            }
            inflight.counted[slot] = COUNTED;
            int status = admit(slot, nowNs, inflight.ignoreMin[slot]);
            if (status != 0) {
                inflight.release(slot);
                inflight.phase[slot] = IDLE;
                done.completed(slot, status);
                return false;
            }
            starter.startLocal(slot);
            return stillWaiting(slot, nowNs);
        }
        if (inflight.phase[slot] == IN_FLIGHT) {
            if (inflight.fenced[slot] != 0) {
                resolveFenced(slot, nowNs);
            }
            if (inflight.toSend[slot] != 0) {
                send(slot, nowNs);
            }
            if (inflight.pending[slot] > 0) {
                return inflight.toSend[slot] != 0 || inflight.fenced[slot] != 0;
            }
            if (inflight.syncFailed[slot] != 0 && !inflight.settleSyncFailed(slot)) {
                return true; // a failed syncing copy is being declared in sync: wait for the outcome
            }
            inflight.phase[slot] = inflight.failed[slot] != 0 ? WAIT_DROP : WAIT_DURABLE;
        }
        return inflight.acknowledge(slot);
    }

    /**
     * Settles the copies that refused the slot's epoch, once the set knows more: deposed → the slot is answered ANA
     * Transition; a higher epoch with the copy in sync → sent again under it; the copy dropped → a failed child.
     */
    private void resolveFenced(int slot, long nowNs) {
        ReplicaSet.View v = set.view();
        long rest = inflight.fenced[slot];
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            if (set.deposed()) {
                inflight.fenced[slot] &= ~bit;
                inflight.deposedSlot[slot] = true;
                inflight.pending[slot]--;
            } else if ((v.targets() & bit) == 0) {
                inflight.fenced[slot] &= ~bit;
                inflight.failed[slot] |= bit;
                inflight.pending[slot]--;
            } else if (v.epoch() > inflight.epoch[slot]) {
                inflight.fenced[slot] &= ~bit;
                inflight.epoch[slot] = v.epoch();
                commands[slot].epoch = v.epoch();
                inflight.toSend[slot] |= bit;
                inflight.sendDeadlineNs[slot] = nowNs + timeoutNs;
            }
        }
    }

    /** Sends to the copies not yet sent to; a copy without a queue (failed) or past the deadline fails its child. */
    private void send(int slot, long nowNs) {
        long rest = inflight.toSend[slot];
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            ForwardQueue q = queues.get(copy);
            if (q != null && q.submit(commands[slot], slot)) {
                inflight.sentUnder[slot * copiesCap + copy] = commands[slot].epoch;
                inflight.sent[slot] |= bit;
                inflight.toSend[slot] &= ~bit;
            } else if (q == null ? !queues.opening(copy) : nowNs - inflight.sendDeadlineNs[slot] > 0) {
                // no queue and none coming (its set-up failed or took too long: the open deadline), or a live
                // queue without a free slot for longer than the replica timeout
                inflight.toSend[slot] &= ~bit;
                inflight.pending[slot]--;
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
            inflight.syncFailed[slot] |= bit;
            syncAbort(v.copies()[copy], why);
        } else {
            inflight.failed[slot] |= bit;
            set.reportFailure(v.copies()[copy], inflight.epoch[slot], why);
        }
    }

    private void syncAbort(ReplicaSet.Copy c, String why) {
        c.syncAbort = true; // before reading promoting (settleSyncFailed): the resync sees one or the other
        Resyncs r = set.resyncs();
        if (r != null) {
            r.syncFailed(c, why);
        }
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
