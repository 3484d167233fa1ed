package io.rdmablock.node.replication;

import io.rdmablock.node.resync.RegionGate;
import io.rdmablock.node.resync.Resyncs;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.replication.Write.Count;
import io.rdmablock.node.replication.Write.Phase;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.ProtectionDomain;

/**
 * The write side of one host I/O queue of a primary: every write-type command (WRITE, FLUSH, WRITE ZEROES,
 * DATASET MANAGEMENT) goes to its children, the local copy and every copy that writes go to (in sync or syncing),
 * and completes once, with one merged status, when all of them answered (the merge rule of Mayastor's nexus
 * {@code complete}: the host sees success only if the local copy succeeded and every copy that did not is out of
 * the in-sync set). The forward to a secondary is the host's SQE with the view's epoch in CDW2..CDW3 and a keyed SGL
 * naming the host request's own registered buffer ({@link ForwardQueue#forward}): nothing is copied.
 *
 * <p>One state machine per command slot ({@link Write}), advanced only by {@link #advance}:
 * <ol>
 *   <li>{@link #begin}: refuses with Namespace Not Ready (retryable) when fewer copies than {@code minInSync} are in
 *       sync; marks the regions in the bitmaps of stale copies; forwards to each target copy (or waits for its
 *       queue: connecting, or every slot busy) with the view's epoch; starts the local copy ({@link Local}).
 *       {@link Phase#HELD} instead while a region walk holds its range.</li>
 *   <li>{@link Phase#IN_FLIGHT}: children answer ({@link #localDone}, forwarded completions from within
 *       {@link #poll}). A secondary that fails, times out or cannot be reached within the replica timeout is
 *       reported to the {@link ReplicaSet}.</li>
 *   <li>{@link Phase#WAIT_DROP}: if a copy failed, waits until the set's view no longer lists it in sync (the
 *       management plane confirmed the drop, epoch + 1), then marks the command's regions in its bitmap.</li>
 *   <li>{@link Phase#WAIT_DURABLE}: waits until every bitmap the command marked is durable, then completes.</li>
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
 * walked region is held until the walker left it; admitted commands are counted in the gate until they completed
 * everywhere.
 *
 * <p>Clock: the caller's ({@code nowNs}, {@link System#nanoTime()} scale), read once per polling round. Threading:
 * one owner thread (the host queue's poller) calls every method; completions of {@link ForwardQueue}s arrive from
 * within {@link #poll}. Preallocated per slot; no allocation or lock per command.
 */
public final class ReplicatedWrites implements RegionGate.Writer {
    /** The node's own copy of the volume: the first child of every write. */
    public interface Local {
        /**
         * Starts the local execution of the command in {@code slot}.
         *
         * @return {@link VolumeIo#IN_FLIGHT} (its answer comes through {@link #localDone}), or its status now
         */
        int start(int slot, long nowNs);
    }

