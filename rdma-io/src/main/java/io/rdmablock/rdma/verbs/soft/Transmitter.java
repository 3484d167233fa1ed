package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.ProviderConfiguration;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The transmit side of a {@link QpEngine}: builds a batch of frames (queued responses, one cumulative ACK, then
 * posted send WRs) into one gather vector of headers and registered-memory views, and writes it with gathering
 * writes; nothing is copied and nothing allocated once the view cache is warm. Only the thread holding the engine.
 *
 * <p>The response queue holds READ responses, NAKs and RNR NAKs in the order the requests were executed; it has
 * {@code responderResources + 4} entries, enough because the peer keeps at most that many READs outstanding.
 */
final class Transmitter {
    static final int GATHER_MAX = 64;
    static final int BATCH_FRAMES = 32;
    static final long BATCH_BYTES = 2L << 20;

    private final QpEngine e;
    private final SoftQp qp;
    private final ByteBuffer[] gv = new ByteBuffer[GATHER_MAX];
    private int gvStart;
    private int gvCount;
    boolean batchActive;
    private final ViewCache views = new ViewCache(GATHER_MAX);

    // response queue
    private final int respMask;
    private final byte[] respType;
    private final byte[] respSynd;
    private final int[] respSeq;
    private final EmuMr[] respMr;
    private final long[] respAddr;
    private final int[] respLen;
    private final ByteBuffer[] respHeader;
    private long respHead;
    private long respTail;
    private final ByteBuffer ackHeader = ByteBuffer.allocateDirect(FrameDescriptor.HEADER_LENGTH);
    /**
     * How long an ACK with nothing to ride with may be held back (ns; system property
     * {@code rdmablock.soft.ackDelayNs}, default 100 us; 0: at once): it goes with the next batch (a response, a
     * request: the peer's answer usually follows within this), when this much has passed, or before the engine
     * blocks in its selector ({@link #flushHeldAck}) - so the peer wakes once per exchange, not once more for the
     * ACK, as IB RC coalesces ACKs. The requester's send completion waits that long at most.
     */
    static final long ACK_DELAY_NS = ProviderConfiguration.current().softAckDelayNs();
    private long pendingAckSeq = -1;
    private long lastAckSent = -1;
    /** When the held ACK became pending ({@link System#nanoTime}). */
    private long ackSinceNs;
    private boolean forceAck;

    Transmitter(QpEngine e) {
        this.e = e;
        this.qp = e.qp;
        int n = Integer.highestOneBit(qp.attr().responderResources + 4 - 1) << 1;
        respMask = n - 1;
        respType = new byte[n];
        respSynd = new byte[n];
        respSeq = new int[n];
        respMr = new EmuMr[n];
        respAddr = new long[n];
        respLen = new int[n];
        respHeader = new ByteBuffer[n];
        ByteBuffer all = ByteBuffer.allocateDirect(n * FrameDescriptor.HEADER_LENGTH);
        for (int i = 0; i < n; i++) {
            respHeader[i] = all.slice(i * FrameDescriptor.HEADER_LENGTH, FrameDescriptor.HEADER_LENGTH);
        }
    }

    boolean hasResponses() {
        return respHead != respTail || pendingAckSeq > lastAckSent;
    }

    /** Responses to send now: queued ones, or an ACK that may not be held back any longer. */
    boolean hasDueResponses() {
        return respHead != respTail || pendingAckSeq > lastAckSent && ackDue();
    }

    private boolean ackDue() {
        return forceAck || ACK_DELAY_NS <= 0 || System.nanoTime() - ackSinceNs >= ACK_DELAY_NS;
    }

    /** Request {@code seq} of the peer was executed: acknowledge it (now or held back, see ACK_DELAY_NS). */
    void acknowledge(long seq) {
        if (pendingAckSeq <= lastAckSent) {
            ackSinceNs = System.nanoTime();
        }
        pendingAckSeq = seq;
    }

    /** Sends a held-back ACK now (before the engine blocks); true when it wrote something. */
    boolean flushHeldAck() {
        if (pendingAckSeq <= lastAckSent || batchActive) {
            return false;
        }
        forceAck = true;
        try {
            return write();
        } finally {
            forceAck = false;
        }
    }

    /** Queues a response; false when the queue is full (the peer exceeded the negotiated READ depth). */
    boolean enqueue(byte type, byte synd, int seq, EmuMr mr, long addr, int len) {
        if (respTail - respHead > respMask) {
            return false;
        }
        int i = (int) respTail & respMask;
        respType[i] = type;
        respSynd[i] = synd;
        respSeq[i] = seq;
        respMr[i] = mr;
        respAddr[i] = addr;
        respLen[i] = len;
        respTail++;
        return true;
    }

    void onError(boolean keepResponses) {
        pendingAckSeq = lastAckSent;
        if (!keepResponses) {
            while (respHead != respTail) {
                respMr[(int) respHead & respMask] = null;
                respHead++;
            }
        }
    }

