package io.rdmablock.node.nvmf;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.BlockQueue;
import io.rdmablock.node.store.Volume;
import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;

/**
 * NVM I/O commands on qid >= 1 (NVM Command Set 1.0 chapter 3): READ, WRITE (FUA), FLUSH, WRITE ZEROES, DATASET
 * MANAGEMENT (deallocate). Checks, each answered with its status, in this order: opcode (Invalid Opcode), nsid
 * (Invalid Namespace), LBA range incl. 64-bit wrap (LBA Out of Range), transfer size above MDTS (Invalid Field), then
 * the data descriptor (Invalid Field for PSDT, SGL Descriptor Type Invalid, SGL Offset Invalid, Data SGL Length
 * Invalid). One store command per request is in flight at a time (DSM ranges are trimmed one after another), so a
 * {@link BlockQueue} of the queue's depth never overflows.
 */
final class IoCommands {
    private static final Logger LOG = LoggerFactory.getLogger(IoCommands.class);
    private static final int NSID_ALL = 0xFFFFFFFF;
    private static final int ENXIO = 6;
    private static final int ENOSPC = 28;

    private IoCommands() {
    }

    /** NEW: {@link Outcome#TRANSFER_FROM_HOST}, {@link Outcome#EXECUTE} or {@link Outcome#COMPLETE} (rejected). */
    static Outcome prepare(Request r, RdmaQueue q) {
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
        Volume v = q.volume;
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

    /** READY_TO_EXECUTE: {@link Outcome#ASYNC} (store command submitted) or {@link Outcome#COMPLETE}. */
    static Outcome execute(Request r, RdmaQueue q) {
        BlockQueue bq = q.blockQueue();
        Volume v = q.volume;
        try {
            switch (r.opcode) {
                case Opcodes.IO_READ -> bq.submitRead(v, r.storeOffsetBytes, r.data, r.index);
                case Opcodes.IO_WRITE -> bq.submitWrite(v, r.storeOffsetBytes, r.data, r.fua, r.index);
                case Opcodes.IO_FLUSH -> bq.submitFlush(v, r.index);
                case Opcodes.IO_WRITE_ZEROES -> bq.submitWriteZeroes(v, r.storeOffsetBytes, r.storeLengthBytes,
                        r.index);
                case Opcodes.IO_DATASET_MANAGEMENT -> {
                    if ((SqeDescriptor.cdw(r.sqe, 11) & SqeDescriptor.DSM_CDW11_AD) == 0) {
                        return Outcome.COMPLETE; // no attribute we act on: nothing to do
                    }
                    long capacity = v.blockCount();
                    for (int i = 0; i < r.rangeCount; i++) {
                        long slba = DsmRangeDescriptor.slba(r.data, i);
                        long nlb = Integer.toUnsignedLong(DsmRangeDescriptor.blockCount(r.data, i));
                        if (Long.compareUnsigned(slba, capacity) > 0 || nlb > capacity - slba) {
                            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE),
                                    "DSM range " + i + " slba",
                                    slba, "blockCount=" + nlb + ", capacityBlocks=" + capacity);
                        }
                    }
                    return nextTrim(r, bq, v);
                }
                default -> throw new IllegalStateException("opcode " + r.opcode);
            }
            return Outcome.ASYNC;
        } catch (RuntimeException e) {
            LOG.warn("store submit failed: opcode=0x{}, cid={}, qid={}, offsetBytes={}, lengthBytes={}: {}",
                    Integer.toHexString(r.opcode), r.cid, q.qid, r.storeOffsetBytes, r.storeLengthBytes, e.toString());
            return r.fail(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
        }
    }

    /** EXECUTED: {@link Outcome#ASYNC} (next DSM range submitted) or {@link Outcome#COMPLETE}. */
    static Outcome executed(Request r, RdmaQueue q) {
        int res = r.storeResult;
        if (res < 0) {
            int status = statusFor(r.opcode, -res);
            LOG.warn("store command failed: opcode=0x{}, cid={}, qid={}, offsetBytes={}, errno={}, status={}",
                    Integer.toHexString(r.opcode), r.cid, q.qid, r.storeOffsetBytes, -res, NvmeStatus.describe(status));
            return r.fail(status);
        }
        if (r.opcode == Opcodes.IO_DATASET_MANAGEMENT) {
            try {
                return nextTrim(r, q.blockQueue(), q.volume);
            } catch (RuntimeException e) {
                LOG.warn("trim submit failed: cid={}, qid={}: {}", r.cid, q.qid, e.toString());
                return r.fail(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
            }
        }
        return Outcome.COMPLETE;
    }

    /** Submits the next non-empty DSM range ({@link Outcome#ASYNC}) or finishes the command (COMPLETE). */
    private static Outcome nextTrim(Request r, BlockQueue bq, Volume v) {
        int lba = v.lbaSizeBytes();
        while (r.rangeNext < r.rangeCount) {
            int i = r.rangeNext++;
            long nlb = Integer.toUnsignedLong(DsmRangeDescriptor.blockCount(r.data, i));
            if (nlb == 0) {
                continue;
            }
            r.storeOffsetBytes = DsmRangeDescriptor.slba(r.data, i) * lba;
            r.storeLengthBytes = nlb * lba;
            bq.submitTrim(v, r.storeOffsetBytes, r.storeLengthBytes, r.index);
            return Outcome.ASYNC;
        }
        return Outcome.COMPLETE;
    }

    /** NVMe status for a store errno. */
    static int statusFor(int opcode, int errno) {
        if (errno == ENXIO) {
            return NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE);
        }
        if (errno == ENOSPC) {
            return NvmeStatus.generic(NvmeStatus.SC_CAPACITY_EXCEEDED);
        }
        return switch (opcode) {
            case Opcodes.IO_READ -> NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_UNRECOVERED_READ_ERROR, false);
            case Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES, Opcodes.IO_FLUSH ->
                    NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_WRITE_FAULT, false);
            default -> NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INTERNAL_ERROR, false);
        };
    }
}