    /** Completion of a command slot, called from within {@link #begin}, {@link #localDone} or {@link #poll}. */
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
     * Default longest wait for a forward queue's set-up (CM connect, Fabrics Connect, enable) before the copy is
     * dropped, ns: 10 s. The node's is system property {@code rdmablock.replica.openTimeoutMs} (a loaded machine or an
     * emulated guest needs more: the VM runner's children use 120000), read once by its configuration and given to
     * {@link #ReplicatedWrites(ReplicaSet, int, int, long, long, ProtectionDomain, Completer, Local)}.
     */
    public static final long DEFAULT_OPEN_TIMEOUT_NS = 10_000_000_000L;
    /** Resends allowed per command answered ANA Transition by a secondary before it counts as failed. */
    static final int MAX_TRANSITION_RESENDS = 64;

    private final ReplicaSet set;
    private final Completer done;
    private final Local local;
    private final RegionGate gate;
    private final long timeoutNs;
    private final CopyQueues queues;
    private final CopyQueues.Failure queueFailed = this::copyFailed;
    private final Write[] slots;
    /** Admitted while no region walk ran and not yet complete (not in the gate's counters). */
    private int uncounted;
    /** Slots that must be advanced at the next poll (sends due, held, waiting for a drop or a durable bitmap). */
    private final int[] waiting;
    private int waitingCount;
    /** The waiting list as the current poll round took it. */
    private final int[] round;
    /** The clock of the current call ({@link #begin}, {@link #poll}). */
    private long nowNs;
    private volatile int drained;
    private boolean closed;

    /**
     * @param slots     command slots of the host queue (tags 0..slots-1)
     * @param entries   slots of each forward queue
     * @param timeoutNs replica timeout: longest wait for a secondary's answer or queue
     * @param pd        protection domain of the host queue's buffers (forward queues are created in it)
     * @param local     starts the local copy's execution of an admitted command
     */
    public ReplicatedWrites(ReplicaSet set, int slots, int entries, long timeoutNs, ProtectionDomain pd,
                            Completer done, Local local) {
        this(set, slots, entries, timeoutNs, DEFAULT_OPEN_TIMEOUT_NS, pd, done, local);
    }

    /**
     * @param slots         command slots of the host queue (tags 0..slots-1)
     * @param entries       slots of each forward queue
     * @param timeoutNs     replica timeout: longest wait for a secondary's answer or queue
     * @param openTimeoutNs least bound of a forward queue's set-up ({@code rdmablock.replica.openTimeoutMs})
     * @param pd            protection domain of the host queue's buffers (forward queues are created in it)
     * @param local         starts the local copy's execution of an admitted command
     */
    public ReplicatedWrites(ReplicaSet set, int slots, int entries, long timeoutNs, long openTimeoutNs,
                            ProtectionDomain pd, Completer done, Local local) {
        this.set = set;
        this.done = done;
        this.local = local;
        this.gate = set.gate();
        this.timeoutNs = timeoutNs;
        this.queues = new CopyQueues(set, ReplicaSet.MAX_COPIES, entries, Math.max(openTimeoutNs, timeoutNs), pd,
                copy -> (tag, status) -> forwarded(copy, tag, status));
        this.slots = new Write[slots];
        for (int i = 0; i < slots; i++) {
            this.slots[i] = new Write(i, ReplicaSet.MAX_COPIES);
        }
        this.waiting = new int[slots];
        this.round = new int[slots];
        this.drained = gate.state();
        gate.register(this);
        queues.adopt(System.nanoTime(), queueFailed);
    }

    @Override
    public int drainedState() {
        return drained;
    }

    /** True while the command of {@code slot} is held by a region walk (started nowhere yet). */
    public boolean held(int slot) {
        return slots[slot].phase == Phase.HELD;
    }

    /** The command of {@code slot}, to fill before {@link #begin} (its fields: see {@link Write}). */
    public Write slot(int slot) {
        return slots[slot];
    }

    /**
     * Starts the write-type command filled into {@link #slot}: 0 when it is in flight (held by a region walk, or
     * started on its children: its completion comes through the {@link Completer}); otherwise the status to answer
     * it with at once (nothing was started).
     */
    public int begin(int slot, long nowNs) {
        this.nowNs = nowNs;
        Write w = slots[slot];
        if (closed) {
            return NvmeStatus.generic(NvmeStatus.SC_ABORTED_SQ_DELETION);
        }
        if (set.deposed()) {
            return ANA_TRANSITION;
        }
        w.clearState();
        int gs = gate.state(); // the one volatile read when no walk runs
        if (!RegionGate.active(gs)) {
            count(w, Count.UNCOUNTED);
        } else if (gate.tryEnter(w.offsetBytes, w.lengthBytes)) {
            count(w, Count.COUNTED);
        } else {
            w.phase = Phase.HELD;
            addWaiting(slot);
            return 0;
        }
        int status = admit(w); // the view is read after the gate (docs/resync.md)
        if (status != 0) {
            release(w);
            return status;
        }
        advance(w);
        return 0;
    }

    /** The local copy finished the command of {@code slot} with {@code nvmeStatus}; {@code nowNs}: the round's clock. */
    public void localDone(int slot, int nvmeStatus, long nowNs) {
        this.nowNs = nowNs;
        Write w = slots[slot];
        if (w.phase != Phase.IN_FLIGHT || !w.localPending) {
            return;
        }
        w.localPending = false;
        w.localStatus = nvmeStatus;
        w.pending--;
        advance(w);
    }

    /** Polls the forward queues and advances the waiting commands; returns the number of events. */
    public int poll(long nowNs) {
        this.nowNs = nowNs;
        int gs = gate.state();
        if (gs != drained && uncounted == 0) {
            drained = gs; // no write admitted uncounted is in flight: a walk that started may go on
        }
        int work = queues.adopt(nowNs, queueFailed);
        work += queues.poll(nowNs, queueFailed);
        int n = waitingCount;
        System.arraycopy(waiting, 0, round, 0, n);
        waitingCount = 0;
        for (int i = 0; i < n; i++) {
            Write w = slots[round[i]];
            w.waiting = false;
            advance(w); // puts it back when it still waits
            if (!w.waiting) {
                work++; // it moved on; one that still waits is no work (the poller may idle)
            }
        }
        return work;
    }

    /**
     * Waits up to {@code timeoutNs} for the answers of the secondaries that still owe some, when nothing else can
     * move a command on (no command waits to be sent, held, or for a drop or a durable bitmap; {@link
     * CopyQueues#awaitBusy}); the answers are handled as {@link #poll} handles them.
     *
     * @return false when it cannot wait that way (the caller parks instead); true when it waited
     */
    boolean awaitPeers(long timeoutNs) {
        if (closed || waitingCount > 0) {
            return false;
        }
        nowNs = System.nanoTime(); // the clock of the answers handled within (deadlines of resends)
        return queues.awaitBusy(timeoutNs);
    }

    /** True when no command waits for the next poll (sends due, held, a drop or a durable bitmap). */
    boolean quiet() {
        return waitingCount == 0;
    }

    /** True when no command is in flight or waiting. */
    public boolean idle() {
        for (Write w : slots) {
            if (w.phase != Phase.IDLE) {
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
        for (Write w : slots) {
            if (w.phase != Phase.IDLE) {
                release(w);
            }
        }
        gate.unregister(this);
        for (Write w : slots) {
            w.phase = Phase.IDLE;
            w.waiting = false;
        }
        waitingCount = 0;
    }

    /**
     * The state machine of one slot: moves it on as far as it goes now, and puts it on the waiting list when it
     * needs the next poll (sends due, walker still on its range, drop not yet confirmed, bitmap not yet durable).
     * The only writer of {@link Write#phase} (besides teardown).
     */
    private void advance(Write w) {
        boolean wait = switch (w.phase) {
            case IDLE -> false;
            case HELD -> advanceHeld(w);
            case IN_FLIGHT -> advanceInFlight(w);
            case WAIT_DROP -> advanceWaitDrop(w);
            case WAIT_DURABLE -> advanceWaitDurable(w);
        };
        if (wait) {
            addWaiting(w.slot);
        }
    }

    private boolean advanceHeld(Write w) {
        if (closed || set.deposed()) {
            finish(w, ANA_TRANSITION);
            return false;
        }
        if (!gate.tryEnter(w.offsetBytes, w.lengthBytes)) {
            return true; // the walker is still on its region
        }
        count(w, Count.COUNTED);
        int status = admit(w);
        if (status != 0) {
            finish(w, status);
            return false;
        }
        return advanceInFlight(w);
    }

    private boolean advanceInFlight(Write w) {
        if (w.fenced != 0) {
            resolveFenced(w);
        }
        if (w.toSend != 0) {
            send(w);
        }
        if (w.pending > 0) {
            return w.toSend != 0 || w.fenced != 0;
        }
        if (w.syncFailed != 0 && !settleSyncFailed(w)) {
            return true; // a failed syncing copy is being declared in sync: wait for the outcome
        }
        if (w.failed != 0) {
            w.phase = Phase.WAIT_DROP;
            return advanceWaitDrop(w);
        }
        w.phase = Phase.WAIT_DURABLE;
        return advanceWaitDurable(w);
    }

    /** Waits until the set no longer lists the failed copies in sync, then marks the regions in their bitmaps. */
    private boolean advanceWaitDrop(Write w) {
        ReplicaSet.View v = set.view();
        if (set.deposed()) {
            w.deposed = true; // the drop will never be confirmed (the record names another primary)
            finish(w, ANA_TRANSITION);
            return false;
        }
        if ((v.inSync() & w.failed) != 0) {
            return true; // the management plane has not confirmed the drop yet
        }
        boolean marked = false;
        for (ReplicaSet.Copy copy : v.copies()) {
            if ((w.failed & (1L << copy.index)) != 0) {
                marked |= w.mark(copy);
            }
        }
        if (marked) {
            set.bitmapMarked();
        }
        w.phase = Phase.WAIT_DURABLE;
        return advanceWaitDurable(w);
    }

    /** Waits until every bitmap generation the slot needs is durable, then completes with the merged status. */
    private boolean advanceWaitDurable(Write w) {
        ReplicaSet.View v = set.view();
        for (ReplicaSet.Copy copy : v.copies()) {
            long g = w.needGen[copy.index];
            if (g > 0 && (copy.missed == null || copy.missed.durableGeneration() < g)) {
                return true;
            }
        }
        finish(w, w.mergedStatus(v));
        return false;
    }

    private void finish(Write w, int status) {
        release(w);
        w.phase = Phase.IDLE;
        done.completed(w.slot, status);
    }

    /**
     * Admits the slot under the current view: in flight at its epoch, to be sent to its targets, awaiting them and
     * the local copy, which is started; its regions are marked in the bitmaps of the copies that are not in sync.
     *
     * @return 0, or Namespace Not Ready (below min-in-sync; nothing started)
     */
    private int admit(Write w) {
        ReplicaSet.View v = set.view();
        if (!w.ignoreMinInSync && v.inSyncCount() < v.minInSync()) {
            return NOT_READY;
        }
        queues.adopt(nowNs, queueFailed);
        w.epoch = v.epoch();
        w.phase = Phase.IN_FLIGHT;
        boolean marked = false;
        for (ReplicaSet.Copy copy : v.copies()) {
            if (!v.isInSync(copy.index)) {
                marked |= w.mark(copy);
            }
        }
        if (marked) {
            set.bitmapMarked();
        }
        w.toSend = v.targets();
        w.pending = 1 + Long.bitCount(w.toSend);
        w.sendDeadlineNs = nowNs + timeoutNs;
        send(w); // the forwards first: the secondaries' round trip overlaps the local write
        w.localPending = true;
        int ls = local.start(w.slot, nowNs);
        if (ls != VolumeIo.IN_FLIGHT) {
            w.localPending = false;
            w.localStatus = ls;
            w.pending--;
        }
        return 0;
    }

    private void forwarded(int copy, int slot, int status) {
        Write w = slots[slot];
        long bit = 1L << copy;
        if (closed || w.phase != Phase.IN_FLIGHT || (w.sent & bit) == 0) {
            return; // late, duplicate or after teardown
        }
        w.sent &= ~bit;
        ReplicaSet.View v = set.view();
        // the epoch this copy refused is the one its send carried: another copy's resend may have moved the slot's on
        long under = w.sentUnder[copy];
        switch (ForwardAnswer.of(status, under, v.epoch(), (v.targets() & bit) != 0, w.transitions)) {
            case RESEND_UNDER_CURRENT_EPOCH -> {
                w.epoch = v.epoch();
                resend(w, bit);
                return;
            }
            case FENCED -> { // another primary deposes this one, or a higher epoch with this node still primary
                w.fenced |= bit;
                set.reportFenced(v.copies()[copy], under);
                addWaiting(slot);
                return;
            }
            case RESEND_AFTER_TRANSITION -> {
                w.transitions++;
                resend(w, bit);
                return;
            }
            case FAILED -> childFailed(w, copy, status == ForwardQueue.TIMED_OUT
                    ? "no answer within " + timeoutNs / 1_000_000 + " ms"
                    : status == ForwardQueue.PATH_LOST ? "connection lost" : "status " + NvmeStatus.name(status));
            case DONE -> {
            }
        }
        w.pending--;
        advance(w);
    }

    private void resend(Write w, long bit) {
        w.toSend |= bit;
        w.sendDeadlineNs = nowNs + timeoutNs;
        addWaiting(w.slot);
    }

    /**
     * Settles the copies that refused the slot's epoch, once the set knows more: deposed → the slot is answered ANA
     * Transition; a higher epoch with the copy in sync → sent again under it; the copy dropped → a failed child.
     */
    private void resolveFenced(Write w) {
        ReplicaSet.View v = set.view();
        long rest = w.fenced;
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            if (set.deposed()) {
                w.fenced &= ~bit;
                w.deposed = true;
                w.pending--;
            } else if ((v.targets() & bit) == 0) {
                w.fenced &= ~bit;
                w.failed |= bit;
                w.pending--;
            } else if (v.epoch() > w.epoch) {
                w.fenced &= ~bit;
                w.epoch = v.epoch();
                w.toSend |= bit;
                w.sendDeadlineNs = nowNs + timeoutNs;
            }
        }
    }

    /** Sends to the copies not yet sent to; a copy without a queue (failed) or past the deadline fails its child. */
    private void send(Write w) {
        long rest = w.toSend;
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            ForwardQueue q = queues.get(copy);
            if (q != null && q.forward(w.sqe, w.epoch, w.dataAddress, w.dataLength, w.rkey, w.lkey, w.slot, nowNs)) {
                w.sentUnder[copy] = w.epoch;
                w.sent |= bit;
                w.toSend &= ~bit;
            } else if (q == null ? !queues.opening(copy) : nowNs - w.sendDeadlineNs > 0) {
                // no queue and none coming (its set-up failed or took too long: the open deadline), or a live
                // queue without a free slot for longer than the replica timeout
                w.toSend &= ~bit;
                w.pending--;
                childFailed(w, copy, q == null ? "no queue to the secondary"
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
     * The forward of the slot to {@code copy} failed: a syncing copy's resync aborts (the host's command does not
     * fail); any other copy fails the child (dropped from the in-sync set before the command completes).
     */
    private void childFailed(Write w, int copy, String why) {
        ReplicaSet.View v = set.view();
        long bit = 1L << copy;
        if (v.isSyncing(copy)) {
            w.syncFailed |= bit;
            syncAbort(v.copies()[copy], why);
        } else {
            w.failed |= bit;
            set.reportFailure(v.copies()[copy], w.epoch, why);
        }
    }

    /**
     * Settles the syncing copies that failed the slot: still being declared in sync → not yet (false); in sync by
     * now → a failed child (the ordinary drop); otherwise its resync aborted: the slot's regions are marked in its
     * bitmap (normally already) and it does not count.
     */
    private boolean settleSyncFailed(Write w) {
        long rest = w.syncFailed;
        while (rest != 0) {
            int copy = Long.numberOfTrailingZeros(rest);
            long bit = 1L << copy;
            rest &= ~bit;
            ReplicaSet.Copy cp = set.view().copies()[copy];
            if (cp.promoting) {
                return false;
            }
            ReplicaSet.View v = set.view(); // read after promoting
            w.syncFailed &= ~bit;
            if (v.isInSync(copy)) {
                w.failed |= bit;
                set.reportFailure(cp, w.epoch, "a write forwarded while it resynced failed");
                continue;
            }
            if (w.mark(cp)) {
                set.bitmapMarked();
            }
        }
        return true;
    }

    private void syncAbort(ReplicaSet.Copy c, String why) {
        c.syncAbort = true; // before reading promoting (settleSyncFailed): the resync sees one or the other
        Resyncs r = set.resyncs();
        if (r != null) {
            r.syncFailed(c, why);
        }
    }

    private void count(Write w, Count c) {
        w.count = c;
        if (c == Count.UNCOUNTED) {
            uncounted++;
        }
    }

    /** The slot no longer counts in the region gate (completed, refused or forgotten). */
    private void release(Write w) {
        if (w.count == Count.COUNTED) {
            gate.exit(w.offsetBytes, w.lengthBytes);
        } else if (w.count == Count.UNCOUNTED) {
            uncounted--;
        }
        w.count = Count.NONE;
    }

    private void addWaiting(int slot) {
        Write w = slots[slot];
        if (!w.waiting) {
            w.waiting = true;
            waiting[waitingCount++] = slot;
        }
    }
}
