package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;

/**
 * NVM I/O commands on qid >= 1 (NVM Command Set 1.0 chapter 3): READ, WRITE (FUA), FLUSH, WRITE ZEROES, DATASET
 * MANAGEMENT (deallocate). Checks, each answered with its status, in this order: opcode (Invalid Opcode), nsid
 * (Invalid Namespace), LBA range incl. 64-bit wrap (LBA Out of Range), transfer size above MDTS (Invalid Field), then
 * the data descriptor (Invalid Field for PSDT, SGL Descriptor Type Invalid, SGL Offset Invalid, Data SGL Length
 * Invalid), and once the data is in place the DSM ranges (LBA Out of Range). Execution is the queue's
 * {@link VolumeIo}'s.
 */
final class IoCommands {
    private static final int NSID_ALL = 0xFFFFFFFF;

    private IoCommands() {
    }

    /** NEW: {@link Outcome#TRANSFER_FROM_HOST}, {@link Outcome#EXECUTE} or {@link Outcome#COMPLETE} (rejected). */
    static Outcome prepare(Request r, FabricQueue q) {
        MemorySegment sqe = r.sqe;
        int op = r.opcode;
        switch (op) {
            case Opcodes.IO_READ -> r.metricsOp = NodeMetrics.OP_READ;
            case Opcodes.IO_WRITE -> r.metricsOp = NodeMetrics.OP_WRITE;
            case Opcodes.IO_FLUSH -> r.metricsOp = NodeMetrics.OP_FLUSH;
            case Opcodes.IO_WRITE_ZEROES -> r.metricsOp = NodeMetrics.OP_WRITE_ZEROES;
            case Opcodes.IO_DATASET_MANAGEMENT -> r.metricsOp = NodeMetrics.OP_DSM;
            default -> {
                r.metricsOp = NodeMetrics.OP_OTHER;
                return q.reject(r, Commands.INVALID_OPCODE, "opcode", op, "supported=0x0,0x1,0x2,0x8,0x9");
            }
        }
        int nsid = SqeDescriptor.nsid(sqe);
        if (nsid != Subsystem.NSID && !(op == Opcodes.IO_FLUSH && nsid == NSID_ALL)) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE),
                    "nsid", Integer.toUnsignedLong(nsid),
                    "valid=1");
        }
        if (op == Opcodes.IO_FLUSH) {
            return Outcome.EXECUTE;
        }
        if (op == Opcodes.IO_DATASET_MANAGEMENT) {
            r.rangeCount = (SqeDescriptor.cdw(sqe, 10) & 0xFF) + 1;
            return Commands.dataFromHost(r, q, r.rangeCount * DsmRangeDescriptor.LENGTH, false);
        }
        StoreVolume v = q.volume;
        long capacity = v.blockCount();
        long slba = SqeDescriptor.slba(sqe);
        int nlb = SqeDescriptor.blockCount(sqe);
        if (Long.compareUnsigned(slba, capacity) >= 0 || nlb > capacity - slba) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE), "slba", slba, "blockCount=" + nlb
                    + ", capacityBlocks=" + capacity);
        }
        int lba = v.lbaSizeBytes();
        r.storeOffsetBytes = slba * lba;
        r.storeLengthBytes = (long) nlb * lba;
        if (op == Opcodes.IO_WRITE_ZEROES) {
            return Outcome.EXECUTE;
        }
        if (r.storeLengthBytes > q.options.mdtsBytes()) {
            return q.reject(r, Commands.INVALID_FIELD,
                    "transfer bytes", r.storeLengthBytes, "max=" + q.options.mdtsBytes()
                    + " (MDTS)");
        }
        int len = (int) r.storeLengthBytes;
        r.fua = (SqeDescriptor.cdw(sqe, 12) & SqeDescriptor.CDW12_FUA) != 0;
        if (op == Opcodes.IO_READ) {
            Outcome o = Commands.dataToHost(r, q, len, true);
            if (o == Outcome.EXECUTE) {
                r.data = r.dataSlice(len);
            }
            return o;
        }
        return Commands.dataFromHost(r, q, len, true);
    }

    /**
     * READY_TO_EXECUTE: the ANA gate ({@link QueueVolumeIo#admit}: SCT 3h statuses on a secondary, an activating or
     * lapsed primary, or while the queue's handle is re-opened after a change of mode), the checks that need the
     * host's data (DSM ranges within the namespace, NVM Command Set 1.0 section 3.3.3), then the queue's
     * {@link VolumeIo} starts the command: {@link Outcome#ASYNC}, or {@link Outcome#COMPLETE} when it is answered at
     * once.
     */
    static Outcome execute(Request r, FabricQueue q, long nowNs) {
        int gate = q.volumeIo.admit(r);
        if (gate != 0) {
            return r.fail(gate);
        }
        if (r.opcode == Opcodes.IO_DATASET_MANAGEMENT) {
            long capacity = q.volume.blockCount();
            for (int i = 0; i < r.rangeCount; i++) {
                long slba = DsmRangeDescriptor.slba(r.data, i);
                long nlb = Integer.toUnsignedLong(DsmRangeDescriptor.blockCount(r.data, i));
                if (Long.compareUnsigned(slba, capacity) > 0 || nlb > capacity - slba) {
                    return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE),
                            "DSM range " + i + " slba", slba, "blockCount=" + nlb + ", capacityBlocks=" + capacity);
                }
            }
        }
        int status = q.volumeIo.handle().start(r, nowNs);
        if (status == VolumeIo.IN_FLIGHT) {
            return Outcome.ASYNC;
        }
        return status == 0 ? Outcome.COMPLETE : r.fail(status);
    }
}
