package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.Sge;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuPd;
import io.rdmablock.rdma.verbs.emu.EmuQpAttrs;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A soft RC queue pair: the send and receive queues are preallocated rings written by the posting thread (one at a
 * time) and consumed by the queue pair's {@link QpEngine}. Work requests are copied into slot arrays and their SGEs
 * resolved to regions at post time (a bad lkey, bounds or access becomes an error completion, LOC_PROT_ERR, in
 * order, as on hardware). Posting allocates nothing and takes no lock.
 *
 * <p>Send-queue slots are released when a signaled completion (or an error/flush completion) is generated, so a
 * stream of unsignaled WRs without a signaled one fills the queue (ENOMEM), as on hardware.
 */
final class SoftQp implements QueuePair {
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final WrOpcode[] WR_OPCODES = WrOpcode.values();

    final EmuDevice device;
    final EmuPd pd;
    final SoftCq sendCq;
    final SoftCq recvCq;
    private final QpInitAttr attr;
    private final int qpNum;
    final QpEngine engine;
    private volatile QpState state = QpState.INIT;
    private volatile boolean closed;
    private volatile Runnable onDisconnected;

    // ---- send queue (written by the poster, read by the engine) ----
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
    /** 0 or the {@link WcStatus} ordinal of a local error found at post time. */
    final byte[] sqPostStatus;
    final boolean[] sqInline;
    final long[] sqSgeAddr;
    final int[] sqSgeLen;
    final EmuMr[] sqSgeMr;
    final ByteBuffer[] sqHeader;
    final ByteBuffer[] sqInlineView;
    private final MemorySegment inlineArea;
    private final int maxInline;
    private long sqTailLocal;
    volatile long sqTail;
    volatile long sqRetired;

    // ---- receive queue ----
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
    volatile long rqTail;
    volatile long rqHead;

    SoftQp(EmuDevice device, QpInitAttr a) {
        EmuPd p = EmuQpAttrs.checkAndPd(a, device);
        if (!(a.sendCq instanceof SoftCq sc) || !(a.recvCq instanceof SoftCq rc)) {
            throw new IllegalArgumentException("invalid sendCq/recvCq: not completion queues of "
                    + SoftVerbsProvider.DEVICE_NAME);
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
        sqHeader = new ByteBuffer[sqSize];
        sqInlineView = new ByteBuffer[sqSize];
        maxInline = a.maxInlineData;
        // allocateDirect, not arena segments: buffers without a memory session cost nothing per vectored socket
        // call (segment-backed ones make sun.nio.ch.IOUtil allocate a Releaser per buffer per call).
        ByteBuffer headers = ByteBuffer.allocateDirect(sqSize * FrameDescriptor.HEADER_LENGTH);
        ByteBuffer inlineBuf = ByteBuffer.allocateDirect(Math.max(1, sqSize * maxInline));
        inlineArea = MemorySegment.ofBuffer(inlineBuf);
        for (int i = 0; i < sqSize; i++) {
            sqHeader[i] = headers.slice(i * FrameDescriptor.HEADER_LENGTH, FrameDescriptor.HEADER_LENGTH);
            sqInlineView[i] = inlineBuf.slice(i * maxInline, maxInline);
        }

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

        engine = new QpEngine(this);
        sendCq.attach(this);
        recvCq.attach(this);
        engine.start();
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

    /** Hands the connected socket to the engine and moves to RTS (rdma_cm: INIT -> RTR -> RTS on ESTABLISHED). */
    void establish(SocketChannel channel, int peerResponderResources) {
        engine.establish(channel, Math.min(attr.initiatorDepth, peerResponderResources));
        if (state != QpState.ERROR) {
            state = QpState.RTS;
        }
    }

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
                engine.driver.kick();
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
                    + "by the soft provider (DeviceContext.supportsSendWithInvalidate() is false), qpNum=" + qpNum,
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
                    MemorySegment src = sourceOf(s);
                    MemorySegment.copy(src, 0, inlineArea, off, s.length);
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

    /** Source memory of an inline SGE: its region when the lkey covers it (usual), else the raw address. */
    private MemorySegment sourceOf(Sge s) {
        return device.inlineSource(s);
    }

    /** The region covering a local SGE with the needed access, in this QP's PD, or null. */
    EmuMr resolve(Sge s, int needAccess) {
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
            if (any && state == QpState.ERROR) {
                engine.wake();
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

    /** Moves to ERROR from any thread; the engine flushes. */
    void requestError() {
        state = QpState.ERROR;
        engine.wake();
    }

    @Override
    public void moveToError() {
        requestError();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        state = QpState.ERROR;
        boolean stopped = engine.shutdown(5_000_000_000L);
        sendCq.detach(this);
        recvCq.detach(this);
        device.resources().untrack(this);
        if (!stopped) {
            org.slf4j.LoggerFactory.getLogger(SoftQp.class).warn("soft qp {}: engine did not stop within 5 s", qpNum);
        }
    }

    @Override
    public String toString() {
        return "SoftQp{qpNum=" + qpNum + ", state=" + state + "}";
    }
}
