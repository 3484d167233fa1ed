package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;

/**
 * Dispatch of capsules for {@link FabricQueue#advance}: which command set applies (Fabrics: {@link Connect} and the
 * property commands of {@link TargetController}; admin: {@link TargetController}; NVM I/O: {@link IoCommands}), and
 * the data descriptor checks shared by every command (NVMe-oF 1.1 section 2.3, keyed SGL and in-capsule data). Every
 * method returns the {@link Outcome} for the state machine and writes no state. Stateless; every method runs on the
 * queue's poller.
 */
final class Commands {
    static final int CSE = NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR);
    static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    static final int INVALID_OPCODE = NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE);

    private Commands() {
    }

    /** NEW: {@link Outcome#TRANSFER_FROM_HOST}, {@link Outcome#EXECUTE} or {@link Outcome#COMPLETE} (rejected). */
    static Outcome prepare(Request r, FabricQueue q, long nowNs) {
        MemorySegment sqe = r.sqe;
        r.opcode = SqeDescriptor.opcode(sqe);
        r.cid = SqeDescriptor.cid(sqe);
        q.consumeSqEntry();
        if (!q.claimCid(r)) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_CID_CONFLICT), "cid", r.cid,
                    "already outstanding on qid " + q.qid);
        }
        TargetController c = q.controller;
        if (c != null) {
            c.commandReceived(nowNs);
        }
        if (r.opcode == Opcodes.FABRICS) {
            r.metricsOp = NodeMetrics.OP_FABRICS;
            int fctype = SqeDescriptor.fctype(sqe);
            if (fctype == Opcodes.FCTYPE_CONNECT) {
                return Connect.prepare(r, q);
            }
            if (fctype == Opcodes.FCTYPE_AUTH_SEND || fctype == Opcodes.FCTYPE_AUTH_RECEIVE) {
                return QueueAuthentication.prepare(r, q, fctype);
            }
            if (q.auth != null && !q.auth.authenticated()) {
                return q.reject(r, QueueAuthentication.AUTH_REQUIRED, "fctype", fctype, "authenticate first");
            }
            if (fctype == Opcodes.FCTYPE_PROPERTY_GET || fctype == Opcodes.FCTYPE_PROPERTY_SET) {
                if (c == null) {
                    return q.reject(r, CSE, "fctype", fctype, "Connect must come first");
                }
                if (q.qid != 0) {
                    return q.reject(r, INVALID_FIELD, "qid", q.qid, "property commands only on qid 0");
                }
                return Outcome.EXECUTE;
            }
            return q.reject(r, INVALID_OPCODE, "fctype", fctype, "supported=0x0,0x1,0x4,0x5,0x6");
        }
        if (c == null) {
            return q.reject(r, CSE, "opcode", r.opcode, "Connect must come first");
        }
        if (q.auth != null && !q.auth.authenticated()) {
            return q.reject(r, QueueAuthentication.AUTH_REQUIRED, "opcode", r.opcode, "authenticate first");
        }
        if ((SqeDescriptor.flags(sqe) & 0x3) != 0) {
            return q.reject(r, INVALID_FIELD, "fuse", SqeDescriptor.flags(sqe) & 0x3, "supported=0");
        }
        if (q.qid != 0) {
            return IoCommands.prepare(r, q);
        }
        r.metricsOp = NodeMetrics.OP_ADMIN;
        return switch (r.opcode) {
            case Opcodes.ADMIN_IDENTIFY -> dataToHost(r, q, Opcodes.IDENTIFY_DATA_LENGTH, false);
            case Opcodes.ADMIN_GET_LOG_PAGE -> LogPages.prepare(r, q);
            case Opcodes.ADMIN_KEEP_ALIVE, Opcodes.ADMIN_SET_FEATURES, Opcodes.ADMIN_GET_FEATURES,
                 Opcodes.ADMIN_ASYNC_EVENT_REQUEST, Opcodes.ADMIN_PEER_LEASE,
                 Opcodes.ADMIN_COPY_SNAPSHOT -> Outcome.EXECUTE;
            default -> q.reject(r, INVALID_OPCODE, "opcode", r.opcode, "admin queue");
        };
    }

    /** READY_TO_EXECUTE: {@link Outcome#ASYNC}, {@link Outcome#HOLD}, {@link Outcome#AWAIT_FENCE} or COMPLETE. */
    static Outcome execute(Request r, FabricQueue q, long nowNs) {
        if (r.opcode == Opcodes.FABRICS) {
            int fctype = SqeDescriptor.fctype(r.sqe);
            if (fctype == Opcodes.FCTYPE_CONNECT) {
                return Connect.execute(r, q);
            }
            if (fctype == Opcodes.FCTYPE_AUTH_SEND || fctype == Opcodes.FCTYPE_AUTH_RECEIVE) {
                return QueueAuthentication.execute(r, q, fctype);
            }
            return q.controller.property(r, q);
        }
        if (q.qid == 0) {
            return q.controller.executeAdmin(r, q);
        }
        return IoCommands.execute(r, q, nowNs);
    }

    /**
     * Host-to-controller data of {@code lengthBytes} (exactly, or at least when {@code exact} is false): a keyed
     * SGL (RDMA) is fetched with an RDMA READ into the request's buffer, a Transport SGL Data Block (TCP, 5Ah) with
     * R2T / H2CData PDUs into it, in-capsule data (01h) is used where it landed.
     */
    static Outcome dataFromHost(Request r, FabricQueue q, int lengthBytes, boolean exact) {
        if (!sglPsdt(r)) {
            return rejectPsdt(r, q);
        }
        MemorySegment sgl = q.sgl(r);
        int id = SglDescriptor.id(sgl);
        if (q.keyedSgl() ? SglDescriptor.isKeyed(id) : id == SglDescriptor.ID_TRANSPORT_DATA_BLOCK) {
            long len = q.keyedSgl() ? SglDescriptor.keyedLength(sgl) : SglDescriptor.dataBlockLength(sgl);
            if (exact ? len != lengthBytes : len < lengthBytes) {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), q.keyedSgl() ? "keyed SGL length" : "data SGL length",
                        len, (exact ? "expected=" : "min=") + lengthBytes);
            }
            r.xfer = Request.XFER_HOST_TO_CONTROLLER;
            r.transferBytes = lengthBytes;
            if (q.keyedSgl()) {
                r.remoteAddress = SglDescriptor.address(sgl);
                r.rkey = SglDescriptor.key(sgl);
                r.remoteInvalidate = id == SglDescriptor.ID_KEYED_DATA_BLOCK_INVALIDATE;
            }
            r.data = r.dataSlice(lengthBytes);
            return Outcome.TRANSFER_FROM_HOST;
        } else if (id == SglDescriptor.ID_DATA_BLOCK_OFFSET && q.inCapsuleDataBytes() > 0) {
            long offset = SglDescriptor.address(sgl);
            long len = SglDescriptor.dataBlockLength(sgl);
            int available = r.capsuleBytes - SqeDescriptor.LENGTH;
            if (offset < 0 || offset > available) {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_OFFSET_INVALID), "in-capsule offset", offset,
                        "min=0, max=" + available);
            }
            if (exact ? len != lengthBytes : len < lengthBytes) {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "in-capsule SGL length",
                        len, (exact ? "expected=" : "min=") + lengthBytes);
            }
            if (offset + lengthBytes > available) {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID),
                        "in-capsule data received",
                        available, "needed=" + (offset + lengthBytes));
            }
            r.xfer = Request.XFER_HOST_TO_CONTROLLER;
            r.inCapsuleData = true;
            r.transferBytes = lengthBytes;
            r.data = q.inCapsuleData(r, offset, lengthBytes);
            return Outcome.EXECUTE;
        }
        return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), "SGL identifier", id,
                q.keyedSgl() ? "supported=0x40, 0x4f (keyed data block), 0x01 (in-capsule offset)"
                        : "supported=0x5a (transport data block), 0x01 (in-capsule offset)");
    }

    /**
     * Controller-to-host data: a keyed SGL (RDMA) or Transport SGL Data Block (TCP, 5Ah) of exactly
     * {@code lengthBytes}, or (when {@code exact} is false) of 1 .. any bytes, of which at most {@code lengthBytes}
     * are written.
     */
    static Outcome dataToHost(Request r, FabricQueue q, int lengthBytes, boolean exact) {
        if (!sglPsdt(r)) {
            return rejectPsdt(r, q);
        }
        MemorySegment sgl = q.sgl(r);
        int id = SglDescriptor.id(sgl);
        if (q.keyedSgl() ? !SglDescriptor.isKeyed(id) : id != SglDescriptor.ID_TRANSPORT_DATA_BLOCK) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), "SGL identifier", id,
                    q.keyedSgl() ? "supported=0x40, 0x4f (keyed data block)" : "supported=0x5a (transport data block)");
        }
        long len = q.keyedSgl() ? SglDescriptor.keyedLength(sgl) : SglDescriptor.dataBlockLength(sgl);
        if (exact ? len != lengthBytes : len == 0) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), q.keyedSgl() ? "keyed SGL length"
                    : "data SGL length", len, exact ? "expected=" + lengthBytes : "min=1");
        }
        r.xfer = Request.XFER_CONTROLLER_TO_HOST;
        r.transferBytes = (int) Math.min(len, lengthBytes);
        if (q.keyedSgl()) {
            r.remoteAddress = SglDescriptor.address(sgl);
            r.rkey = SglDescriptor.key(sgl);
            r.remoteInvalidate = id == SglDescriptor.ID_KEYED_DATA_BLOCK_INVALIDATE;
        }
        return Outcome.EXECUTE;
    }

    private static boolean sglPsdt(Request r) {
        return (SqeDescriptor.flags(r.sqe) & SqeDescriptor.PSDT_MASK) == SqeDescriptor.PSDT_SGL;
    }

    private static Outcome rejectPsdt(Request r, FabricQueue q) {
        int psdt = SqeDescriptor.flags(r.sqe) & SqeDescriptor.PSDT_MASK;
        return q.reject(r, INVALID_FIELD, "psdt", psdt >>> 6, "supported=1 (SGL)");
    }
}
