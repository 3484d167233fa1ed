package io.rdmablock.rdma.verbs.memory;

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
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuPd;
import io.rdmablock.rdma.verbs.emu.EmuQpAttrs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A memory-provider RC queue pair. The send and receive queues are preallocated rings written by the posting thread
 * (one at a time), with each WR's SGEs resolved to regions at post time exactly as the soft provider does (bad lkey,
 * bounds or access: LOC_PROT_ERR, in order). Posted WRs are executed by {@link MemLink} on the posting thread (or,
 * when the peer's thread is already running the connection's work, by that thread): SEND is copied into the peer's
 * next posted RECV, RDMA READ/WRITE are copies between registered regions after the rkey, protection domain, bounds
 * and access checks of {@link #remote}. Completions go straight onto the CQs. Posting allocates nothing and takes no
 * lock. Send-queue slots are released when a signaled (or error/flush) completion is generated, as in soft.
 *
 * <p>The queue fields without {@code volatile} below the constructor are touched only inside the link's drain.
 */
final class MemQp implements QueuePair {
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    /** RNR: one retry per this many ns, as soft's {@code QpEngine.RNR_DELAY_NS}. */
    static final long RNR_DELAY_NS = 1_000_000L;
    /** Result of an execution step: no RECV posted at the responder. */
    static final int RNR = -1;
    static final WrOpcode[] WR_OPCODES = WrOpcode.values();
    private static final int OK = 0;

    final EmuDevice device;
    final EmuPd pd;
    final MemCq sendCq;
    final MemCq recvCq;
    private final QpInitAttr attr;
    private final int qpNum;
    private volatile QpState state = QpState.INIT;
    private volatile boolean closed;
    private volatile Runnable onDisconnected;
    volatile MemLink link;

    final int sqMask;
    final int maxSendSge;
    final long[] sqWrId;
    final byte[] sqOpcode;
    final int[] sqFlags;
    final int[] sqNumSge;
    final long[] sqRemoteAddr;
    final int[] sqRkey;
    final int[] sqImm;
    final int[] sqTotal;
    final byte[] sqPostStatus;
    final boolean[] sqInline;
    final long[] sqSgeAddr;
    final int[] sqSgeLen;
    final EmuMr[] sqSgeMr;
    final MemorySegment inlineArea;
    final int maxInline;
    private long sqTailLocal;
    private volatile long sqTail;
    private volatile long sqRetired;

    final int rqMask;
    final int maxRecvSge;
    final long[] rqWrId;
    final int[] rqNumSge;
    final int[] rqTotal;
    final byte[] rqPostStatus;
    final long[] rqSgeAddr;
    final int[] rqSgeLen;
    final EmuMr[] rqSgeMr;
    private long rqTailLocal;
    private volatile long rqTail;
    private volatile long rqHead;

    private long sqHead;
    private long rnrSeq = -1;
    private long rnrStartNs;
    private volatile boolean rnrTimerArmed;
    /** A SEND/WRITE_WITH_IMM at the head of this send queue waits for a RECV of the peer. */
    volatile boolean rnrStalled;

    MemQp(EmuDevice device, QpInitAttr a) {
        EmuPd p = EmuQpAttrs.checkAndPd(a, device);
        if (!(a.sendCq instanceof MemCq sc) || !(a.recvCq instanceof MemCq rc)) {
            throw new IllegalArgumentException("invalid sendCq/recvCq: not completion queues of "
                    + MemVerbsProvider.DEVICE_NAME);
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
        inlineArea = Arena.ofAuto().allocate(Math.max(1L, (long) sqSize * maxInline), 64);
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
        sendCq.attach(this);
        recvCq.attach(this);
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpState state() {
        return state;
    }

    void setState(QpState s) {
        state = s;
    }

    @Override
    public QpInitAttr attr() {
        return attr;
    }

    void onDisconnected(Runnable r) {
        onDisconnected = r;
    }

    void fireDisconnected() {
        Runnable r = onDisconnected;
        if (r != null) {
            r.run();
        }
    }

    boolean isClosed() {
        return closed;
    }

    // ---------------------------------------------------------------- posting (the owner's thread)

    @Override
    public void postSend(SendWr wr) {
        int posted = 0;
        try {
            for (SendWr w = wr; w != null; w = w.next) {
                postOneSend(w);
                posted++;
            }
        } finally {
            if (posted > 0) {
                progress();
            }
        }
    }

    private void progress() {
        MemLink l = link;
        if (l != null) {
            l.kick();
        } else if (state == QpState.ERROR) {
            flushAll(); // never connected: nothing else consumes these queues
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
                    + "by the memory provider (DeviceContext.supportsSendWithInvalidate() is false), qpNum=" + qpNum,
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
            for (int j = 0; j < w.numSge; j++) {
                Sge s = w.sgList[j];
                if (s.length != 0) {
                    MemorySegment.copy(sourceOf(s), 0, inlineArea, off, s.length);
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

    /** Source memory of an inline SGE: its region when the lkey covers it (usual), else the raw address (as soft). */
    private MemorySegment sourceOf(Sge s) {
        return device.inlineSource(s);
    }

    /** The region covering a local SGE with the needed access, in this QP's PD, or null. */
    private EmuMr resolve(Sge s, int needAccess) {
        return pd.local(s.lkey, s.addr, Integer.toUnsignedLong(s.length), needAccess);
    }

    @Override
    public void postRecv(RecvWr wr) {
        boolean any = false;
        try {
            for (RecvWr w = wr; w != null; w = w.next) {
                postOneRecv(w);
                any = true;
            }
        } finally {
            if (any) {
                MemLink l = link;
                if (l == null ? state == QpState.ERROR : (l.peerOf(this).rnrStalled || state == QpState.ERROR)) {
                    progress();
                }
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

    /** Moves to ERROR from any thread (also on CQ overrun); the connection is torn down and both sides flush. */
    void requestError() {
        state = QpState.ERROR;
        MemLink l = link;
        if (l != null) {
            l.breakLink();
        } else {
            flushAll();
        }
    }

    @Override
    public void moveToError() {
        requestError();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        requestError();
        closed = true;
        sendCq.detach(this);
        recvCq.detach(this);
        device.resources().untrack(this);
    }

    @Override
    public String toString() {
        return "MemQp{qpNum=" + qpNum + ", state=" + state + "}";
    }

    // ---------------------------------------------------------------- execution (inside MemLink's drain only)

    /** Executes this QP's posted send WRs in order against responder {@code r}; true when anything changed. */
    boolean runSends(MemQp r, MemLink l) {
        boolean progress = false;
        while (sqHead < sqTail && state != QpState.ERROR) {
            int i = (int) sqHead & sqMask;
            int st = sqPostStatus[i] != 0 ? sqPostStatus[i] : MemTransfer.execute(this, i, r);
            if (st == RNR) {
                if (rnrSeq != sqHead) {
                    rnrSeq = sqHead;
                    rnrStartNs = System.nanoTime();
                }
                int limit = attr.rnrRetryCount;
                long waitedNs = System.nanoTime() - rnrStartNs;
                if (limit == 7 || waitedNs < limit * RNR_DELAY_NS) {
                    rnrStalled = true;
                    if (r.rqHead != r.rqTail) {
                        continue; // a RECV was posted meanwhile; its poster may have missed rnrStalled
                    }
                    if (limit != 7 && !rnrTimerArmed) {
                        rnrTimerArmed = true;
                        MemFabric.schedule(() -> {
                            rnrTimerArmed = false;
                            l.kick();
                        }, limit * RNR_DELAY_NS - waitedNs + 100_000L);
                    }
                    return progress;
                }
                st = WcStatus.RNR_RETRY_EXC_ERR.ordinal();
            }
            rnrStalled = false;
            rnrSeq = -1;
            sqHead++;
            progress = true;
            if (st == OK) {
                if ((sqFlags[i] & SendWr.SIGNALED) != 0) {
                    completeSend(i, WcStatus.SUCCESS);
                }
            } else {
                completeSend(i, WcStatus.of(st));
                l.breakLink();
                return true;
            }
        }
        return progress;
    }

    /** Flushes every outstanding WR of both queues with WR_FLUSH_ERR; true when there were any. */
    boolean flushAll() {
        boolean p = false;
        for (long t = sqTail; sqHead < t; ) {
            int i = (int) sqHead & sqMask;
            sqHead++;
            completeSend(i, WcStatus.WR_FLUSH_ERR);
            p = true;
        }
        for (long t = rqTail; rqHead < t; ) {
            completeRecv(WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
            p = true;
        }
        rnrStalled = false;
        return p;
    }

    /** Send slot {@code i} (already counted in sqHead) completes; its slot and earlier unsignaled ones are freed. */
    private void completeSend(int i, WcStatus status) {
        WcOpcode op = switch (WR_OPCODES[sqOpcode[i]]) {
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
        };
        sqRetired = sqHead;
        if (status != WcStatus.SUCCESS) {
            state = QpState.ERROR; // visible no later than the error completion
        }
        sendCq.push(sqWrId[i], status, op, sqTotal[i], false, 0, qpNum);
    }

    /** Completes the RECV at the head of the receive queue. */
    void completeRecv(WcStatus status, WcOpcode op, int len, boolean withImm, int imm) {
        int slot = (int) rqHead & rqMask;
        long wrId = rqWrId[slot];
        rqHead = rqHead + 1;
        if (status != WcStatus.SUCCESS) {
            state = QpState.ERROR;
        }
        recvCq.push(wrId, status, op, len, withImm, imm, qpNum);
    }

    /** Slot of the next RECV, or -1 when none is posted. */
    int rqNext() {
        long h = rqHead;
        return h == rqTail ? -1 : (int) h & rqMask;
    }

    /** The region behind a remote key with {@code access}, in this QP's PD, open, covering the range; or null. */
    EmuMr remote(int rkey, long addr, long len, int access) {
        return pd.remote(rkey, addr, len, access);
    }
}
