package io.rdmablock.node.target;

import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * A secondary's side of {@link Opcodes#ADMIN_COPY_SNAPSHOT} (docs/snapshots.md, "Replicated volumes";
 * docs/wire-protocol.md section 7.3): the primary holds every write of the volume and asks each in-sync secondary
 * to take (or delete) snapshot {@code id} of its copy. The store's work (a barrier, a map freeze, an fdatasync and a
 * synced RocksDB batch) runs on one worker thread of the node, never on a poller: the admin command is held
 * ({@link Outcome#HOLD}) and answered when the worker is done ({@link TargetController#pollCopySnapshot}).
 *
 * <p>Checks, in this order: from a peer node of a secondary copy only (as the peer lease: authenticated at Connect)
 * else Invalid Opcode; NSID 1, CDW14 0 or 1, snapshot id &gt;= 1, else Invalid Field; a command epoch below the epoch
 * this copy accepted (a deposed primary) is answered Reservation Conflict (0/83h, as a stale forwarded write); one
 * command at a time per association, else Command Sequence Error. A store failure (flat volume, too many snapshots,
 * barrier timeout) is answered Internal Error and logged.
 */
final class CopySnapshotWork implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CopySnapshotWork.class);
    static final int RESERVATION_CONFLICT = NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT);

    private final VolumeStore store;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "copy-snapshot");
        t.setDaemon(true);
        return t;
    });

    CopySnapshotWork(VolumeStore store) {
        this.store = store;
    }

    /**
     * Checks the command and starts its work.
     *
     * @return the work's future (completes with the NVMe status to answer), or null when {@code r} was answered at
     *         once (its status set)
     */
    CompletableFuture<Integer> start(Request r, Subsystem subsystem, String hostnqn) {
        MemorySegment sqe = r.sqe;
        if (subsystem.isDiscovery() || !subsystem.role().exempts(hostnqn)) {
            r.fail(NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE));
            return null;
        }
        int action = SqeDescriptor.cdw(sqe, 14);
        long epoch = (SqeDescriptor.cdw(sqe, 10) & 0xFFFF_FFFFL) | ((long) SqeDescriptor.cdw(sqe, 11) << 32);
        long id = (SqeDescriptor.cdw(sqe, 12) & 0xFFFF_FFFFL) | ((long) SqeDescriptor.cdw(sqe, 13) << 32);
        if (SqeDescriptor.nsid(sqe) != 1 || id < 1
                || (action != Opcodes.COPY_SNAPSHOT_TAKE && action != Opcodes.COPY_SNAPSHOT_DELETE)) {
            r.fail(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD));
            return null;
        }
        long accepted = subsystem.volume().epochFence().epoch();
        if (epoch < accepted) {
            LOG.warn("copy snapshot refused: volume={}, id={}, epoch={} below the accepted {} (a deposed primary)",
                    subsystem.volume().id(), id, epoch, accepted);
            r.fail(RESERVATION_CONFLICT);
            return null;
        }
        String volumeId = subsystem.volume().id();
        boolean delete = action == Opcodes.COPY_SNAPSHOT_DELETE;
        try {
            return CompletableFuture.supplyAsync(() -> run(volumeId, id, delete, epoch), worker);
        } catch (RejectedExecutionException e) {
            r.fail(NvmeStatus.generic(NvmeStatus.SC_ABORTED_SQ_DELETION));
            return null;
        }
    }

    private int run(String volumeId, long id, boolean delete, long epoch) {
        try {
            if (delete) {
                boolean held = store.snapshots().deleteById(volumeId, id);
                LOG.info("copy snapshot deleted for the primary: volume={}, id={}, held={}, epoch={}", volumeId, id,
                        held, epoch);
            } else {
                store.snapshots().takeCopy(volumeId, id);
                LOG.info("copy snapshot taken for the primary: volume={}, id={}, epoch={}, barrierUs={}", volumeId,
                        id, epoch, store.snapshots().lastBarrierNs() / 1000);
            }
            return 0;
        } catch (RuntimeException e) {
            LOG.warn("copy snapshot not {}: volume={}, id={}, epoch={}: {}", delete ? "deleted" : "taken", volumeId,
                    id, epoch, e.toString());
            return NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
        }
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}
