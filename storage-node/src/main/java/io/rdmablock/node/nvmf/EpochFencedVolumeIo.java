package io.rdmablock.node.nvmf;

import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A secondary's volume I/O ({@link Subsystem.Mode#SECONDARY}): the local copy behind the epoch fence of
 * docs/replication.md, "Wire". WRITE, FLUSH, WRITE ZEROES and DATASET MANAGEMENT carry the primary's epoch in CDW2
 * (bits 31:0) and CDW3 (bits 63:32), SQE bytes 8..15 ({@link Request#epoch()}):
 * <ul>
 * <li>0 (or negative: epochs are int64 &gt;= 1): Invalid Field in Command (generic, SC 02h);</li>
 * <li>below the highest accepted for the volume ({@link VolumeStore#epoch}): Reservation Conflict (generic, SC 83h),
 *     nothing touched;</li>
 * <li>above it: persisted durably first ({@link VolumeStore#raiseEpoch}, a synced metadata write on this poller
 *     thread: rare, once per epoch change), then executed; a failed write answers Internal Error and executes
 *     nothing;</li>
 * <li>equal: executed.</li>
 * </ul>
 * READ is served without an epoch check. The accepted epoch is per volume, shared by every queue of every node
 * connection, so a raise seen on one queue fences the others from their next command on.
 */
final class EpochFencedVolumeIo implements VolumeIo {
    private static final Logger LOG = LoggerFactory.getLogger(EpochFencedVolumeIo.class);
    private static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    private static final int RESERVATION_CONFLICT = NvmeStatus.generic(NvmeStatus.SC_RESERVATION_CONFLICT);
    private static final int INTERNAL_ERROR = NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);

    private final VolumeIo local;
    private final VolumeStore store;
    private final String volumeId;
    private final int qid;

    private EpochFencedVolumeIo(VolumeIo local, VolumeStore store, String volumeId, int qid) {
        this.local = local;
        this.store = store;
        this.volumeId = volumeId;
        this.qid = qid;
    }

    /** The {@link VolumeIo.Factory} of a subsystem in secondary mode: a {@link LocalVolumeIo} behind the fence. */
    static VolumeIo open(VolumeIo.Context queue) {
        return new EpochFencedVolumeIo(LocalVolumeIo.open(queue), queue.store(), queue.volume().id(), queue.qid());
    }

    @Override
    public int start(Request r) {
        int op = r.opcode;
        if (op == Opcodes.IO_WRITE || op == Opcodes.IO_FLUSH || op == Opcodes.IO_WRITE_ZEROES
                || op == Opcodes.IO_DATASET_MANAGEMENT) {
            int status = admit(r);
            if (status != 0) {
                return status;
            }
        }
        return local.start(r);
    }

    /** 0 when the command's epoch is admitted (raised durably if new), else its status. */
    private int admit(Request r) {
        long epoch = r.epoch();
        if (epoch <= 0) {
            LOG.debug("forwarded command rejected: field=epoch (CDW2-3), value={}, min=1, opcode=0x{}, cid={}, qid={}",
                    epoch, Integer.toHexString(r.opcode), r.cid, qid);
            return INVALID_FIELD;
        }
        long highest = store.epoch(volumeId);
        if (epoch > highest) {
            try {
                store.raiseEpoch(volumeId, epoch);
            } catch (RuntimeException e) {
                LOG.warn("epoch not persisted: volume={}, epoch={}, qid={}: {}", volumeId, epoch, qid, e.toString());
                return INTERNAL_ERROR;
            }
            highest = store.epoch(volumeId); // another queue may have raised it further meanwhile
        }
        if (epoch < highest) {
            LOG.info("forwarded command fenced: reservation conflict: volume={}, epoch={}, highestAccepted={}, "
                    + "opcode=0x{}, cid={}, qid={}", volumeId, epoch, highest, Integer.toHexString(r.opcode), r.cid, qid);
            return RESERVATION_CONFLICT;
        }
        return 0;
    }

    @Override
    public int poll(Completions sink, int max) {
        return local.poll(sink, max);
    }

    @Override
    public int inFlight() {
        return local.inFlight();
    }

    @Override
    public void close() {
        local.close();
    }
}
