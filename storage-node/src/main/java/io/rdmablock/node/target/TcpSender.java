package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.tcp.CapsulePdu;
import io.rdmablock.rdma.fabric.tcp.DataPdu;
import io.rdmablock.rdma.fabric.tcp.PduDigest;
import io.rdmablock.rdma.fabric.tcp.PduHeader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32C;

/**
 * The transmit side of one {@link TcpQueue}: a FIFO of what is to be sent (R2Ts, responses, and the queue's own
 * ICResp) and the PDU being written, with gathering writes on the non-blocking socket straight from the request's
 * buffers (header, data, digest: no copy). A response of a successful controller-to-host command is C2HData PDUs of
 * at most {@link #C2H_PDU_BYTES} (the last with LAST_PDU), then the CapsuleResp (no SUCCESS flag: the CapsuleResp is
 * always sent, as Linux nvmet does by default); once the CapsuleResp is written the request gets
 * {@link Request.Event#SENT}. A full socket leaves the rest for the next round. Poller thread only; nothing allocated
 * per PDU.
 */
final class TcpSender {
    /** Most data bytes in one C2HData PDU (a larger read is several PDUs). */
    static final int C2H_PDU_BYTES = 64 * 1024;
    /** PDUs written per call at most (the rest next round): bounds one queue's share of a polling round. */
    static final int MAX_PDUS_PER_FLUSH = 64;
    private static final java.lang.foreign.ValueLayout.OfInt LE_INT =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int KIND_CONTROL = 1;
    private static final int KIND_R2T = 2;
    private static final int KIND_RESPONSE = 3;
    private static final int STAGE_DATA = 1;
    private static final int STAGE_RESP = 2;

