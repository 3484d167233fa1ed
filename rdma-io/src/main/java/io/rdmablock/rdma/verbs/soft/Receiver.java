package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuQp;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The receive side of a {@link QpEngine}: a frame parser that reads the socket into a {@value #STAGE_BYTES}-byte stage
 * buffer, so that the frames that travel together (ACKs, command capsules and their 64-byte SQEs, responses, and
 * payloads of at most {@value #COPY_MAX} bytes) come in many to one system call, and are copied from the stage to their
 * destination (posted receive buffers, the RDMA WRITE target, the RDMA READ sink). While more than {@value #COPY_MAX}
 * bytes of a payload are still to come, they are read with a scattering read straight into its destination, the
 * stage riding along at its end for the next frames; what came into the stage with the header (up to the stage's
 * size) and a tail of at most {@value #COPY_MAX} bytes are copied. The copy is the soft provider's own cost (the kernel's TCP copies
 * anyway); it replaced one readv per 4 KiB payload, measured in docs/bench.md. A payload is placed only after the
 * request was checked; a rejected payload is read into a discard buffer. Every complete frame in the stage is handled
 * before the socket is read again, so the engine never waits on the socket for bytes it already holds. Only the thread
 * holding the engine.
 */
final class Receiver {
    private static final int HEADER = 0;
    private static final int PAYLOAD = 1;
    private static final int DISCARD = 2;
    private static final int K_RECV = 0;
    private static final int K_WRITE = 1;
    private static final int K_READ_SINK = 2;
    private static final int FRAME_BUDGET = 256;
    /**
     * Stage buffer: at QD32 a read brings in the frames of ~15 4-KiB I/Os (headers, capsules, payloads) with one system
     * call.
     */
    static final int STAGE_BYTES = 64 * 1024;
    /**
     * A payload with at most this many bytes still to come is read through the stage and copied (a 4 KiB copy costs
     * less than the readv it saves); a longer one is read straight into place.
     */
    static final int COPY_MAX = 16 * 1024;
    private static final int H = FrameDescriptor.HEADER_LENGTH;
    /**
     * Bytes read per pass before the engine gets to transmit: keeps cumulative ACKs (and new requests) flowing while a
     * long stream is received, instead of one ACK per drained socket (stop-and-go at deep queues).
     */
    private static final long BYTE_BUDGET = 256 * 1024;

    private final QpEngine e;
    private final SoftQp qp;
    /** Received bytes not handled yet are [{@link #rd}, position); the limit stays at the capacity. */
    private final ByteBuffer stage = ByteBuffer.allocateDirect(STAGE_BYTES);
    private int rd;
    private final ByteBuffer discard = ByteBuffer.allocateDirect(64 * 1024);
    private final ByteBuffer[] vec;
    private final ViewCache views;
    private int vecCount;
    private long left;
    private int phase = HEADER;

    // frame being placed
    private int kind;
    private byte type;
    private long seq;
    private int len;
    private int imm;
    private int slot;

    // responder state
    private long expectedSeq;
    private long rnrWaitSeq = -1;

    Receiver(QpEngine e) {
        this.e = e;
        this.qp = e.qp;
        int n = Math.max(qp.maxRecvSge, qp.maxSendSge) + 1;
        vec = new ByteBuffer[n];
        views = new ViewCache(n);
    }

    /** Reads and handles frames until the socket has nothing more (or a budget is spent); true on progress. */
    boolean read() {
        try {
            return e.inError ? drain() : readFrames();
        } catch (IOException ex) {
            e.onIoError(ex);
            return true;
        }
    }

    private boolean drain() throws IOException {
        boolean progress = stage.position() > rd;
        stage.clear();
        rd = 0;
        while (true) {
            discard.clear();
            int n = e.in.read(discard);
            if (n < 0) {
                e.onEof();
                return true;
            }
            if (n == 0) {
                return progress;
            }
            progress = true;
        }
    }

    private boolean readFrames() throws IOException {
        boolean progress = false;
        long bytes = 0;
        int frames = 0;
        while (!e.inError) {
            long n;
            switch (phase) {
                case HEADER -> {
                    if (stage.position() - rd < H) {
                        if (frames >= FRAME_BUDGET || bytes >= BYTE_BUDGET) {
                            return true;
                        }
                        compactStage();
                        n = e.in.read(stage);
                        if (n < 0) {
                            e.onEof();
                            return true;
                        }
                        bytes += n;
                        if (stage.position() < H) {
                            return progress || n > 0;
                        }
                    }
                    progress = true;
                    frames++;
                    onHeader();
                    if (phase != HEADER) {
                        consumeStaged();
                    }
                }
                case PAYLOAD -> {
                    if (bytes >= BYTE_BUDGET) {
                        return true;
                    }
                    stage.clear(); // empty: consumeStaged took what the stage held of this payload
                    rd = 0;
                    boolean copy = left <= COPY_MAX;
                    n = copy ? e.in.read(stage) : e.in.read(vec, 0, vecCount);
                    if (n < 0) {
                        e.onEof();
                        return true;
                    }
                    if (n == 0) {
                        return progress;
                    }
                    progress = true;
                    bytes += n;
                    if (copy) {
                        consumeStaged();
                    } else {
                        left -= n; // below 0: the bytes past the payload went into the stage
                        if (left <= 0) {
                            phase = HEADER;
                            onPayloadDone();
                        }
                    }
                }
                default -> {
                    if (bytes >= BYTE_BUDGET) {
                        return true;
                    }
                    discard.clear();
                    if (left < discard.capacity()) {
                        discard.limit((int) left);
                    }
                    n = e.in.read(discard);
                    if (n < 0) {
                        e.onEof();
                        return true;
                    }
                    if (n == 0) {
                        return progress;
                    }
                    progress = true;
                    bytes += n;
                    left -= n;
                    if (left == 0) {
                        phase = HEADER;
                    }
                }
            }
        }
        return true;
    }

    /** Moves the unhandled bytes of the stage to its start (a partial header, fewer than 32 bytes). */
    private void compactStage() {
        if (rd > 0) {
            int k = stage.position() - rd;
            if (k > 0) {
                stage.put(0, stage, rd, k);
            }
            stage.position(k);
            rd = 0;
        }
    }

    /**
     * Places (or, in DISCARD, skips) what the stage holds of the payload whose header was just handled; ends the
     * payload when the stage held all of it.
     */
    private void consumeStaged() {
        int k = (int) Math.min(stage.position() - rd, left);
        if (k <= 0) {
            return;
        }
        if (phase == PAYLOAD) {
            int off = rd;
            int rest = k;
            for (int i = 0; i < vecCount - 1 && rest > 0; i++) {
                ByteBuffer d = vec[i];
                int r = Math.min(d.remaining(), rest);
                if (r > 0) {
                    d.put(d.position(), stage, off, r);
                    d.position(d.position() + r);
                    off += r;
                    rest -= r;
                }
            }
        }
        rd += k;
        left -= k;
        if (left == 0) {
            boolean payload = phase == PAYLOAD;
            phase = HEADER;
            if (payload) {
                onPayloadDone();
            }
        }
    }

    private void onHeader() {
        int h = rd;
        byte t = stage.get(h + FrameDescriptor.TYPE_OFFSET);
        byte synd = stage.get(h + FrameDescriptor.SYNDROME_OFFSET);
        int plen = stage.getInt(h + FrameDescriptor.PAYLOAD_LENGTH_OFFSET);
        int wireSeq = stage.getInt(h + FrameDescriptor.SEQ_OFFSET);
        int rkey = stage.getInt(h + FrameDescriptor.RKEY_OFFSET);
        long raddr = stage.getLong(h + FrameDescriptor.REMOTE_ADDR_OFFSET);
        int immData = stage.getInt(h + FrameDescriptor.IMM_OFFSET);
        int rlen = stage.getInt(h + FrameDescriptor.READ_LENGTH_OFFSET);
        rd = h + H;
        if (plen < 0) {
            e.protocolError("payloadLength=" + plen);
            return;
        }
        if (FrameDescriptor.isRequest(t)) {
            onRequest(t, plen, wireSeq, rkey, raddr, immData, rlen);
        } else {
            onResponse(t, synd, plen, wireSeq);
        }
    }

    // ------------------------------------------------------------------ responder

    private void onRequest(byte t, int plen, int wireSeq, int rkey, long raddr, int immData, int rlen) {
        if (rnrWaitSeq >= 0) {
            if (wireSeq != (int) rnrWaitSeq) {
                discard(plen);
                return;
            }
            rnrWaitSeq = -1;
        }
        if (wireSeq != (int) expectedSeq) {
            e.protocolError("request seq=" + wireSeq + ", expected=" + (int) expectedSeq);
            return;
        }
        type = t;
        seq = expectedSeq;
        len = plen;
        imm = immData;
        switch (t) {
            case FrameDescriptor.SEND, FrameDescriptor.SEND_IMM -> {
                int s = qp.recvFor(plen);
                if (s == EmuQp.RECV_NONE) {
                    rnrNak(plen);
                    return;
                }
                if (s < 0) {
                    nak(EmuQp.requesterStatus(s) == WcStatus.REM_OP_ERR ? FrameDescriptor.SYND_REM_OP
                            : FrameDescriptor.SYND_REM_INV_REQ, plen);
                    return;
                }
                int n = 0;
                long rest = plen;
                int base = s * qp.maxRecvSge;
                for (int j = 0; j < qp.rqNumSge[s] && rest > 0; j++) {
                    int l = (int) Math.min(qp.rqSgeLen[base + j], rest);
                    if (l > 0) {
                        vec[n] = views.view(n, qp.rqSgeMr[base + j], qp.rqSgeAddr[base + j], l);
                        n++;
                        rest -= l;
                    }
                }
                kind = K_RECV;
                startPayload(n, plen);
            }
            case FrameDescriptor.WRITE, FrameDescriptor.WRITE_IMM -> {
                if (t == FrameDescriptor.WRITE_IMM && !qp.hasRecv()) {
                    rnrNak(plen);
                    return;
                }
                kind = K_WRITE;
                if (plen == 0) {
                    onPayloadDone();
                    return;
                }
                EmuMr mr = e.remote(rkey, raddr, plen, QpEngine.remoteAccess(true));
                if (mr == null) {
                    nak(FrameDescriptor.SYND_REM_ACCESS, plen);
                    return;
                }
                vec[0] = views.view(0, mr, raddr, plen);
                startPayload(1, plen);
            }
            default -> { // READ_REQ
                if (plen != 0 || rlen < 0) {
                    nak(FrameDescriptor.SYND_REM_INV_REQ, plen);
                    return;
                }
                EmuMr mr = null;
                if (rlen > 0) {
                    mr = e.remote(rkey, raddr, rlen, QpEngine.remoteAccess(false));
                    if (mr == null) {
                        nak(FrameDescriptor.SYND_REM_ACCESS, 0);
                        return;
                    }
                }
                if (!e.tx.enqueue(FrameDescriptor.READ_RESP, (byte) 0, wireSeq, mr, raddr, rlen)) {
                    e.protocolError("READ requests beyond responderResources=" + qp.attr().responderResources);
                    return;
                }
                expectedSeq++;
            }
        }
    }

    private void rnrNak(int plen) {
        e.tx.enqueue(FrameDescriptor.RNR_NAK, (byte) 0, (int) expectedSeq, null, 0, 0);
        rnrWaitSeq = expectedSeq;
        discard(plen);
    }

    private void nak(byte synd, int plen) {
        e.tx.enqueue(FrameDescriptor.NAK, synd, (int) expectedSeq, null, 0, 0);
        e.keepResponsesUntilNak = true;
        e.enterError();
        discard(plen);
    }

    private void discard(int plen) {
        if (plen > 0) {
            left = plen;
            phase = DISCARD;
        }
    }

    private void startPayload(int n, int plen) {
        if (plen == 0) {
            onPayloadDone();
            return;
        }
        vec[n] = stage;
        vecCount = n + 1;
        left = plen;
        phase = PAYLOAD;
    }

    private void onPayloadDone() {
        switch (kind) {
            case K_RECV -> {
                boolean withImm = type == FrameDescriptor.SEND_IMM;
                qp.completeRecv(WcStatus.SUCCESS, WcOpcode.RECV, len, withImm, withImm ? imm : 0);
                expectedSeq++;
                e.tx.acknowledge(seq);
            }
            case K_WRITE -> {
                if (type == FrameDescriptor.WRITE_IMM) {
                    qp.completeRecv(WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, len, true, imm);
                }
                expectedSeq++;
                e.tx.acknowledge(seq);
            }
            default -> { // K_READ_SINK
                e.readDone[slot] = true;
                e.readsOutstanding--;
                e.txStalled = false;
                e.sqAcked = Math.max(e.sqAcked, seq);
                e.advanceCompletions();
            }
        }
    }

    // ------------------------------------------------------------------ requester

    private void onResponse(byte t, byte synd, int plen, int wireSeq) {
        long s = e.sqCompleted + (wireSeq - (int) e.sqCompleted);
        switch (t) {
            case FrameDescriptor.ACK -> {
                if (plen != 0) {
                    e.protocolError("ACK with payloadLength=" + plen);
                    return;
                }
                if (s > e.sqAcked && s < e.sqNext) {
                    e.sqAcked = s;
                    e.advanceCompletions();
                }
            }
            case FrameDescriptor.READ_RESP -> {
                int i = (int) s & qp.sqMask;
                if (s < e.sqCompleted || s >= e.sqNext || qp.sqOpcode[i] != WrOpcode.RDMA_READ.ordinal()
                        || e.readDone[i] || plen != qp.sqTotal[i]) {
                    e.protocolError("unexpected READ response seq=" + wireSeq + ", payloadLength=" + plen);
                    return;
                }
                int n = 0;
                long rest = plen;
                int base = i * qp.maxSendSge;
                for (int j = 0; j < qp.sqNumSge[i] && rest > 0; j++) {
                    int l = (int) Math.min(qp.sqSgeLen[base + j], rest);
                    if (l > 0) {
                        vec[n] = views.view(n, qp.sqSgeMr[base + j], qp.sqSgeAddr[base + j], l);
                        n++;
                        rest -= l;
                    }
                }
                kind = K_READ_SINK;
                slot = i;
                seq = s;
                startPayload(n, plen);
            }
            case FrameDescriptor.NAK -> {
                e.sqAcked = Math.max(e.sqAcked, s - 1);
                e.advanceCompletions();
                WcStatus st = switch (synd) {
                    case FrameDescriptor.SYND_REM_ACCESS -> WcStatus.REM_ACCESS_ERR;
                    case FrameDescriptor.SYND_REM_INV_REQ -> WcStatus.REM_INV_REQ_ERR;
                    default -> WcStatus.REM_OP_ERR;
                };
                if (e.sqCompleted == s) {
                    e.failSend(st);
                } else {
                    e.enterError();
                }
            }
            case FrameDescriptor.RNR_NAK -> {
                e.sqAcked = Math.max(e.sqAcked, s - 1);
                e.advanceCompletions();
                if (!e.inError && s >= e.sqCompleted && s < e.sqNext) {
                    e.onRnrNak(s);
                }
            }
            default -> e.protocolError("unknown frame type=" + t);
        }
    }
}
