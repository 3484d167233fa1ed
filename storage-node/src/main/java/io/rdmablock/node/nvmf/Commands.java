package io.rdmablock.node.nvmf;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * Parsing and execution of capsules for {@link RdmaQueue#advance}: which command set applies (Fabrics, admin, NVM
 * I/O), the data descriptor checks shared by every command, and the Fabrics Connect command (NVMe-oF 1.1 section
 * 3.3). Stateless; every method runs on the queue's poller.
 */
final class Commands {
    private static final Logger LOG = LoggerFactory.getLogger(Commands.class);
    static final int CSE = NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR);
    static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    static final int INVALID_OPCODE = NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE);
    private static final ValueLayout.OfLong HOSTID = ValueLayout.JAVA_LONG_UNALIGNED;

    private Commands() {
    }

    /** NEW -> TRANSFERRING_HOST_TO_CONTROLLER | READY_TO_EXECUTE | READY_TO_COMPLETE (rejected). */
    static void prepare(Request r, RdmaQueue q, long nowNs) {
        MemorySegment sqe = r.sqe;
        r.opcode = SqeDescriptor.opcode(sqe);
        r.cid = SqeDescriptor.cid(sqe);
        q.consumeSqEntry();
        if (!q.claimCid(r)) {
            q.reject(r, NvmeStatus.generic(NvmeStatus.SC_CID_CONFLICT), "cid", r.cid, "already outstanding on qid "
                    + q.qid);
            return;
        }
        Controller c = q.controller;
        if (c != null) {
            c.commandReceived(nowNs);
        }
        if (r.opcode == Opcodes.FABRICS) {
            r.metricsOp = NodeMetrics.OP_FABRICS;
            int fctype = SqeDescriptor.fctype(sqe);
            if (fctype == Opcodes.FCTYPE_CONNECT) {
                if (c != null) {
                    q.reject(r, CSE, "connect", 1, "queue already connected");
                    return;
                }
                if (q.connectAwaitingFence()) {
                    q.reject(r, CSE, "connect", 1, "a Connect on this queue already waits for the host's previous "
                            + "association to drain");
                    return;
                }
                dataFromHost(r, q, ConnectDataDescriptor.DATA_LENGTH, false);
            } else if (fctype == Opcodes.FCTYPE_PROPERTY_GET || fctype == Opcodes.FCTYPE_PROPERTY_SET) {
                if (c == null) {
                    q.reject(r, CSE, "fctype", fctype, "Connect must come first");
                } else if (q.qid != 0) {
                    q.reject(r, INVALID_FIELD, "qid", q.qid, "property commands only on qid 0");
                } else {
                    r.state = Request.State.READY_TO_EXECUTE;
                }
            } else {
                q.reject(r, INVALID_OPCODE, "fctype", fctype, "supported=0x0,0x1,0x4");
            }
            return;
        }
        if (c == null) {
            q.reject(r, CSE, "opcode", r.opcode, "Connect must come first");
            return;
        }
        if ((SqeDescriptor.flags(sqe) & 0x3) != 0) {
            q.reject(r, INVALID_FIELD, "fuse", SqeDescriptor.flags(sqe) & 0x3, "supported=0");
            return;
        }
        if (q.qid != 0) {
            IoCommands.prepare(r, q);
            return;
        }
        r.metricsOp = NodeMetrics.OP_ADMIN;
        switch (r.opcode) {
            case Opcodes.ADMIN_IDENTIFY -> dataToHost(r, q, Opcodes.IDENTIFY_DATA_LENGTH, false);
            case Opcodes.ADMIN_GET_LOG_PAGE -> LogPages.prepare(r, q);
            case Opcodes.ADMIN_KEEP_ALIVE, Opcodes.ADMIN_SET_FEATURES, Opcodes.ADMIN_GET_FEATURES,
                 Opcodes.ADMIN_ASYNC_EVENT_REQUEST -> r.state = Request.State.READY_TO_EXECUTE;
            default -> q.reject(r, INVALID_OPCODE, "opcode", r.opcode, "admin queue");
        }
    }

    /** READY_TO_EXECUTE -> EXECUTING | HELD | READY_TO_COMPLETE. */
    static void execute(Request r, RdmaQueue q) {
        if (r.opcode == Opcodes.FABRICS) {
            if (SqeDescriptor.fctype(r.sqe) == Opcodes.FCTYPE_CONNECT) {
                connect(r, q);
            } else {
                q.controller.property(r, q);
            }
        } else if (q.qid == 0) {
            q.controller.executeAdmin(r, q);
        } else {
            IoCommands.execute(r, q);
        }
    }

    /** EXECUTED -> EXECUTING (next DSM range) | READY_TO_COMPLETE. */
    static void executed(Request r, RdmaQueue q) {
        IoCommands.executed(r, q);
    }

    /**
     * Host-to-controller data of {@code lengthBytes} (exactly, or at least when {@code exact} is false): a keyed
     * SGL is fetched with an RDMA READ into the request's buffer, in-capsule data is used where it landed.
     */
    static void dataFromHost(Request r, RdmaQueue q, int lengthBytes, boolean exact) {
        if (!sglPsdt(r, q)) {
            return;
        }
        MemorySegment sgl = q.recvSgl(r);
        int id = SglDescriptor.id(sgl);
        if (SglDescriptor.isKeyed(id)) {
            int len = SglDescriptor.keyedLength(sgl);
            if (exact ? len != lengthBytes : len < lengthBytes) {
                q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "keyed SGL length", len,
                        (exact ? "expected=" : "min=") + lengthBytes);
                return;
            }
            r.xfer = Request.XFER_HOST_TO_CONTROLLER;
            r.transferBytes = lengthBytes;
            r.remoteAddress = SglDescriptor.address(sgl);
            r.rkey = SglDescriptor.key(sgl);
            r.remoteInvalidate = id == SglDescriptor.ID_KEYED_DATA_BLOCK_INVALIDATE;
            r.data = r.dataSlice(lengthBytes);
            q.readFromHost(r);
        } else if (id == SglDescriptor.ID_DATA_BLOCK_OFFSET && q.options.inCapsuleDataBytes() > 0) {
            long offset = SglDescriptor.address(sgl);
            long len = SglDescriptor.dataBlockLength(sgl);
            int available = r.capsuleBytes - SqeDescriptor.LENGTH;
            if (offset < 0 || offset > available) {
                q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_OFFSET_INVALID), "in-capsule offset", offset,
                        "min=0, max=" + available);
                return;
            }
            if (exact ? len != lengthBytes : len < lengthBytes) {
                q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "in-capsule SGL length",
                        len, (exact ? "expected=" : "min=") + lengthBytes);
                return;
            }
            if (offset + lengthBytes > available) {
                q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "in-capsule data received",
                        available, "needed=" + (offset + lengthBytes));
                return;
            }
            r.xfer = Request.XFER_HOST_TO_CONTROLLER;
            r.inCapsuleData = true;
            r.transferBytes = lengthBytes;
            r.data = q.recvData(r, offset, lengthBytes);
            r.state = Request.State.READY_TO_EXECUTE;
        } else {
            q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), "SGL identifier", id,
                    "supported=0x40, 0x4f (keyed data block), 0x01 (in-capsule offset)");
        }
    }

    /**
     * Controller-to-host data: a keyed SGL of exactly {@code lengthBytes}, or (when {@code exact} is false) of
     * 1 .. any bytes, of which at most {@code lengthBytes} are written.
     */
    static void dataToHost(Request r, RdmaQueue q, int lengthBytes, boolean exact) {
        if (!sglPsdt(r, q)) {
            return;
        }
        MemorySegment sgl = q.recvSgl(r);
        int id = SglDescriptor.id(sgl);
        if (!SglDescriptor.isKeyed(id)) {
            q.reject(r, NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), "SGL identifier", id,
                    "supported=0x40, 0x4f (keyed data block)");
            return;
        }
        int len = SglDescriptor.keyedLength(sgl);
        if (exact ? len != lengthBytes : len == 0) {
            q.reject(r, NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), "keyed SGL length", len,
                    exact ? "expected=" + lengthBytes : "min=1");
            return;
        }
        r.xfer = Request.XFER_CONTROLLER_TO_HOST;
        r.transferBytes = Math.min(len, lengthBytes);
        r.remoteAddress = SglDescriptor.address(sgl);
        r.rkey = SglDescriptor.key(sgl);
        r.remoteInvalidate = id == SglDescriptor.ID_KEYED_DATA_BLOCK_INVALIDATE;
        r.state = Request.State.READY_TO_EXECUTE;
    }

    private static boolean sglPsdt(Request r, RdmaQueue q) {
        int psdt = SqeDescriptor.flags(r.sqe) & SqeDescriptor.PSDT_MASK;
        if (psdt != SqeDescriptor.PSDT_SGL) {
            q.reject(r, INVALID_FIELD, "psdt", psdt >>> 6, "supported=1 (SGL)");
            return false;
        }
        return true;
    }

    /** Fabrics Connect: creates the controller (qid 0) or attaches an I/O queue to it. */
    private static void connect(Request r, RdmaQueue q) {
        MemorySegment sqe = r.sqe;
        MemorySegment data = r.data;
        Target t = q.target;
        int recfmt = ConnectDataDescriptor.recfmt(sqe);
        if (recfmt != 0) {
            invalidParameter(r, q, false, ConnectDataDescriptor.RECFMT_OFFSET, "recfmt=" + recfmt + ", supported=0");
            return;
        }
        int qid = ConnectDataDescriptor.qid(sqe);
        if (qid != q.qid) {
            invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid + ", expected=" + q.qid
                    + " (qid of the connection private data)");
            return;
        }
        int sqsize = ConnectDataDescriptor.sqsize(sqe);
        int maxEntries = q.options.maxEntries(qid);
        int max = Math.min(maxEntries, q.entries) - 1;
        if (sqsize < 1 || sqsize > max) {
            invalidParameter(r, q, false, ConnectDataDescriptor.SQSIZE_OFFSET, "sqsize=" + sqsize + ", min=1, max="
                    + max + " (0-based; maxQueueEntries=" + maxEntries + ", queue entries=" + q.entries + ")");
            return;
        }
        String subnqn = ConnectDataDescriptor.subnqn(data);
        String hostnqn = ConnectDataDescriptor.hostnqn(data);
        int cntlid = ConnectDataDescriptor.cntlid(data);
        Subsystem s = t.subsystem(subnqn);
        if (s == null) {
            invalidParameter(r, q, true, ConnectDataDescriptor.SUBNQN_OFFSET, "subnqn=" + subnqn + " (unknown)");
            return;
        }
        if (!s.allowsHost(hostnqn)) {
            LOG.info("connect rejected: invalid host: hostnqn={}, subnqn={}, allowedHosts={}, qid={}, peer={}",
                    hostnqn, subnqn, s.volume().allowedHosts(), qid, q.peer);
            r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST));
            return;
        }
        Controller c;
        if (qid != 0 && s.isDiscovery()) {
            invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid
                    + ", max=0 (a discovery controller has no I/O queues)");
            return;
        }
        if (qid == 0) {
            if (cntlid != ConnectDataDescriptor.CNTLID_DYNAMIC) {
                invalidParameter(r, q, true, ConnectDataDescriptor.CNTLID_OFFSET, "cntlid=" + cntlid
                        + ", expected=0xffff (dynamic controller model)");
                return;
            }
            long idHigh = data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET);
            long idLow = data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET + 8);
            if (r.fence == null && !s.isDiscovery()) { // discovery: no I/O to fence, concurrent discoveries coexist
                List<Controller> previous = s.controllersOf(hostnqn, idHigh, idLow);
                if (!previous.isEmpty()) {
                    // C8: the host starts a new association; the old one must not complete anything after the
                    // new one is acknowledged. Destroy it and answer only when its store I/O has drained.
                    for (Controller old : previous) {
                        old.destroy("replaced by a new association from the same host");
                    }
                    r.fence = previous;
                    r.fenceDeadlineNs = r.startNs + RdmaQueue.DRAIN_TIMEOUT_NS;
                    LOG.info("connect waits for the previous association to drain: hostnqn={}, subnqn={}, cntlids={}",
                            hostnqn, subnqn, previous.stream().map(x -> x.cntlid).toList());
                    q.awaitFence(r);
                    return;
                }
            } else if (r.fence != null && !r.fence.stream().allMatch(Controller::drained)) {
                LOG.warn("connect rejected: previous association did not drain within {} ms: hostnqn={}, subnqn={}",
                        RdmaQueue.DRAIN_TIMEOUT_NS / 1_000_000, hostnqn, subnqn);
                r.fail(NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC, NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, false));
                return;
            }
            c = t.createController(s, hostnqn, idHigh, idLow, ConnectDataDescriptor.kato(sqe), r.startNs);
        } else {
            c = t.controller(cntlid);
            if (c == null || c.isDestroyed()) {
                invalidParameter(r, q, true, ConnectDataDescriptor.CNTLID_OFFSET, "cntlid=" + cntlid + " (unknown)");
                return;
            }
            if (c.subsystem != s) {
                invalidParameter(r, q, true, ConnectDataDescriptor.SUBNQN_OFFSET, "subnqn=" + subnqn
                        + ", expected=" + c.subsystem.subnqn() + " (subnqn of cntlid " + cntlid + ")");
                return;
            }
            if (!c.hostnqn().equals(hostnqn)) {
                invalidParameter(r, q, true, ConnectDataDescriptor.HOSTNQN_OFFSET, "hostnqn=" + hostnqn
                        + ", expected=" + c.hostnqn() + " (hostnqn of cntlid " + cntlid + ")");
                return;
            }
            if (qid > q.options.maxIoQueues() || !c.attachIoQueue(qid, q)) {
                invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid + ", min=1, max="
                        + q.options.maxIoQueues() + " (or already connected)");
                return;
            }
        }
        c.commandReceived(r.startNs);
        q.connected(c, sqsize + 1);
        r.dw0 = c.cntlid;
        r.state = Request.State.READY_TO_COMPLETE;
        LOG.info("queue connected: qid={}, cntlid={}, sqsize={} (0-based), subnqn={}, hostnqn={}, peer={}", qid,
                c.cntlid, sqsize, subnqn, hostnqn, q.peer);
    }

    /** AWAITING_FENCE: true when every previous association drained or the deadline passed (connect re-runs). */
    static boolean fenceDone(Request r, long nowNs) {
        return nowNs - r.fenceDeadlineNs >= 0 || r.fence.stream().allMatch(Controller::drained);
    }

    private static void invalidParameter(Request r, RdmaQueue q, boolean inData, int offset, String detail) {
        LOG.info("connect rejected: invalid parameter: {} ({} byte {}), qid={}, peer={}", detail,
                inData ? "connect data" : "SQE", offset, q.qid, q.peer);
        r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS));
        r.dw0 = ConnectDataDescriptor.invalidParameterDw0(inData, offset);
    }
}
