package io.rdmablock.nvmf.host;

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

import io.rdmablock.rdma.verbs.VerbsProvider;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One connected NVMe/RDMA queue: rdma_cm id, completion queue and RC queue pair, set up as NVMe/RDMA Transport 1.0
 * section 3.2 and NVMe-oF 1.1 section 3.3 describe: RECVs for every response posted, CM connect with the request
 * private data (qid, hrqsize = entries, hsqsize = entries - 1), then the Fabrics Connect command whose 1024-byte
 * data the target RDMA READs through a keyed SGL, as Linux {@code drivers/nvme/host/rdma.c}
 * ({@code nvme_rdma_create_queue_ib}, {@code nvme_rdma_route_resolved}, {@code nvmf_connect_admin_queue}). After
 * {@link #establish} returns, the queue belongs to one thread: the thread that runs the admin queue, or the one that
 * polls the I/O queue. Not thread-safe, except {@link #close()} (CM disconnect wakes the owner's poll with flushes).
 *
 * <p>Resources: one CQ of {@code 2 x entries + SIGNAL_INTERVAL + 8} entries; one RC QP with {@code entries +
 * SIGNAL_INTERVAL + 4} send WRs (2 SGEs each) and {@code entries} receive WRs (1 SGE), one RECV posted per response
 * buffer of the {@link QueueMemory}. Work request ids: RECV {@code RECV_TAG | index}, SEND {@code SEND_TAG | slot}.
 *
 * <p>When the Connect answer asks for in-band authentication (AUTHREQ.ATR), or a controller secret is given
 * (bidirectional), the queue runs DH-HMAC-CHAP before it is returned ({@link QueueAuthenticator}).
 *
 * <p>Errors: {@link NvmfStatusException} when the Fabrics Connect is answered with an error status, or when
 * authentication is required and fails or no secret was given (status Authentication Required, 1/91h),
 * {@link NvmfHostException} when the CM connect is rejected (naming the NVMe/RDMA reject status) or a step times out.
 */
public final class QueueConnection implements AutoCloseable {
    /** Tag bits of a RECV work request id; the low 32 bits are the response buffer index. */
    public static final long RECV_TAG = 1L << 40;
    /** Tag bits of a SEND work request id; the low 32 bits are the capsule slot. */
    public static final long SEND_TAG = 2L << 40;
    /** Mask of the tag bits of a work request id. */
    public static final long TAG_MASK = 0xFFL << 40;
    /** A send is signaled at least every this many sends, so the send queue drains. */
    public static final int SIGNAL_INTERVAL = 16;
    /** cid reserved for the Asynchronous Event Request on the admin queue; never used by {@link #execSync}. */
    public static final int AER_CID = 0xFFFF;

    private final int qid;
    private final int entries;
    private final CmId id;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final QueueMemory mem;
    private final RecvWr[] recvWrs;
    private final MemorySegment[] cqes;
    /** cntlid from the Connect response (the admin queue's is the controller's). */
    private int cntlid;
    /** Completion of the outstanding Asynchronous Event Request, when execSync saw it; see takeAsyncEvent. */
    private Completion asyncEvent;
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
        this.cqes = new MemorySegment[entries];
        for (int i = 0; i < entries; i++) {
            RecvWr r = new RecvWr(1);
            r.wrId = RECV_TAG | i;
            r.sgList[0].set(mem.mr(), mem.cqeOffset(i), CqeDescriptor.LENGTH);
            r.numSge = 1;
            recvWrs[i] = r;
            cqes[i] = mem.cqe(i);
        }
    }

    /**
     * What the Fabrics Connect command carries besides qid/sqsize (NVMe-oF 1.1 section 3.3, Figure 20 and 21).
     *
     * @param subnqn  the subsystem NQN (at most 223 bytes UTF-8)
     * @param hostnqn the host NQN (at most 223 bytes UTF-8)
     * @param hostId  the 16-byte Host Identifier
     * @param katoMs  Keep Alive Timeout in milliseconds (admin queue only; 0 = none, and on I/O queues)
     */
    public record ConnectParams(String subnqn, String hostnqn, byte[] hostId, int katoMs,
                                io.rdmablock.nvme.auth.DhchapSecret dhchapSecret,
                                io.rdmablock.nvme.auth.DhchapSecret dhchapCtrlSecret) {
        /** Without in-band authentication secrets. */
        public ConnectParams(String subnqn, String hostnqn, byte[] hostId, int katoMs) {
            this(subnqn, hostnqn, hostId, katoMs, null, null);
        }

        /** These parameters with DH-HMAC-CHAP secrets (host secret, optional controller secret; null for none). */
        public ConnectParams withDhchap(io.rdmablock.nvme.auth.DhchapSecret host,
                                        io.rdmablock.nvme.auth.DhchapSecret ctrl) {
            return new ConnectParams(subnqn, hostnqn, hostId, katoMs, host, ctrl);
        }
    }

    /**
     * Creates a CM id, resolves {@code address} and establishes the queue on it ({@link #establish}); the id is
     * closed when any step fails.
     *
     * @param pd the protection domain of {@code mem}; it must belong to the device that routes to {@code address}
     * @throws NvmfHostException   when resolution, the CM connect or the Fabrics Connect fails or times out
     * @throws NvmfStatusException when the Fabrics Connect is answered with an error status
     */
    public static QueueConnection connect(VerbsProvider provider, InetSocketAddress address, ProtectionDomain pd,
                                          QueueMemory mem, int qid, int entries, int cntlid, ConnectParams params,
                                          long timeoutNs) {
        CmId id = provider.createId();
        try {
            id.resolve(address, timeoutNs);
            return establish(id, pd, mem, qid, entries, cntlid, params, timeoutNs);
        } catch (RuntimeException e) {
            id.close();
            throw e;
        }
    }

    /**
     * Sets up the queue on an id that is already resolved ({@link CmId#resolve}) and returns it connected; on
     * failure everything but {@code id} is released.
     *
     * @param qid     0 for the admin queue, 1 .. 65534 for an I/O queue
     * @param entries queue entries (hrqsize; sqsize = entries - 1), at most {@code mem.entries()}
     * @param cntlid  {@link ConnectDataDescriptor#CNTLID_DYNAMIC} on the admin queue, the controller's cntlid otherwise
     * @throws NvmfStatusException when the Connect command fails (e.g. invalid host, invalid parameters)
     * @throws NvmfHostException   when the CM connect is rejected (message names the reject status) or times out
     */
    public static QueueConnection establish(CmId id, ProtectionDomain pd, QueueMemory mem, int qid, int entries,
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
                throw new NvmfHostException(describeCmFailure(qid, e), e);
            }
            MemorySegment data = mem.connectData();
            ConnectDataDescriptor.data(data, params.hostId(), cntlid, params.subnqn(), params.hostnqn());
            Completion r = c.execSync(sqe -> {
                ConnectDataDescriptor.sqe(sqe, 0, qid, entries - 1, qid == 0 ? params.katoMs() : 0);
                SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), mem.mr().address() + mem.connectDataOffset(),
                        ConnectDataDescriptor.DATA_LENGTH, mem.mr().rkey());
            }, timeoutNs);
            if (r.status() != NvmeStatus.SUCCESS) {
                String where = connectFailureReason(r.status(), r.dw0());
                throw NvmfStatusException.of("Connect failed: qid=" + qid + ", sqsize=" + (entries - 1) + ", subnqn="
                        + params.subnqn() + ", hostnqn=" + params.hostnqn() + where, r.status());
            }
            c.cntlid = r.dw0() & 0xFFFF;
            if ((r.dw0() & QueueAuthenticator.CONNECT_AUTHREQ_ATR) != 0 || params.dhchapCtrlSecret() != null) {
                QueueAuthenticator.authenticate(c, params, timeoutNs);
            }
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * What a failed Connect means for the user (NVMe-oF 1.1 section 3.3, Figure 21: dw0 of an invalid-parameters
     * answer gives IATTR bit 0 = in data, IPO bits 31:16 = byte offset); "" when there is nothing to add.
     *
     * @param status the Connect response's status field; {@code dw0} its dword 0
     */
    public static String connectFailureReason(int status, int dw0) {
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

    /** The name of an NVMe/RDMA CM reject status (NVMe/RDMA Transport 1.0, Figure 6), "unknown" otherwise. */
    public static String rejectName(int sts) {
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
    public RecvWr recvWr(int index) {
        return recvWrs[index];
    }

    /** Takes one response buffer (16-byte CQE) of {@link #processCompletions}; valid only during the call. */
    @FunctionalInterface
    public interface ResponseConsumer {
        void accept(MemorySegment cqe);
    }

    /**
     * The I/O poller's half of a completion-queue poll: of {@code n} work completions already polled into
     * {@code wcs}, hands every received response buffer to {@code consumer} in order, skips send completions, then
     * reposts the RECVs of those buffers as one chained post (Linux {@code nvme_rdma_recv_done} reposts each).
     * Allocates nothing.
     *
     * @return null when every completion succeeded and the repost worked; otherwise what failed ({@code "work
     * completion failed: <status> (wrId=0x..)"} for the first failed one, then nothing is reposted; or {@code "post
     * recv failed: .."}): the queue is failing
     */
    public String processCompletions(WorkCompletion[] wcs, int n, ResponseConsumer consumer) {
        RecvWr head = null;
        RecvWr tail = null;
        String failure = null;
        for (int i = 0; i < n; i++) {
            WorkCompletion wc = wcs[i];
            if (!wc.ok()) {
                if (failure == null) {
                    failure = "work completion failed: " + wc.status + " (wrId=0x" + Long.toHexString(wc.wrId) + ")";
                }
                continue;
            }
            if ((wc.wrId & TAG_MASK) != RECV_TAG) {
                continue; // send completion: the response completes the command
            }
            int index = (int) (wc.wrId & 0xFFFFFFFFL);
            consumer.accept(cqes[index]);
            RecvWr rw = recvWrs[index];
            rw.next = null;
            if (head == null) {
                head = rw;
            } else {
                tail.next = rw;
            }
            tail = rw;
        }
        if (failure != null || head == null) {
            return failure;
        }
        try {
            qp.postRecv(head);
        } catch (RuntimeException e) {
            return "post recv failed: " + e.getMessage();
        }
        return null;
    }

    /** 0 for the admin queue, else the I/O queue's id. */
    public int qid() {
        return qid;
    }

    /** Queue entries (sqsize + 1); at most entries - 1 commands may be outstanding (SQHD rule). */
    public int entries() {
        return entries;
    }

    /** The cntlid the target answered the Connect with (on the admin queue: the controller's). */
    public int cntlid() {
        return cntlid;
    }

    /** The rdma_cm id (owner thread only; {@link CmId#disconnect()} from any thread). */
    public CmId cmId() {
        return id;
    }

    /** The completion queue of both work queues (owner thread only; {@code wakeup} from any thread). */
    public CompletionQueue cq() {
        return cq;
    }

    /** The RC queue pair (owner thread only). */
    public QueuePair qp() {
        return qp;
    }

    /** The registered memory the queue's capsules and response buffers live in; owned by the caller. */
    public QueueMemory memory() {
        return mem;
    }

    /**
     * The completion of the Asynchronous Event Request ({@link #AER_CID}) that {@link #execSync} saw while waiting
     * for its own command, or null; cleared by the call.
     */
    public Completion takeAsyncEvent() {
        Completion c = asyncEvent;
        asyncEvent = null;
        return c;
    }

    /**
     * A response as read from a response buffer (NVMe Base 2.0, Figure 89).
     *
     * @param dw0    command specific dword 0
     * @param dw1    dword 1
     * @param status the status field (bits 15:1 of CQE dword 3 as {@link NvmeStatus} encodes it; 0 = success)
     */
    public record Completion(int dw0, int dw1, int status) {
    }

    /**
     * Runs one command synchronously in capsule slot 0 with a fresh cid: {@code fill} writes the SQE (its cid is
     * overwritten). Completions for other cids are dropped. Only for setup and admin commands (one at a time).
     *
     * @throws NvmfHostException with a {@link TimeoutException} cause when no response arrives in time, or naming the
     *                           work-completion status when the queue failed
     */
    public Completion execSync(Consumer<MemorySegment> fill, long timeoutNs) {
        MemorySegment sqe = mem.capsule(0);
        fill.accept(sqe);
        int cid = syncCid = (syncCid + 1) % AER_CID;
        SqeDescriptor.cid(sqe, cid);
        syncWr.wrId = SEND_TAG;
        syncWr.opcode = io.rdmablock.rdma.verbs.WrOpcode.SEND;
        syncWr.sendFlags = SendWr.SIGNALED;
        syncWr.sgList[0].set(mem.mr(), mem.capsuleOffset(0), SqeDescriptor.LENGTH);
        syncWr.numSge = 1;
        syncWr.next = null;
        qp.postSend(syncWr);
        int opcode = SqeDescriptor.opcode(sqe);
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new NvmfHostException("command timed out on qid " + qid + ": opcode=0x"
                        + Integer.toHexString(opcode) + ", cid=" + cid + ", timeoutMs=" + timeoutNs / 1_000_000,
                        new TimeoutException());
            }
            int n = cq.await(syncWcs, syncWcs.length, left);
            Completion found = null;
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = syncWcs[i];
                if (!wc.ok()) {
                    throw new NvmfHostException("queue failed: qid=" + qid + ", " + wc);
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
    public boolean disconnectedEvent() {
        CmEventType e = id.pollEvent(0);
        return e == CmEventType.DISCONNECTED || e == CmEventType.DEVICE_REMOVAL;
    }

    /**
     * Destroys the queue pair now, ignoring failures (the queue is failing already), so the target can no longer
     * RDMA READ or WRITE memory named by an outstanding command: the fence before such a command is failed to its
     * caller, as Linux {@code nvme_rdma_timeout} stops the queue first. {@link #close()} releases the rest. Idempotent.
     */
    public void destroyQueuePair() {
        try {
            qp.close();
        } catch (RuntimeException e) {
            // already failing: close() reports what remains
        }
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
