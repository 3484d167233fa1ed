package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One connected NVMe/RDMA queue: rdma_cm id, completion queue and RC queue pair, set up as NVMe/RDMA Transport 1.0
 * section 3.2 and NVMe-oF 1.1 section 3.3 describe: RECVs for every response posted, CM connect with the request
 * private data (qid, hrqsize = entries, hsqsize = entries - 1), then the Fabrics Connect command whose 1024-byte
 * data the node RDMA READs through a keyed SGL. After {@link #establish} returns, the queue belongs to one thread:
 * the controller thread (admin queue) or the queue's poller (I/O queues).
 *
 * <p>Work request ids: RECV {@code RECV_TAG | index}, SEND {@code SEND_TAG | slot}.
 */
final class QueueConnection implements AutoCloseable {
    static final long RECV_TAG = 1L << 40;
    static final long SEND_TAG = 2L << 40;
    static final long TAG_MASK = 0xFFL << 40;
    /** A send is signaled at least every this many sends, so the send queue drains. */
    static final int SIGNAL_INTERVAL = 16;

    final int qid;
    final int entries;
    final CmId id;
    final CompletionQueue cq;
    final QueuePair qp;
    final QueueMemory mem;
    private final RecvWr[] recvWrs;
    /** cid reserved for the Asynchronous Event Request on the admin queue; never used by {@link #execSync}. */
    static final int AER_CID = 0xFFFF;
    /** cntlid from the Connect response (the admin queue's is the controller's). */
    int cntlid;
    /** Completion of the outstanding Asynchronous Event Request, when one arrived; taken by the controller. */
    Completion asyncEvent;
    private int syncCid;
    private final WorkCompletion[] syncWcs = WorkCompletion.array(16);
    private final SendWr syncWr = new SendWr(1);

    private QueueConnection(int qid, int entries, CmId id, CompletionQueue cq, QueuePair qp, QueueMemory mem) {
        this.qid = qid;
        this.entries = entries;
        this.id = id;
        this.cq = cq;
        this.qp = qp;
        this.mem = mem;
        this.recvWrs = new RecvWr[entries];
        for (int i = 0; i < entries; i++) {
            RecvWr r = new RecvWr(1);
            r.wrId = RECV_TAG | i;
            r.sgList[0].set(mem.mr, mem.cqeOffset(i), CqeDescriptor.LENGTH);
            r.numSge = 1;
            recvWrs[i] = r;
        }
    }

    /** What the Fabrics Connect command carries besides qid/sqsize. */
    record ConnectParams(String subnqn, String hostnqn, byte[] hostId, int katoMs) {
    }

    /**
     * Sets up the queue on an id that is already resolved ({@link CmId#resolve}) and returns it connected.
     *
     * @param cntlid {@link ConnectDataDescriptor#CNTLID_DYNAMIC} on the admin queue, the controller's cntlid otherwise
     * @throws NvmeStatusException when the Connect command fails (e.g. invalid host, invalid parameters)
     * @throws BlockIoException    when the CM connect is rejected (message names the reject status) or times out
     */
    static QueueConnection establish(CmId id, ProtectionDomain pd, QueueMemory mem, int qid, int entries,
                                     int cntlid, ConnectParams params, long timeoutNs) {
        CompletionQueue cq = id.device().createCq(entries * 2 + SIGNAL_INTERVAL + 8);
        QueueConnection c;
        try {
            QpInitAttr attr = new QpInitAttr().pd(pd).cq(cq);
            attr.maxSendWr = entries + SIGNAL_INTERVAL + 4;
            attr.maxRecvWr = entries;
            attr.maxSendSge = 2;
            attr.maxRecvSge = 1;
            QueuePair qp = id.createQp(attr);
            c = new QueueConnection(qid, entries, id, cq, qp, mem);
        } catch (RuntimeException e) {
            cq.close();
            throw e;
        }
        try {
            c.postAllRecvs();
            byte[] pdata = new CmPrivateData.Request(0, qid, entries, entries - 1, cntlid).encode();
            try {
                id.connect(pdata, timeoutNs);
            } catch (CmException e) {
                throw new BlockIoException(describeCmFailure(qid, e), e);
            }
            MemorySegment data = mem.connectData();
            ConnectDataDescriptor.data(data, params.hostId(), cntlid, params.subnqn(), params.hostnqn());
            Completion r = c.execSync(sqe -> {
                ConnectDataDescriptor.sqe(sqe, 0, qid, entries - 1, qid == 0 ? params.katoMs() : 0);
                SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), mem.mr.address() + mem.connectDataOffset(),
                        ConnectDataDescriptor.DATA_LENGTH, mem.mr.rkey());
            }, timeoutNs);
            if (r.status() != NvmeStatus.SUCCESS) {
                String where = connectFailureReason(r.status(), r.dw0());
                throw new NvmeStatusException("Connect failed: qid=" + qid + ", sqsize=" + (entries - 1) + ", subnqn="
                        + params.subnqn() + ", hostnqn=" + params.hostnqn() + where,
                        NvmeStatus.sct(r.status()), NvmeStatus.sc(r.status()), NvmeStatus.dnr(r.status()));
            }
            c.cntlid = r.dw0() & 0xFFFF;
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * What a failed Connect means for the user (NVMe-oF 1.1 section 3.3, Figure 21: dw0 of an invalid-parameters
     * answer gives IATTR bit 0 = in data, IPO bits 31:16 = byte offset).
     */
    static String connectFailureReason(int status, int dw0) {
        if (NvmeStatus.sct(status) != NvmeStatus.SCT_COMMAND_SPECIFIC) {
            return "";
        }
        int sc = NvmeStatus.sc(status);
        if (sc == NvmeStatus.SC_CONNECT_INVALID_HOST) {
            return ": this hostnqn is not on the volume's allowed hosts";
        }
        if (sc != NvmeStatus.SC_CONNECT_INVALID_PARAMETERS) {
            return "";
        }
        boolean inData = (dw0 & 1) != 0;
        int offset = dw0 >>> 16;
        String what = !inData ? "" : switch (offset) {
            case ConnectDataDescriptor.SUBNQN_OFFSET -> ": the node exports no such subsystem (volume deleted, not on "
                    + "this node, or not yet exported)";
            case ConnectDataDescriptor.CNTLID_OFFSET -> ": the node no longer knows this controller (association "
                    + "expired)";
            case ConnectDataDescriptor.HOSTNQN_OFFSET -> ": hostnqn differs from the admin queue's";
            default -> "";
        };
        return ", invalid parameter in " + (inData ? "data" : "SQE") + " at byte " + offset + what;
    }

    private static String describeCmFailure(int qid, CmException e) {
        if (e.event() == CmEventType.REJECTED) {
            CmPrivateData.Reject rej = CmPrivateData.Reject.decode(e.privateData());
            return "connect rejected by the node: qid=" + qid
                    + (rej == null ? " (no NVMe/RDMA reject data)" : ", sts=0x" + Integer.toHexString(rej.sts())
                    + " (" + rejectName(rej.sts()) + ")");
        }
        return "connect failed: qid=" + qid + ", event=" + (e.event() == null ? "timeout" : e.event()) + ": "
                + e.getMessage();
    }

    static String rejectName(int sts) {
        return switch (sts) {
            case CmPrivateData.REJECT_INVALID_PRIVATE_DATA_LENGTH -> "invalid private data length";
            case CmPrivateData.REJECT_INVALID_RECFMT -> "invalid RECFMT";
            case CmPrivateData.REJECT_INVALID_QID -> "invalid QID";
            case CmPrivateData.REJECT_INVALID_HSQSIZE -> "invalid HSQSIZE";
            case CmPrivateData.REJECT_INVALID_HRQSIZE -> "invalid HRQSIZE";
            case CmPrivateData.REJECT_NO_RESOURCES -> "no resources";
            case CmPrivateData.REJECT_INVALID_IRD -> "invalid IRD";
            case CmPrivateData.REJECT_INVALID_ORD -> "invalid ORD";
            case CmPrivateData.REJECT_INVALID_CNTLID -> "invalid CNTLID";
            default -> "unknown";
        };
    }

    private void postAllRecvs() {
        for (int i = 0; i < entries; i++) {
            recvWrs[i].next = i + 1 < entries ? recvWrs[i + 1] : null;
        }
        qp.postRecv(recvWrs[0]);
        for (RecvWr r : recvWrs) {
            r.next = null;
        }
    }

    /** The RECV work request of response buffer {@code index}, for reposting (linked lists are the caller's). */
    RecvWr recvWr(int index) {
        return recvWrs[index];
    }

    /** A response as read from a response buffer. */
    record Completion(int dw0, int dw1, int status) {
    }

    /**
     * Runs one command synchronously in capsule slot 0 with a fresh cid: {@code fill} writes the SQE (its cid is
     * overwritten). Completions for other cids are dropped. Only for setup and admin commands (one at a time).
     *
     * @throws BlockIoException with a {@link TimeoutException} cause when no response arrives in time, or naming the
     *                          work-completion status when the queue failed
     */
    Completion execSync(Consumer<MemorySegment> fill, long timeoutNs) {
        MemorySegment sqe = mem.capsule(0);
        fill.accept(sqe);
        int cid = syncCid = (syncCid + 1) % AER_CID;
        SqeDescriptor.cid(sqe, cid);
        syncWr.wrId = SEND_TAG;
        syncWr.opcode = io.rdmablock.rdma.verbs.WrOpcode.SEND;
        syncWr.sendFlags = SendWr.SIGNALED;
        syncWr.sgList[0].set(mem.mr, mem.capsuleOffset(0), SqeDescriptor.LENGTH);
        syncWr.numSge = 1;
        syncWr.next = null;
        qp.postSend(syncWr);
        int opcode = SqeDescriptor.opcode(sqe);
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new BlockIoException("command timed out on qid " + qid + ": opcode=0x"
                        + Integer.toHexString(opcode) + ", cid=" + cid + ", timeoutMs=" + timeoutNs / 1_000_000,
                        new TimeoutException());
            }
            int n = cq.await(syncWcs, syncWcs.length, left);
            Completion found = null;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = syncWcs[i];
                if (!wc.ok()) {
                    throw new BlockIoException("queue failed: qid=" + qid + ", " + wc);
                }
                if ((wc.wrId & TAG_MASK) == RECV_TAG) {
                    int index = (int) (wc.wrId & 0xFFFFFFFFL);
                    MemorySegment cqe = mem.cqe(index);
                    Completion c = new Completion(CqeDescriptor.dw0(cqe), CqeDescriptor.dw1(cqe),
                            CqeDescriptor.status(cqe));
                    int got = CqeDescriptor.cid(cqe);
                    qp.postRecv(recvWrs[index]);
                    if (got == cid) {
                        found = c;
                    } else if (got == AER_CID) {
                        asyncEvent = c;
                    }
                }
            }
            if (found != null) {
                return found;
            }
        }
    }

    /** True when the CM reported the connection gone (polls without waiting). */
    boolean disconnectedEvent() {
        CmEventType e = id.pollEvent(0);
        return e == CmEventType.DISCONNECTED || e == CmEventType.DEVICE_REMOVAL;
    }

    /** Disconnects, destroys the QP, the id and the CQ; idempotent. The memory stays (it belongs to the queue). */
    @Override
    public void close() {
        RuntimeException first = null;
        try {
            id.close();
        } catch (RuntimeException e) {
            first = e;
        }
        try {
            cq.close();
        } catch (RuntimeException e) {
            if (first == null) {
                first = e;
            } else {
                first.addSuppressed(e);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