    /** Writes as much as the socket takes; true on progress. */
    boolean write() {
        boolean progress = false;
        for (int round = 0; round < 8; round++) {
            if (!batchActive && !build()) {
                break;
            }
            long n;
            try {
                n = e.ch.write(gv, gvStart, gvCount - gvStart);
            } catch (IOException ex) {
                e.onIoError(ex);
                return true;
            }
            if (n > 0) {
                progress = true;
            }
            while (gvStart < gvCount && !gv[gvStart].hasRemaining()) {
                gvStart++;
            }
            if (gvStart < gvCount) {
                e.setWriteInterest(true);
                return progress;
            }
            batchActive = false;
        }
        e.setWriteInterest(false);
        return progress;
    }

    private boolean build() {
        gvCount = 0;
        gvStart = 0;
        long bytes = 0;
        while (respHead != respTail && gvCount + 2 <= GATHER_MAX) {
            int i = (int) respHead & respMask;
            byte type = respType[i];
            int len = type == FrameDescriptor.READ_RESP ? respLen[i] : 0;
            ByteBuffer h = respHeader[i];
            FrameDescriptor.encode(h, type, respSynd[i], len, respSeq[i], 0, 0, 0, 0);
            gv[gvCount++] = h;
            if (len > 0) {
                gv[gvCount] = views.view(gvCount, respMr[i], respAddr[i], len);
                gvCount++;
            }
            respMr[i] = null;
            respHead++;
            bytes += len;
        }
        if (e.inError) {
            batchActive = gvCount > 0;
            return batchActive;
        }
        if (pendingAckSeq > lastAckSent && gvCount < GATHER_MAX
                && (gvCount > 0 || (qp.sqTail != e.sqNext && !e.paused) || ackDue())) {
            FrameDescriptor.encode(ackHeader, FrameDescriptor.ACK, (byte) 0, 0, (int) pendingAckSeq, 0, 0, 0, 0);
            gv[gvCount++] = ackHeader;
            lastAckSent = pendingAckSeq;
        }
        long tail = qp.sqTail;
        if (e.paused) {
            if (System.nanoTime() < e.txPausedUntilNs) {
                tail = e.sqNext;
            } else {
                e.paused = false;
            }
        }
        int frames = 0;
        e.txStalled = false;
        while (e.sqNext < tail && frames < BATCH_FRAMES && bytes < BATCH_BYTES) {
            int i = (int) e.sqNext & qp.sqMask;
            if (qp.sqPostStatus[i] != 0) {
                e.advanceCompletions();
                break;
            }
            WrOpcode op = SoftQp.WR_OPCODES[qp.sqOpcode[i]];
            int flags = qp.sqFlags[i];
            boolean read = op == WrOpcode.RDMA_READ;
            if ((read && e.readsOutstanding >= e.readDepth)
                    || ((flags & SendWr.FENCE) != 0 && e.readsOutstanding > 0)) {
                e.txStalled = true;
                break;
            }
            boolean inline = qp.sqInline[i];
            int n = qp.sqNumSge[i];
            int need = 1 + (read ? 0 : inline ? 1 : n);
            if (gvCount + need > GATHER_MAX) {
                break;
            }
            int total = qp.sqTotal[i];
            byte type = switch (op) {
                case SEND -> FrameDescriptor.SEND;
                case SEND_WITH_IMM -> FrameDescriptor.SEND_IMM;
                case RDMA_WRITE -> FrameDescriptor.WRITE;
                case RDMA_WRITE_WITH_IMM -> FrameDescriptor.WRITE_IMM;
                case RDMA_READ -> FrameDescriptor.READ_REQ;
                case SEND_WITH_INV -> throw new IllegalStateException("SEND_WITH_INV is refused at post");
            };
            int plen = read ? 0 : total;
            ByteBuffer h = qp.sqHeader[i];
            FrameDescriptor.encode(h, type, (byte) 0, plen, (int) e.sqNext, qp.sqRkey[i], qp.sqRemoteAddr[i],
                    qp.sqImm[i], read ? total : 0);
            gv[gvCount++] = h;
            if (plen > 0) {
                if (inline) {
                    ByteBuffer v = qp.sqInlineView[i];
                    v.clear();
                    v.limit(total);
                    gv[gvCount++] = v;
                } else {
                    int base = i * qp.maxSendSge;
                    for (int j = 0; j < n; j++) {
                        int len = qp.sqSgeLen[base + j];
                        if (len > 0) {
                            gv[gvCount] = views.view(gvCount, qp.sqSgeMr[base + j], qp.sqSgeAddr[base + j], len);
                            gvCount++;
                        }
                    }
                }
            }
            if (read) {
                e.readDone[i] = false;
                e.readsOutstanding++;
            }
            e.sqNext++;
            frames++;
            bytes += plen;
        }
        batchActive = gvCount > 0;
        return batchActive;
    }
}
