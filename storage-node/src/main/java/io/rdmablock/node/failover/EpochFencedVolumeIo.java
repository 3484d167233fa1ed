package io.rdmablock.node.failover;

import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.target.Request;
import io.rdmablock.node.store.EpochFence;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A secondary's volume I/O ({@link io.rdmablock.node.target.Subsystem.Mode#SECONDARY}): the local copy behind the epoch fence of
 * docs/replication.md, "Wire", and docs/failover.md, "Fencing on a secondary". WRITE, FLUSH, WRITE ZEROES and
 * DATASET MANAGEMENT carry the primary's epoch in CDW2 (bits 31:0) and CDW3 (bits 63:32), SQE bytes 8..15
 * ({@link Request#epoch()}):
 * <ul>
 * <li>0 (or negative: epochs are int64 &gt;= 1): Invalid Field in Command (generic, SC 02h);</li>
 * <li>below the highest accepted for the volume ({@link VolumeStore#epoch}): Reservation Conflict (generic, SC 83h),
 *     nothing touched;</li>
 * <li>above the ceiling the management plane allows ({@link io.rdmablock.node.target.Subsystem#epochCeiling}: the volume's epoch it last
 *     told this node plus a small window, so that a peer cannot fence the real primary out with an epoch of its own
 *     choosing, such as 2^63-1): Invalid Field in Command (generic, SC 02h, DNR), nothing touched or persisted;</li>
 * <li>above the highest accepted, within the ceiling: persisted durably first ({@link VolumeStore#raiseEpoch}, a synced metadata write on this poller
 *     thread: rare, once per epoch change), then handled as equal; a failed write answers Internal Error and executes
 *     nothing;</li>
 * <li>equal: executed once every command of a lower epoch admitted before this epoch was raised has completed in
 *     the store (the raise is a barrier, {@link EpochFence}); until then it is parked here, counted
 *     {@link #inFlight()}, and re-checked every polling round ({@link #poll}), so the poller never blocks. A parked
 *     command whose epoch is superseded by a higher one before it could run is answered Reservation Conflict,
 *     nothing touched.</li>
 * </ul>
 * READ is served without an epoch check. The accepted epoch and the per-epoch counts are per volume
 * ({@link io.rdmablock.node.store.StoreVolume#epochFence()}), shared by every queue of every node connection and
 * poller, so a raise seen on one queue fences the others from their next command on, and waits for what they
 * admitted before it.
 *
 * <p>Cost without an epoch change: one volatile read and one atomic increment at admission, one atomic decrement at
 * completion, one volatile read for the barrier; no lock, no allocation. Poller thread only, like every
 * {@link VolumeIo}.
 */
public final class EpochFencedVolumeIo implements VolumeIo {
    private static final Logger LOG = LoggerFactory.getLogger(EpochFencedVolumeIo.class);
    private static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    private static final int RESERVATION_CONFLICT = NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT);
    private static final int INTERNAL_ERROR = NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);

    private final VolumeIo local;
    private final VolumeStore store;
    private final String volumeId;
    private final int qid;
    private final EpochFence fence;
    /** The highest epoch a command may raise this copy to ({@link io.rdmablock.node.target.Subsystem#epochCeiling}), read on a raise only. */
    private final java.util.function.LongSupplier ceiling;
    /** The phase each fenced command in flight (parked or started) counts in, by request index; null otherwise. */
    private final EpochFence.Phase[] phaseOf;
    /** Fenced commands admitted but waiting for the barrier, in arrival order. */
    private final Request[] parked;
    private int parkedCount;
    /** The sink of the current {@link #poll}: {@link #fromLocal} hands the local copy's completions on to it. */
    private Completions sink;
    /** Exits the phase of a command the local copy completed, then hands it on (preallocated: no capture). */
    private final Completions fromLocal = this::completedLocally;
    /** The status of the last command {@link #admit} refused. */
    private int refusal;
    private boolean closed;

    /**
     * @param local    the local copy's I/O (closed with this)
     * @param store    the store holding the volume (its {@link VolumeStore#raiseEpoch} persists a raise)
     * @param volumeId the volume
     * @param qid      the queue id, for log lines
     * @param entries  requests of the queue (request indexes are 0 .. entries - 1)
     * @throws java.util.NoSuchElementException when the store has no such volume
     */
    EpochFencedVolumeIo(VolumeIo local, VolumeStore store, String volumeId, int qid, int entries) {
        this(local, store, volumeId, qid, entries, () -> Long.MAX_VALUE);
    }

    /**
     * As the other constructor, refusing raises above {@code ceiling} (read at each raise).
     */
    EpochFencedVolumeIo(VolumeIo local, VolumeStore store, String volumeId, int qid, int entries,
                        java.util.function.LongSupplier ceiling) {
        this.ceiling = ceiling;
        this.local = local;
        this.store = store;
        this.volumeId = volumeId;
        this.qid = qid;
        this.fence = store.find(volumeId).orElseThrow(() -> new java.util.NoSuchElementException(
                "no such volume: id=" + volumeId)).epochFence();
        this.phaseOf = new EpochFence.Phase[entries];
        this.parked = new Request[entries];
    }

    /** The {@link VolumeIo.Factory} of a subsystem in secondary mode: a {@link LocalVolumeIo} behind the fence. */
    static VolumeIo open(VolumeIo.Context queue) {
        return open(queue, () -> Long.MAX_VALUE);
    }

    /** As {@link #open(VolumeIo.Context)}, with the subsystem's epoch ceiling ({@link io.rdmablock.node.target.Subsystem#epochCeiling}). */
    public static VolumeIo open(VolumeIo.Context queue, java.util.function.LongSupplier ceiling) {
        LocalVolumeIo local = LocalVolumeIo.open(queue);
        try {
            return new EpochFencedVolumeIo(local, queue.store(), queue.volume().id(), queue.qid(), queue.entries(),
                    ceiling);
        } catch (RuntimeException e) {
            local.close();
            throw e;
        }
    }

    @Override
    public int start(Request r, long nowNs) {
        int op = r.opcode;
        if (op != Opcodes.IO_WRITE && op != Opcodes.IO_FLUSH && op != Opcodes.IO_WRITE_ZEROES
                && op != Opcodes.IO_DATASET_MANAGEMENT) {
            return local.start(r, nowNs);
        }
        EpochFence.Phase p = admit(r);
        if (p == null) {
            return refusal;
        }
        if (!p.ready()) {
            park(r, p);
            return IN_FLIGHT;
        }
        return startLocal(r, p, nowNs);
    }

    /**
     * The phase the command now counts in (its epoch admitted, raised durably if new), or null when refused; then
     * {@link #refusal} holds the status.
     */
    private EpochFence.Phase admit(Request r) {
        long epoch = r.epoch();
        if (epoch <= 0) {
            LOG.debug("forwarded command rejected: field=epoch (CDW2-3), value={}, min=1, opcode=0x{}, cid={}, qid={}",
                    epoch, Integer.toHexString(r.opcode), r.cid, qid);
            return refuse(INVALID_FIELD);
        }
        EpochFence.Phase p = fence.enter(epoch);
        if (p == null && epoch > fence.epoch()) {
            long max = ceiling.getAsLong();
            if (epoch > max) {
                LOG.warn("forwarded command refused: field=epoch (CDW2-3), value={}, max={} (the volume's epoch the "
                        + "management plane told this node + rdmablock.node.epochWindow), volume={}, opcode=0x{}, "
                        + "cid={}, qid={}", epoch, max, volumeId, Integer.toHexString(r.opcode), r.cid, qid);
                return refuse(INVALID_FIELD);
            }
            try {
                store.raiseEpoch(volumeId, epoch); // durable before anything of the new epoch runs or is answered
            } catch (RuntimeException e) {
                LOG.warn("epoch not persisted: volume={}, epoch={}, qid={}: {}", volumeId, epoch, qid, e.toString());
                return refuse(INTERNAL_ERROR);
            }
            p = fence.enter(epoch); // null when another queue raised it further meanwhile
        }
        if (p == null) {
            LOG.info("forwarded command fenced: reservation conflict: volume={}, epoch={}, highestAccepted={}, "
                    + "opcode=0x{}, cid={}, qid={}", volumeId, epoch, fence.epoch(), Integer.toHexString(r.opcode),
                    r.cid, qid);
            return refuse(RESERVATION_CONFLICT);
        }
        return p;
    }

    private EpochFence.Phase refuse(int status) {
        refusal = status;
        return null;
    }

    /** Starts an admitted command on the local copy; exits its phase at once when it is not left in flight. */
    private int startLocal(Request r, EpochFence.Phase p, long nowNs) {
        phaseOf[r.index] = p;
        int status = local.start(r, nowNs);
        if (status != IN_FLIGHT) {
            phaseOf[r.index] = null;
            p.exit();
        }
        return status;
    }

    private void park(Request r, EpochFence.Phase p) {
        phaseOf[r.index] = p;
        parked[parkedCount++] = r;
        if (parkedCount == 1) {
            LOG.info("forwarded command waits for the epoch barrier: volume={}, epoch={}, opcode=0x{}, cid={}, qid={}",
                    volumeId, p.epoch(), Integer.toHexString(r.opcode), r.cid, qid);
        }
    }

    @Override
    public int poll(Completions sink, int max, long nowNs) {
        this.sink = sink;
        int work = parkedCount > 0 ? resumeParked(sink, nowNs) : 0;
        return work + local.poll(fromLocal, max, nowNs);
    }

    /**
     * Re-checks the parked commands in arrival order: starts those whose barrier passed, answers Reservation Conflict
     * to those whose epoch was superseded meanwhile, keeps the others.
     *
     * @return the number of commands that left the parked list
     */
    private int resumeParked(Completions sink, long nowNs) {
        int kept = 0;
        int n = parkedCount;
        for (int i = 0; i < n; i++) {
            Request r = parked[i];
            parked[i] = null;
            EpochFence.Phase p = phaseOf[r.index];
            if (p.superseded()) {
                phaseOf[r.index] = null;
                p.exit();
                LOG.debug("parked forwarded command fenced: reservation conflict: volume={}, epoch={}, "
                        + "highestAccepted={}, opcode=0x{}, cid={}, qid={}", volumeId, p.epoch(), fence.epoch(),
                        Integer.toHexString(r.opcode), r.cid, qid);
                sink.completed(r, RESERVATION_CONFLICT);
            } else if (p.ready()) {
                int status = startLocal(r, p, nowNs);
                if (status != IN_FLIGHT) {
                    sink.completed(r, status);
                }
            } else {
                parked[kept++] = r;
            }
        }
        parkedCount = kept;
        return n - kept;
    }

    private void completedLocally(Request r, int status) {
        EpochFence.Phase p = phaseOf[r.index];
        if (p != null) { // null for READ
            phaseOf[r.index] = null;
            p.exit();
        }
        sink.completed(r, status);
    }

    /** The local copy's commands in flight plus the commands parked at the barrier. */
    @Override
    public int inFlight() {
        return local.inFlight() + parkedCount;
    }

    /** Waits on the local copy's store only when no command is parked at the barrier (those wait on the fence). */
    @Override
    public boolean awaitStore(long timeoutNs) {
        return parkedCount == 0 && local.awaitStore(timeoutNs);
    }

    /**
     * Closes the local copy (bounded wait for its commands). Parked commands exit their phase (they never ran); the
     * started ones too once the local copy has none left in flight. A command still in the store after the local
     * copy's bounded wait stays counted: it may still land, so its epoch's successor stays behind the barrier (the
     * primary's replica timeout drops this copy) until the node restarts.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < parkedCount; i++) {
            Request r = parked[i];
            parked[i] = null;
            phaseOf[r.index].exit();
            phaseOf[r.index] = null;
        }
        parkedCount = 0;
        local.close();
        int stuck = local.inFlight();
        if (stuck > 0) {
            LOG.warn("queue closed with {} commands still in the store: volume={}, qid={}; their epoch stays "
                    + "counted in flight (a higher one waits for them)", stuck, volumeId, qid);
            return;
        }
        for (int i = 0; i < phaseOf.length; i++) {
            if (phaseOf[i] != null) {
                phaseOf[i].exit();
                phaseOf[i] = null;
            }
        }
    }
}
