package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.Sge;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The RC queue pair of both emulated providers: everything but the transport. The send and receive queues are
 * preallocated rings written by the posting thread (one at a time) and consumed by the provider's transport (soft: the
 * queue pair's {@code QpEngine} over TCP; memory: the connection's in-process drain, {@code MemLink}). Work requests are
 * copied into slot arrays and their SGEs resolved to regions at post time (a bad lkey, bounds or access becomes an
 * error completion, LOC_PROT_ERR, in order, as on hardware). Posting allocates nothing and takes no lock.
 *
 * <p>Completions ({@link #completeSend}, {@link #completeRecv}) and the flushes of teardown ({@link #flushSends},
 * {@link #flushRecvs}) are generated here for both transports, by whichever thread consumes the queues (one at a
 * time). Send-queue slots are released when a signaled completion (or an error/flush completion) is generated, so a
 * stream of unsignaled WRs without a signaled one fills the queue (ENOMEM), as on hardware.
 *
 * <p>The transport is the subclass: it is told of posts ({@link #sendPosted}, {@link #recvPosted}), of errors
 * ({@link #requestError}) and of the polls and waits of the completion queues ({@link #pollStep}, {@link #awaitStep},
 * {@link #handBack}, {@link #wakeAwait}). Shared implementation of the emulated providers, not an API for users; the
 * queue fields are public only for the two transports' packages.
 */
public abstract class EmuQp implements QueuePair {
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final WrOpcode[] WR_OPCODES = WrOpcode.values();

    public final EmuDevice device;
    public final EmuPd pd;
    public final EmuCq sendCq;
    public final EmuCq recvCq;
    private final QpInitAttr attr;
    private final int qpNum;
    private volatile QpState state = QpState.INIT;
    /** Destroyed ({@code ibv_destroy_qp}): posts fail EINVAL. */
    protected volatile boolean closed;
    private volatile Runnable onDisconnected;

    // ---- send queue (written by the poster, read by the transport) ----
    public final int sqMask;
    public final int maxSendSge;
    public final long[] sqWrId;
    public final byte[] sqOpcode;
    public final int[] sqFlags;
    public final int[] sqNumSge;
    public final long[] sqRemoteAddr;
    public final int[] sqRkey;
    public final int[] sqImm;
    public final int[] sqTotal;
    /** 0 or the {@link WcStatus} ordinal of a local error found at post time. */
    public final byte[] sqPostStatus;
    public final boolean[] sqInline;
    public final long[] sqSgeAddr;
    public final int[] sqSgeLen;
    public final EmuMr[] sqSgeMr;
    /**
     * Inline data, {@link #maxInline} bytes per send slot. allocateDirect, not an arena segment: buffers without a
     * memory session cost nothing per vectored socket call (segment-backed ones make {@code sun.nio.ch.IOUtil}
     * allocate a Releaser per buffer per call).
     */
    public final ByteBuffer inlineBuffer;
    /** {@link #inlineBuffer} as a segment. */
    public final MemorySegment inlineArea;
    public final int maxInline;
    private long sqTailLocal;
    public volatile long sqTail;
    public volatile long sqRetired;

    // ---- receive queue ----
    public final int rqMask;
    public final int maxRecvSge;
    public final long[] rqWrId;
    public final int[] rqNumSge;
    public final int[] rqTotal;
    public final byte[] rqPostStatus;
    public final long[] rqSgeAddr;
    public final int[] rqSgeLen;
    public final EmuMr[] rqSgeMr;
    private long rqTailLocal;
    public volatile long rqTail;
    /** The next RECV to complete; written by the transport only. */
    public volatile long rqHead;

    /** Checks {@code a} (limits, PD and CQs of {@code device}) and allocates the rings; not attached to the CQs yet. */
    protected EmuQp(EmuDevice device, QpInitAttr a) {
        EmuPd p = EmuQpAttrs.checkAndPd(a, device);
        if (!(a.sendCq instanceof EmuCq sc) || !(a.recvCq instanceof EmuCq rc)
                || !sc.deviceName().equals(device.name()) || !rc.deviceName().equals(device.name())) {
            throw new IllegalArgumentException("invalid sendCq/recvCq: not completion queues of " + device.name());
        }
        this.device = device;
        this.pd = p;
        this.sendCq = sc;
        this.recvCq = rc;
        this.attr = a.copy();
        this.qpNum = device.nextQpNum();

        int sqSize = EmuQpAttrs.pow2(a.maxSendWr);
        sqMask = sqSize - 1;
        maxSendSge = a.maxSendSge;
        sqWrId = new long[sqSize];
        sqOpcode = new byte[sqSize];
        sqFlags = new int[sqSize];
        sqNumSge = new int[sqSize];
        sqRemoteAddr = new long[sqSize];
        sqRkey = new int[sqSize];
        sqImm = new int[sqSize];
        sqTotal = new int[sqSize];
        sqPostStatus = new byte[sqSize];
        sqInline = new boolean[sqSize];
        sqSgeAddr = new long[sqSize * maxSendSge];
        sqSgeLen = new int[sqSize * maxSendSge];
        sqSgeMr = new EmuMr[sqSize * maxSendSge];
        maxInline = a.maxInlineData;
        inlineBuffer = ByteBuffer.allocateDirect(Math.max(1, sqSize * maxInline));
        inlineArea = MemorySegment.ofBuffer(inlineBuffer);

        int rqSize = EmuQpAttrs.pow2(a.maxRecvWr);
        rqMask = rqSize - 1;
        maxRecvSge = a.maxRecvSge;
        rqWrId = new long[rqSize];
        rqNumSge = new int[rqSize];
        rqTotal = new int[rqSize];
        rqPostStatus = new byte[rqSize];
        rqSgeAddr = new long[rqSize * maxRecvSge];
        rqSgeLen = new int[rqSize * maxRecvSge];
        rqSgeMr = new EmuMr[rqSize * maxRecvSge];
    }

    /** Enters this queue pair in its CQs (their polls step it from then on): the transport's constructor, last. */
    protected final void attachToCqs() {
        sendCq.attach(this);
        recvCq.attach(this);
    }

    /** Takes this queue pair out of its CQs and its provider's open resources (destroy). */
    protected final void detachAndUntrack() {
        sendCq.detach(this);
        recvCq.detach(this);
        device.resources().untrack(this);
    }

    @Override
    public final int qpNum() {
        return qpNum;
    }

    @Override
    public final QpState state() {
        return state;
    }

    public final void setState(QpState s) {
        state = s;
    }

    @Override
    public final QpInitAttr attr() {
        return attr;
    }

    public final void onDisconnected(Runnable r) {
        onDisconnected = r;
    }

    public final void fireDisconnected() {
        Runnable r = onDisconnected;
        if (r != null) {
            r.run();
        }
    }

    public final boolean isClosed() {
        return closed;
    }

    @Override
    public final void moveToError() {
        requestError();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{qpNum=" + qpNum + ", state=" + state + "}";
    }

    // ---------------------------------------------------------------- the transport's part

    /** Work requests were added to the send queue (the poster's thread, after a post that added any). */
    protected abstract void sendPosted();

    /** Work requests were added to the receive queue (the poster's thread, after a post that added any). */
    protected abstract void recvPosted();

    /** Moves to ERROR from any thread (also on CQ overrun); the transport flushes and tears the connection down. */
    public abstract void requestError();

    /** A poll of one of this queue pair's CQs (the poller's thread): a transport that runs on callers steps here. */
    protected void pollStep() {
    }

    /**
     * A wait on {@code cq}, one of this queue pair's CQs and its only one attached queue pair, up to {@code maxNs}: a
     * transport that can block for its own events does so here and returns true; false: the caller parks.
     */
    protected boolean awaitStep(EmuCq cq, long maxNs) {
        return false;
    }

    /** The caller stops driving this queue pair (it is about to park on a CQ of several): its own thread takes over. */
    protected void handBack() {
    }

    /** Ends a wait that {@link #awaitStep} blocks in (a completion or a wake-up of the waiter's CQ; any thread). */
    protected void wakeAwait() {
    }

    // ---------------------------------------------------------------- posting (the owner's thread)

    @Override
    public final void postSend(SendWr wr) {
        int posted = 0;
        try {
            for (SendWr w = wr; w != null; w = w.next) {
                postOneSend(w);
                posted++;
            }
        } finally {
            if (posted > 0) {
                sendPosted();
            }
        }
    }

    private void postOneSend(SendWr w) {
        QpState st = state;
        if (closed || (st != QpState.RTS && st != QpState.ERROR)) {
            throw new PostException("ibv_post_send failed: errno=22 (EINVAL), qp state=" + (closed ? "destroyed" : st)
                    + ", qpNum=" + qpNum, EINVAL, w.wrId);
        }
        if (w.opcode == null || w.numSge < 0 || w.numSge > maxSendSge || w.numSge > w.sgList.length) {
            throw new PostException("ibv_post_send failed: errno=22 (EINVAL), numSge=" + w.numSge + ", max="
                    + maxSendSge + ", opcode=" + w.opcode, EINVAL, w.wrId);
        }
        if (w.opcode == WrOpcode.SEND_WITH_INV) {
            throw new PostException("ibv_post_send failed: errno=22 (EINVAL), opcode=SEND_WITH_INV is not supported "
                    + "by the " + device.resources().providerName()
                    + " provider (DeviceContext.supportsSendWithInvalidate() is false), qpNum=" + qpNum,
                    EINVAL, w.wrId);
        }
        long t = sqTailLocal;
        if (t - sqRetired > sqMask || t - sqRetired >= attr.maxSendWr) {
            throw new PostException("ibv_post_send failed: errno=12 (ENOMEM), send queue full, maxSendWr="
                    + attr.maxSendWr, ENOMEM, w.wrId);
        }
        boolean inline = (w.sendFlags & SendWr.INLINE) != 0;
        boolean read = w.opcode == WrOpcode.RDMA_READ;
        long total = 0;
        for (int j = 0; j < w.numSge; j++) {
            total += Integer.toUnsignedLong(w.sgList[j].length);
        }
        if (inline && (read || total > maxInline)) {
            throw new PostException("ibv_post_send failed: errno=22 (EINVAL), inline lengthBytes=" + total
                    + ", maxInlineData=" + maxInline + ", opcode=" + w.opcode, EINVAL, w.wrId);
        }
        int i = (int) t & sqMask;
        sqWrId[i] = w.wrId;
        sqOpcode[i] = (byte) w.opcode.ordinal();
        sqFlags[i] = w.sendFlags;
        sqNumSge[i] = w.numSge;
        sqRemoteAddr[i] = w.remoteAddr;
        sqRkey[i] = w.rkey;
        sqImm[i] = w.immData;
        sqInline[i] = inline;
        byte status = 0;
        if (total > Integer.MAX_VALUE) {
            status = (byte) WcStatus.LOC_LEN_ERR.ordinal();
            total = 0;
        }
        sqTotal[i] = (int) total;
        int base = i * maxSendSge;
        if (inline) {
            long off = (long) i * maxInline;
            for (int j = 0; j < w.numSge && status == 0; j++) {
                Sge s = w.sgList[j];
                if (s.length != 0) {
                    MemorySegment.copy(device.inlineSource(s), 0, inlineArea, off, s.length);
                    off += s.length;
                }
            }
        } else {
            int need = read ? Access.LOCAL_WRITE : 0;
            for (int j = 0; j < w.numSge; j++) {
                Sge s = w.sgList[j];
                EmuMr mr = s.length == 0 ? null : resolve(s, need);
                if (s.length != 0 && mr == null && status == 0) {
                    status = (byte) WcStatus.LOC_PROT_ERR.ordinal();
                }
                sqSgeAddr[base + j] = s.addr;
                sqSgeLen[base + j] = s.length;
                sqSgeMr[base + j] = mr;
            }
        }
        sqPostStatus[i] = status;
        sqTailLocal = t + 1;
        sqTail = t + 1;
    }

    /** The region covering a local SGE with the needed access, in this QP's PD, or null. */
    private EmuMr resolve(Sge s, int needAccess) {
        return pd.local(s.lkey, s.addr, Integer.toUnsignedLong(s.length), needAccess);
    }

    @Override
    public final void postRecv(RecvWr wr) {
        boolean any = false;
        try {
            for (RecvWr w = wr; w != null; w = w.next) {
                postOneRecv(w);
                any = true;
            }
        } finally {
            if (any) {
                recvPosted();
            }
        }
    }

    private void postOneRecv(RecvWr w) {
        QpState st = state;
        if (closed || st == QpState.RESET) {
            throw new PostException("ibv_post_recv failed: errno=22 (EINVAL), qp state=" + (closed ? "destroyed" : st)
                    + ", qpNum=" + qpNum, EINVAL, w.wrId);
        }
        if (w.numSge < 0 || w.numSge > maxRecvSge || w.numSge > w.sgList.length) {
            throw new PostException("ibv_post_recv failed: errno=22 (EINVAL), numSge=" + w.numSge + ", max="
                    + maxRecvSge, EINVAL, w.wrId);
        }
        long t = rqTailLocal;
        if (t - rqHead >= attr.maxRecvWr) {
            throw new PostException("ibv_post_recv failed: errno=12 (ENOMEM), receive queue full, maxRecvWr="
                    + attr.maxRecvWr, ENOMEM, w.wrId);
        }
        int i = (int) t & rqMask;
        int base = i * maxRecvSge;
        rqWrId[i] = w.wrId;
        rqNumSge[i] = w.numSge;
        byte status = 0;
        long total = 0;
        for (int j = 0; j < w.numSge; j++) {
            Sge s = w.sgList[j];
            EmuMr mr = s.length == 0 ? null : resolve(s, Access.LOCAL_WRITE);
            if (s.length != 0 && mr == null) {
                status = (byte) WcStatus.LOC_PROT_ERR.ordinal();
            }
            rqSgeAddr[base + j] = s.addr;
            rqSgeLen[base + j] = s.length;
            rqSgeMr[base + j] = mr;
            total += Integer.toUnsignedLong(s.length);
        }
        rqTotal[i] = (int) Math.min(total, Integer.MAX_VALUE);
        rqPostStatus[i] = status;
        rqTailLocal = t + 1;
        rqTail = t + 1;
    }

    // ---------------------------------------------------------------- completions (the transport's consumer)

    /**
     * Generates the completion of send slot {@code i}; {@code head}, the send queue's consumer position, already counts
     * it. The slot (and earlier unsignaled ones) is released to the poster before the completion becomes visible, so
     * a poster that saw the completion can reuse the slot; an error moves to ERROR no later than its completion.
     */
    public final void completeSend(int i, long head, WcStatus status) {
        long wrId = sqWrId[i]; // read before the slot is released
        int total = sqTotal[i];
        WcOpcode op = switch (WR_OPCODES[sqOpcode[i]]) {
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> WcOpcode.SEND; // SEND_WITH_INV is refused at post
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
        };
        sqRetired = head;
        if (status != WcStatus.SUCCESS) {
            state = QpState.ERROR; // visible no later than the error completion
        }
        sendCq.push(wrId, status, op, total, false, 0, qpNum);
    }

    /** Completes the RECV at the head of the receive queue. */
    public final void completeRecv(WcStatus status, WcOpcode op, int len, boolean withImm, int imm) {
        long h = rqHead;
        long wrId = rqWrId[(int) h & rqMask];
        rqHead = h + 1;
        if (status != WcStatus.SUCCESS) {
            state = QpState.ERROR;
        }
        recvCq.push(wrId, status, op, len, withImm, imm, qpNum);
    }

    /** Completes the send slots from {@code head} to the tail with WR_FLUSH_ERR; returns the new head. */
    public final long flushSends(long head) {
        for (long t = sqTail; head < t; ) {
            int i = (int) head & sqMask;
            head++;
            completeSend(i, head, WcStatus.WR_FLUSH_ERR);
        }
        return head;
    }

    /** Completes every posted RECV with WR_FLUSH_ERR; true when there were any. */
    public final boolean flushRecvs() {
        long tail = rqTail;
        if (rqHead >= tail) {
            return false;
        }
        while (rqHead < tail) {
            completeRecv(WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
        }
        return true;
    }

    /** True when a RECV is posted and not completed yet. */
    public final boolean hasRecv() {
        return rqHead != rqTail;
    }

    /**
     * The responder's checks of a SEND (or of the RECV an RDMA_WRITE_WITH_IMM consumes, {@code len} 0) of {@code len}
     * bytes, in both transports: the slot of the RECV it goes into ({@code >= 0}); {@link #RECV_NONE} when none is
     * posted (RNR); else the RECV was completed with its error here (its post-time error: REM_OP_ERR for the
     * requester; shorter than {@code len}: LOC_LEN_ERR, REM_INV_REQ_ERR for the requester) and the requester's status
     * is returned as {@code -2 - ordinal} ({@link #requesterStatus}).
     */
    public final int recvFor(int len) {
        long h = rqHead;
        if (h == rqTail) {
            return RECV_NONE;
        }
        int s = (int) h & rqMask;
        if (rqPostStatus[s] != 0) {
            completeRecv(WcStatus.of(rqPostStatus[s]), WcOpcode.RECV, 0, false, 0);
            return -2 - WcStatus.REM_OP_ERR.ordinal();
        }
        if (len > rqTotal[s]) {
            completeRecv(WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, false, 0);
            return -2 - WcStatus.REM_INV_REQ_ERR.ordinal();
        }
        return s;
    }

    /** {@link #recvFor}: no RECV posted. */
    public static final int RECV_NONE = -1;

    /** The requester's status of a negative {@link #recvFor} result other than {@link #RECV_NONE}. */
    public static WcStatus requesterStatus(int recvForResult) {
        return WcStatus.of(-2 - recvForResult);
    }
}