    private final TcpQueue q;
    private final SocketChannel channel;
    private final CRC32C crc = new CRC32C();
    private final TcpSlot[] ringSlots;
    private final int[] ringKinds;
    private int head;
    private int count;
    /** The item being sent (null: none), its kind and stage, and the data offset of a C2HData stage. */
    private TcpSlot current;
    private int currentKind;
    private int stage;
    private int dataOffset;
    private int chunk;
    private final ByteBuffer[] gather = new ByteBuffer[3];
    private int gatherCount;
    private final ByteBuffer dataDigest = ByteBuffer.allocateDirect(PduDigest.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    /** The control PDU (ICResp) to send, set by {@link #control}. */
    private ByteBuffer control;

    /** @param capacity items queued at most: two per request (an R2T and a response) and the control PDU */
    TcpSender(TcpQueue q, SocketChannel channel, int capacity) {
        this.q = q;
        this.channel = channel;
        this.ringSlots = new TcpSlot[capacity];
        this.ringKinds = new int[capacity];
    }

    /** True when nothing is queued or being written. */
    boolean idle() {
        return current == null && count == 0;
    }

    /** True while a PDU is partly written (a termination PDU must not be put in the middle of it). */
    boolean midPdu() {
        if (current == null) {
            return false;
        }
        for (int i = 0; i < gatherCount; i++) {
            if (gather[i].position() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Queues a control PDU (ICResp), {@code pdu} positioned at its start, limited to its end. */
    void control(ByteBuffer pdu) {
        control = pdu;
        push(null, KIND_CONTROL);
    }

    /** Queues the R2T for {@code s}'s whole transfer ({@link Request#transferBytes}). */
    void r2t(TcpSlot s) {
        push(s, KIND_R2T);
    }

    /** Queues {@code s}'s data (if any) and response. */
    void response(TcpSlot s) {
        push(s, KIND_RESPONSE);
    }

    private void push(TcpSlot s, int kind) {
        if (count == ringSlots.length) {
            throw new IllegalStateException("send queue full: capacity=" + ringSlots.length);
        }
        int tail = (head + count) % ringSlots.length;
        ringSlots[tail] = s;
        ringKinds[tail] = kind;
        count++;
    }

    /**
     * Writes queued PDUs until the socket takes no more, {@link #MAX_PDUS_PER_FLUSH} are written or nothing is left.
     *
     * @return PDUs written completely
     * @throws IOException when the socket fails (the queue is then torn down)
     */
    int flush(long nowNs) throws IOException {
        int pdus = 0;
        while (pdus < MAX_PDUS_PER_FLUSH && !q.isFatal()) {
            if (current == null && !next()) {
                return pdus;
            }
            channel.write(gather, 0, gatherCount);
            if (gather[gatherCount - 1].hasRemaining()) {
                return pdus;
            }
            pdus++;
            pduWritten(nowNs);
        }
        return pdus;
    }

    private boolean next() {
        if (count == 0) {
            return false;
        }
        current = ringSlots[head];
        currentKind = ringKinds[head];
        ringSlots[head] = null;
        head = (head + 1) % ringSlots.length;
        count--;
        switch (currentKind) {
            case KIND_CONTROL -> {
                gather[0] = control;
                gatherCount = 1;
            }
            case KIND_R2T -> {
                Request r = current.request;
                int plen = DataPdu.r2t(current.txHeader, q.headerDigest, r.cid, r.index, 0, r.transferBytes);
                headerOnly(current.txHeaderBuffer, current.txHeader, DataPdu.HLEN, plen);
            }
            default -> {
                Request r = current.request;
                if (r.xfer == Request.XFER_CONTROLLER_TO_HOST && r.status == 0 && r.transferBytes > 0) {
                    dataOffset = 0;
                    c2hData();
                } else {
                    capsuleResp();
                }
            }
        }
        return true;
    }

    private void pduWritten(long nowNs) {
        if (currentKind == KIND_RESPONSE) {
            if (stage == STAGE_DATA) {
                dataOffset += chunk;
                if (dataOffset < current.request.transferBytes) {
                    c2hData();
                } else {
                    capsuleResp();
                }
                return;
            }
            Request r = current.request;
            current = null;
            r.event(Request.Event.SENT);
            q.advance(r, nowNs);
            return;
        }
        if (currentKind == KIND_CONTROL) {
            control = null;
        }
        current = null;
    }

    private void c2hData() {
        stage = STAGE_DATA;
        Request r = current.request;
        chunk = Math.min(C2H_PDU_BYTES, r.transferBytes - dataOffset);
        boolean last = dataOffset + chunk == r.transferBytes;
        DataPdu.dataHeader(current.txHeader, PduHeader.TYPE_C2H_DATA, q.headerDigest, q.dataDigest,
                last ? PduHeader.FLAG_LAST_PDU : 0, r.cid, 0, dataOffset, chunk);
        int hlen = DataPdu.HLEN + (q.headerDigest ? PduDigest.LENGTH : 0);
        headerOnly(current.txHeaderBuffer, current.txHeader, DataPdu.HLEN, hlen);
        ByteBuffer data = current.data;
        data.limit(dataOffset + chunk).position(dataOffset);
        gather[1] = data;
        gatherCount = 2;
        if (q.dataDigest) {
            dataDigest.putInt(0, PduDigest.crc32c(crc, data));
            dataDigest.clear();
            gather[2] = dataDigest;
            gatherCount = 3;
        }
    }

    private void capsuleResp() {
        stage = STAGE_RESP;
        int plen = CapsulePdu.respHeader(current.resp, q.headerDigest);
        headerOnly(current.respBuffer, current.resp, CapsulePdu.RESP_HLEN, plen);
    }

    /** Sets {@code buf} to the header's {@code length} bytes (digest included, written here when on) as gather[0]. */
    private void headerOnly(ByteBuffer buf, java.lang.foreign.MemorySegment seg, int hlen, int length) {
        if (q.headerDigest) {
            buf.limit(hlen).position(0);
            seg.set(LE_INT, hlen, PduDigest.crc32c(crc, buf));
        }
        buf.limit(length).position(0);
        gather[0] = buf;
        gatherCount = 1;
    }
}
