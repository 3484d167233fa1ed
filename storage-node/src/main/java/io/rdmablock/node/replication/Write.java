package io.rdmablock.node.replication;

import io.rdmablock.node.target.Request;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * One command slot of a {@link ReplicatedWrites}: the write-type command in it (the host's SQE, forwarded as it came
 * with the epoch and keyed SGL patched) and the state of its replication. Preallocated per slot and reused; its
 * {@link #phase} is written only by {@link ReplicatedWrites} (entering at {@code begin} and {@code admit}, moving on
 * in {@code advance}, and at teardown), on the owner thread.
 *
 * <p>Shapes: a set of copies is a bit mask (bit {@link ReplicaSet.Copy#index}, at most {@link ReplicaSet#MAX_COPIES});
 * {@link #sentUnder} and {@link #needGen} have one element per copy. Epochs are the record's; deadlines are
 * {@link System#nanoTime()} nanoseconds; offsets and lengths bytes.
 */
public final class Write {
    /** Where a slot's command is in its replication (docs/replication.md "Write path"). */
    enum Phase {
        /** No command. */
        IDLE,
        /** Waits, started nowhere, until a region walk left its range (docs/resync.md). */
        HELD,
        /** Started: the local copy and its target copies owe answers, or sends are still due. */
        IN_FLIGHT,
        /** Every child answered, a copy failed it: waits until the set no longer lists that copy in sync. */
        WAIT_DROP,
        /** Waits until every bitmap generation it marked is durable, then completes. */
        WAIT_DURABLE
    }

    /** The slot's count in the region gate. */
    enum Count {
        /** Not counted (idle, or held). */
        NONE,
        /** Counted in the gate's striped counters ({@link io.rdmablock.node.resync.RegionGate#tryEnter}). */
        COUNTED,
        /** Admitted while no walk ran: counted in {@link ReplicatedWrites}' uncounted total. */
        UNCOUNTED
    }

    final int slot;
    Phase phase = Phase.IDLE;
    Count count = Count.NONE;
    /** On its {@link ReplicatedWrites}' waiting list (advanced at the next poll). */
    boolean waiting;
    /** The host's command (null for a command without a host request, e.g. the activation FLUSH). */
    Request request;
    /** The 64-byte SQE forwarded to the secondaries (the host's, in its RECV slot; valid until completion). */
    public MemorySegment sqe;
    /**
     * The payload on this node, as the secondaries get it: address, bytes (0 = none), rkey (a keyed SGL they RDMA
     * READ) and lkey (a second SGE of the forward's SEND, when the payload goes in the capsule).
     */
    public long dataAddress;
    public int dataLength;
    public int rkey;
    public int lkey;
    /** Byte range of the volume the command changes (bitmaps, region gate); length 0 = none (FLUSH). */
    public long offsetBytes;
    public long lengthBytes;
    /** Forwarded even below min-in-sync (the activation FLUSH). */
    public boolean ignoreMinInSync;
    /** The epoch the command is (re)sent under. */
    long epoch;
    /** Children (the local copy, one forward per target) that have not answered yet. */
    int pending;
    /** True until the local copy answered. */
    boolean localPending;
    int localStatus;
    /** Copies still to be sent to; sent to and not answered; that failed it; syncing ones that failed it. */
    long toSend;
    long sent;
    long failed;
    long syncFailed;
    /** Copies that answered Reservation Conflict to its current epoch: waiting for the record to be read. */
    long fenced;
    /** Resends after an ANA Transition answer of a secondary (its queue re-opening after a role change). */
    int transitions;
    /** This primary was deposed while it was in flight: answered ANA Transition. */
    boolean deposed;
    long sendDeadlineNs;
    /** Per copy: the epoch its last send carried. */
    final long[] sentUnder;
    /** Per copy: bitmap generation that must be durable before completion, 0 = none. */
    final long[] needGen;

    Write(int slot, int copiesCap) {
        this.slot = slot;
        this.sentUnder = new long[copiesCap];
        this.needGen = new long[copiesCap];
    }

    /**
     * The merge rule: ANA Transition when deposed, else the local copy's status, turned into Namespace Not Ready when
     * a copy failed and fewer than min-in-sync copies are left in sync under {@code v}.
     */
    int mergedStatus(ReplicaSet.View v) {
        if (deposed) {
            return ReplicatedWrites.ANA_TRANSITION;
        }
        if (localStatus == 0 && failed != 0 && v.inSyncCount() < v.minInSync()) {
            return ReplicatedWrites.NOT_READY; // it landed on every copy still in sync, but on fewer than minInSync
        }
        return localStatus;
    }

    /** Marks this command's range in {@code copy}'s bitmap; true when a new generation must become durable. */
    boolean mark(ReplicaSet.Copy copy) {
        io.rdmablock.node.resync.DirtyRegions d = copy.missed;
        if (d == null || lengthBytes <= 0) {
            return false;
        }
        long g = d.mark(offsetBytes, lengthBytes);
        needGen[copy.index] = Math.max(needGen[copy.index], g);
        return g > 0;
    }

    /** Clears the replication state for a new command (not the command fields, not the phase or count). */
    void clearState() {
        failed = 0;
        syncFailed = 0;
        fenced = 0;
        transitions = 0;
        deposed = false;
        sent = 0;
        toSend = 0;
        localStatus = 0;
        localPending = false;
        pending = 0;
        Arrays.fill(needGen, 0);
    }
}
