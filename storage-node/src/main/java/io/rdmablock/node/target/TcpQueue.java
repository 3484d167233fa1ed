package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.tcp.CapsulePdu;
import io.rdmablock.rdma.fabric.tcp.DataPdu;
import io.rdmablock.rdma.fabric.tcp.IcPdu;
import io.rdmablock.rdma.fabric.tcp.PduDigest;
import io.rdmablock.rdma.fabric.tcp.PduFormatException;
import io.rdmablock.rdma.fabric.tcp.PduHeader;
import io.rdmablock.rdma.fabric.tcp.TermPdu;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32C;

/**
 * One NVMe/TCP queue on the target (NVMe/TCP Transport Specification 1.0; Linux {@code drivers/nvme/target/tcp.c} as
 * the reference): a non-blocking {@link SocketChannel} served by a {@link Poller}, the transport of a
 * {@link FabricQueue}. The connection starts with ICReq/ICResp (digests on when the host asks, MAXH2CDATA
 * {@link #maxH2cData}, CPDA 0); the queue id and size are those of the Fabrics Connect capsule ({@link #bind}). A
 * CapsuleCmd is read straight into a free request's header buffer ({@link TcpSlot}) and its in-capsule data into the
 * request's data buffer; host data of a Transport SGL Data Block is asked for with one R2T for the whole transfer
 * and read from the H2CData PDUs (any split up to MAXH2CDATA, in order) into the data buffer; data goes back as
 * C2HData PDUs then the CapsuleResp ({@link TcpSender}). A PDU that breaks the specification ends the connection
 * with a C2HTermReq (its FES; a data digest error FES 03h as SPDK does) - only this connection.
 *
 * <p>Before its Connect the queue holds one request with an {@link #connectBufferBytes} buffer (a pending queue is
 * small, as an RDMA one); the {@code entries} requests are made at Connect ({@link QueueAdmission#grow}). Buffers are
 * native memory of the queue's own arena; on an I/O queue of a node with an RDMA device ({@link TcpListener} finds
 * it) the data buffers are registered with that device's protection domain ({@link Target#protectionDomain}, as an
 * RDMA queue's) and the volume I/O gets that device, so a replicated primary forwards a TCP host's write from where
 * it landed, as an RDMA host's (no copy). Without a device ({@link #device} null) a volume whose I/O needs one (a
 * replicated primary) refuses the Connect. Poller thread only, but {@link #disconnect}.
 */
final class TcpQueue extends FabricQueue {
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** In-capsule data the Linux host sends at most on an admin queue: NVME_TCP_ADMIN_CCSZ (8 KiB) - 64. */
    static final int ADMIN_IN_CAPSULE_BYTES = 8192 - SqeDescriptor.LENGTH;
    /** Transfer tag (and index) of the Connect request, above any queue's entries. */
    static final int CONNECT_INDEX = 0xFFFF;
    private static final int RX_IDLE = 0;
    private static final int RX_COMMON = 1;
    private static final int RX_HEADER = 2;
    private static final int RX_DATA = 3;
    private static final int RX_DATA_DIGEST = 4;

    private final SocketChannel channel;
    private final Arena arena = Arena.ofShared();
    private final CRC32C crc = new CRC32C();
    private final TcpSender sender;
    /** MAXH2CDATA of the ICResp: the largest transfer, so one R2T (and a host that never splits) always fits. */
    final int maxH2cData;
    boolean headerDigest;
    boolean dataDigest;
    private boolean icDone;
    private final TcpSlot connectSlot;
    private final MemorySegment connectData;
    private TcpSlot[] slots;
    private MemorySegment dataRegion;
    private int[] free;
    private int freeCount;
    private boolean connectFree = true;
    /** The queue's own header buffer, for PDUs read while no request is free (never a CapsuleCmd). */
    private final MemorySegment ownHeader;
    private final ByteBuffer ownHeaderBuffer;
    private final ByteBuffer rxDigest = ByteBuffer.allocateDirect(PduDigest.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment icResp;
    private int rxState = RX_IDLE;
    private MemorySegment rxSeg;
    private ByteBuffer rxBuf;
    private TcpSlot rxHeaderSlot;
    private int rxType;
    private int rxFlags;
    private TcpSlot rxDataSlot;
    private int rxDataStart;
    private int rxDataLength;
    private Selector selector;
    /** This node's RDMA device the I/O queue's data buffers are registered on ({@link #dataMr}), or null. */
    private final DeviceContext rdmaDevice;
    private MemoryRegion dataMr;

    /** @param rdmaDevice the node's RDMA device to register the data buffers on; null: unregistered */
    TcpQueue(Target target, SocketChannel channel, DeviceContext rdmaDevice) throws IOException {
        super(target, -1, 1, String.valueOf(channel.getRemoteAddress()), channel.getRemoteAddress()
                instanceof InetSocketAddress a ? a.getAddress() : null, connectBufferBytes(target.options()));
        this.channel = channel;
        this.rdmaDevice = rdmaDevice;
        TargetOptions o = target.options();
        this.maxH2cData = Math.max(IcPdu.MIN_MAXH2CDATA, o.mdtsBytes());
        int capacity = 2 * (Math.max(o.maxQueueEntries(), o.maxAdminEntries()) + 2);
        this.sender = new TcpSender(this, channel, capacity);
        MemorySegment meta = arena.allocate(TcpSlot.META_BYTES + 2L * PduHeader.MAX_HLEN + 64, 64);
        connectData = arena.allocate(dataBytesPerRequest, 4096);
        connectSlot = new TcpSlot(CONNECT_INDEX, meta.asSlice(0, TcpSlot.META_BYTES), connectData, null);
        ownHeader = meta.asSlice(TcpSlot.META_BYTES, PduHeader.MAX_HLEN + PduDigest.LENGTH);
        ownHeaderBuffer = ownHeader.asByteBuffer();
        icResp = meta.asSlice(TcpSlot.META_BYTES + PduHeader.MAX_HLEN + 8, IcPdu.LENGTH);
        metrics.queueUp();
    }

    /** The Connect request's buffer: the admin queue's in-capsule size (8 KiB) or the I/O queues', if larger. */
    static int connectBufferBytes(TargetOptions o) {
        return Math.max(ADMIN_IN_CAPSULE_BYTES + SqeDescriptor.LENGTH, o.inCapsuleDataBytes());
    }

    /** Bytes of each request's data buffer on queue {@code qid}: the admin in-capsule size or Identify; MDTS. */
    static int dataBytes(TargetOptions o, int qid) {
        return qid == 0 ? Math.max(ADMIN_IN_CAPSULE_BYTES + SqeDescriptor.LENGTH, Opcodes.IDENTIFY_DATA_LENGTH)
                : Math.max(o.mdtsBytes(), o.inCapsuleDataBytes());
    }

    // ---- receive ----

    @Override
    int pollTransport(long nowNs) {
        int work = 0;
        try {
            work += sender.flush(nowNs);
            for (int pdus = 0; pdus < BATCH && !isFatal(); pdus++) {
                int step = receiveStep(nowNs);
                if (step < 0) {
                    break;
                }
                work += step;
            }
            work += sender.flush(nowNs);
        } catch (PduFormatException e) {
            terminate(e);
        } catch (IOException e) {
            fail("disconnect", "socket: " + e);
        }
        return work;
    }

    @Override
    int afterRound(long nowNs) {
        if (sender.idle() || isFatal()) {
            return 0;
        }
        try {
            return sender.flush(nowNs);
        } catch (IOException e) {
            fail("disconnect", "socket: " + e);
            return 0;
        }
    }

    /**
     * Reads towards the next PDU boundary: 1 when a PDU was handled, 0 when a part of one was read, -1 when the
     * socket has nothing more now (or this round's command budget is spent).
     */
    private int receiveStep(long nowNs) throws IOException {
        switch (rxState) {
            case RX_IDLE -> {
                if (startsLeft <= 0) {
                    return -1;
                }
                rxHeaderSlot = reserveFree(); // its header buffer takes the PDU; given back unless a CapsuleCmd
                rxSeg = rxHeaderSlot == null ? ownHeader : rxHeaderSlot.rxHeader;
                rxBuf = rxHeaderSlot == null ? ownHeaderBuffer : rxHeaderSlot.rxHeaderBuffer;
                rxBuf.limit(PduHeader.LENGTH).position(0);
                rxState = RX_COMMON;
                return 0;
            }
            case RX_COMMON -> {
                if (!fill(rxBuf)) {
                    return -1;
                }
                int n = PduHeader.headerBytes(rxSeg, true, headerDigest);
                rxType = PduHeader.type(rxSeg);
                rxFlags = PduHeader.flags(rxSeg);
                if (rxType == PduHeader.TYPE_CAPSULE_CMD && rxHeaderSlot == null) {
                    // none was free when this PDU began (e.g. the Connect still ran): one may be now
                    rxHeaderSlot = reserveFree();
                    if (rxHeaderSlot == null) {
                        throw new PduFormatException(TermPdu.FES_PDU_SEQUENCE, 0, "CapsuleCmd while all " + entries
                                + " requests of the queue are busy (more commands than the SQ size)");
                    }
                    MemorySegment.copy(ownHeader, 0, rxHeaderSlot.rxHeader, 0, PduHeader.LENGTH);
                    rxSeg = rxHeaderSlot.rxHeader;
                    rxBuf = rxHeaderSlot.rxHeaderBuffer;
                    rxBuf.limit(n).position(PduHeader.LENGTH);
                    rxState = RX_HEADER;
                    return 0;
                }
                rxBuf.limit(n);
                rxState = RX_HEADER;
                return 0;
            }
            case RX_HEADER -> {
                if (!fill(rxBuf)) {
                    return -1;
                }
                if ((rxFlags & PduHeader.FLAG_HDGST) != 0) {
                    checkHeaderDigest();
                }
                return onHeader(nowNs);
            }
            case RX_DATA -> {
                if (!fill(rxDataSlot.data)) {
                    return -1;
                }
                if ((rxFlags & PduHeader.FLAG_DDGST) != 0) {
                    rxDigest.clear();
                    rxState = RX_DATA_DIGEST;
                    return 0;
                }
                return onData(nowNs);
            }
            default -> {
                if (!fill(rxDigest)) {
                    return -1;
                }
                ByteBuffer d = rxDataSlot.data;
                d.limit(rxDataStart + rxDataLength).position(rxDataStart);
                PduDigest.checkDataDigest(crc, d, rxDigest.getInt(0));
                return onData(nowNs);
            }
        }
    }

    /** Reads into {@code b}; true once it is full. */
    private boolean fill(ByteBuffer b) throws IOException {
        if (!b.hasRemaining()) {
            return true;
        }
        if (channel.read(b) < 0) {
            throw new IOException("connection closed by the peer");
        }
        return !b.hasRemaining();
    }

    private void checkHeaderDigest() {
        int hlen = PduHeader.hlen(rxSeg);
        int end = rxBuf.limit();
        rxBuf.limit(hlen).position(0);
        int expected = PduDigest.crc32c(crc, rxBuf);
        rxBuf.limit(end).position(end);
        int received = rxSeg.get(LE_INT, hlen);
        if (expected != received) {
            throw new PduFormatException(TermPdu.FES_HEADER_DIGEST, 0, "header digest error: type=" + rxType
                    + ", received=0x" + Integer.toHexString(received) + ", expected=0x" + Integer.toHexString(expected));
        }
    }

    private int onHeader(long nowNs) {
        if (rxType != PduHeader.TYPE_CAPSULE_CMD && rxHeaderSlot != null) {
            unreserve(rxHeaderSlot); // the header is parsed below; the request stays free
            rxHeaderSlot = null;
        }
        if (rxType == PduHeader.TYPE_IC_REQ) {
            return onIcReq();
        }
        if (!icDone) {
            throw new PduFormatException(TermPdu.FES_PDU_SEQUENCE, 0, "PDU type 0x" + Integer.toHexString(rxType)
                    + " before ICReq");
        }
        switch (rxType) {
            case PduHeader.TYPE_CAPSULE_CMD -> {
                int len = PduHeader.dataBytes(rxSeg, dataDigest, inCapsuleDataBytes());
                TcpSlot s = rxHeaderSlot;
                rxHeaderSlot = null; // the request's now
                return len == 0 ? startCapsule(s, 0, nowNs) : expectData(s, 0, len);
            }
            case PduHeader.TYPE_H2C_DATA -> {
                int len = PduHeader.dataBytes(rxSeg, dataDigest, maxH2cData);
                TcpSlot s = slotOfTag(DataPdu.ttag(rxSeg));
                Request r = s.request;
                if (!s.r2tActive || r.state != Request.State.TRANSFERRING_HOST_TO_CONTROLLER) {
                    throw new PduFormatException(TermPdu.FES_PDU_SEQUENCE, 0, "H2CData without an R2T: ttag="
                            + DataPdu.ttag(rxSeg));
                }
                if (DataPdu.cccid(rxSeg) != r.cid) {
                    throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, DataPdu.CCCID_OFFSET, "invalid "
                            + "H2CData CCCID: cccid=" + DataPdu.cccid(rxSeg) + ", expected=" + r.cid);
                }
                int datao = DataPdu.dataOffset(rxSeg);
                if (datao != s.h2cNext || (long) datao + len > r.transferBytes) {
                    throw new PduFormatException(TermPdu.FES_DATA_OUT_OF_RANGE, DataPdu.OFFSET_OFFSET, "H2CData out "
                            + "of range: datao=" + Integer.toUnsignedString(datao) + ", datal=" + len + ", expected datao="
                            + s.h2cNext + ", transferBytes=" + r.transferBytes);
                }
                return expectData(s, datao, len);
            }
            default -> { // H2CTermReq: the host ends the connection
                fail("disconnect", "H2CTermReq from the host: fes=" + TermPdu.fes(rxSeg) + ", fei="
                        + TermPdu.fei(rxSeg));
                return 1;
            }
        }
    }

    private int onIcReq() {
        if (icDone) {
            throw new PduFormatException(TermPdu.FES_PDU_SEQUENCE, 0, "second ICReq");
        }
        PduHeader.dataBytes(rxSeg, false, 0);
        IcPdu.checkIcReq(rxSeg);
        if (IcPdu.pda(rxSeg) != 0) {
            throw new PduFormatException(TermPdu.FES_UNSUPPORTED_PARAMETER, IcPdu.PDA_OFFSET, "unsupported ICReq "
                    + "HPDA: hpda=" + IcPdu.pda(rxSeg) + ", supported=0");
        }
        int digest = IcPdu.digest(rxSeg);
        headerDigest = (digest & IcPdu.DIGEST_HEADER) != 0;
        dataDigest = (digest & IcPdu.DIGEST_DATA) != 0;
        IcPdu.icResp(icResp, 0, digest, maxH2cData);
        sender.control(icResp.asByteBuffer());
        icDone = true;
        rxState = RX_IDLE;
        return 1;
    }

    private int expectData(TcpSlot s, int offset, int length) {
        rxDataSlot = s;
        rxDataStart = offset;
        rxDataLength = length;
        s.data.limit(offset + length).position(offset);
        rxState = RX_DATA;
        return 0;
    }

    private int onData(long nowNs) {
        rxState = RX_IDLE;
        TcpSlot s = rxDataSlot;
        rxDataSlot = null;
        if (rxType == PduHeader.TYPE_CAPSULE_CMD) {
            return startCapsule(s, rxDataLength, nowNs);
        }
        s.h2cNext += rxDataLength;
        if (s.h2cNext == s.request.transferBytes) {
            s.r2tActive = false;
            s.request.event(Request.Event.DATA_RECEIVED);
            advance(s.request, nowNs);
        }
        return 1;
    }

    private int startCapsule(TcpSlot s, int inCapsuleBytes, long nowNs) {
        rxState = RX_IDLE;
        Request r = s.request;
        r.reset(-1, s.sqe, SqeDescriptor.LENGTH + inCapsuleBytes, nowNs);
        if (controller == null && !grown() && SqeDescriptor.opcode(s.sqe) == Opcodes.FABRICS
                && SqeDescriptor.fctype(s.sqe) == Opcodes.FCTYPE_CONNECT) {
            int qid = ConnectDataDescriptor.qid(s.sqe);
            if (qid <= options.maxIoQueues()) { // else Connect answers the qid mismatch (-1)
                int max = options.maxEntries(qid);
                bind(qid, Math.max(2, Math.min(max, ConnectDataDescriptor.sqsize(s.sqe) + 1)), dataBytes(options, qid));
            }
        }
        startCommand(r, nowNs);
        return 1;
    }

    /** Sends a C2HTermReq for {@code e} (unless a PDU is half written) and ends the queue. */
    private void terminate(PduFormatException e) {
        int fes = e.isDataDigestError() ? TermPdu.FES_HEADER_DIGEST : e.fes;
        if (!sender.midPdu()) {
            try {
                MemorySegment term = arena.allocate(TermPdu.HLEN + PduHeader.MAX_TERM_DATA);
                int read = rxBuf == null ? 0 : Math.min(rxBuf.position(), PduHeader.MAX_TERM_DATA);
                int plen = TermPdu.write(term, PduHeader.TYPE_C2H_TERM_REQ, fes, e.fei,
                        read == 0 ? null : rxSeg.asSlice(0, read));
                ByteBuffer b = term.asSlice(0, plen).asByteBuffer();
                for (int i = 0; i < 100 && b.hasRemaining(); i++) { // error path: bounded
                    channel.write(b);
                }
                discardInput();
                channel.shutdownOutput();
            } catch (IOException | RuntimeException ex) {
                LOG.debug("C2HTermReq not sent: {}", ex.toString());
            }
        }
        fail("malformed", "NVMe/TCP PDU error (fes=" + fes + ", fei=" + e.fei + "): " + e.getMessage());
    }

    /** Reads what the peer sent and is not read yet (bounded), so that closing does not reset the connection. */
    private void discardInput() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(16 * 1024);
        for (int i = 0; i < 64; i++) {
            b.clear();
            if (channel.read(b) <= 0) {
                return;
            }
        }
    }

    @Override
    int awaitAndPoll(long timeoutNs, long nowNs) {
        startsLeft = START_BATCH;
        try {
            if (selector == null) {
                selector = Selector.open();
                channel.register(selector, SelectionKey.OP_READ);
            }
            SelectionKey key = channel.keyFor(selector);
            key.interestOps(sender.idle() ? SelectionKey.OP_READ : SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            selector.select(Math.max(1, timeoutNs / 1_000_000));
            selector.selectedKeys().clear();
        } catch (IOException | RuntimeException e) {
            fail("transport", "select failed: " + e);
            return 0;
        }
        return pollTransport(nowNs);
    }

    @Override
    void pollConnectionEvents() {
        // the end of the connection is seen by a read (-1) or a write (exception)
    }

    // ---- requests ----

    /** Takes a free request off the free list (the Connect request while not grown), or null when none is free. */
    private TcpSlot reserveFree() {
        if (freeCount > 0) {
            return slots[free[--freeCount]];
        }
        if (connectFree && !grown()) {
            connectFree = false;
            return connectSlot;
        }
        return null;
    }

    /** Gives a request {@link #reserveFree} took back (the PDU it read was not a CapsuleCmd). */
    private void unreserve(TcpSlot s) {
        if (s == connectSlot) {
            connectFree = !grown();
        } else {
            free[freeCount++] = s.request.index;
        }
    }

    private TcpSlot slotOfTag(int ttag) {
        if (ttag == CONNECT_INDEX) {
            return connectSlot;
        }
        if (slots == null || ttag >= slots.length) {
            throw new PduFormatException(TermPdu.FES_INVALID_PDU_HEADER, DataPdu.TTAG_OFFSET, "invalid H2CData TTAG: "
                    + "ttag=" + ttag + ", max=" + (slots == null ? 0 : slots.length - 1));
        }
        return slots[ttag];
    }

    private TcpSlot slot(Request r) {
        return r.index == CONNECT_INDEX ? connectSlot : slots[r.index];
    }

    @Override
    void requestFreed(Request r, long nowNs) {
        if (r.index == CONNECT_INDEX) {
            connectFree = !grown(); // retires once the queue has its full buffers
        } else {
            free[freeCount++] = r.index;
        }
    }

    @Override
    void transferFromHost(Request r) {
        TcpSlot s = slot(r);
        s.h2cNext = 0;
        s.r2tActive = true;
        sender.r2t(s);
    }

    @Override
    void sendResponse(Request r) {
        sender.response(slot(r));
    }

    @Override
    MemorySegment sgl(Request r) {
        return slot(r).sgl;
    }

    @Override
    boolean keyedSgl() {
        return false;
    }

    @Override
    int inCapsuleDataBytes() {
        if (!grown()) {
            return (int) connectData.byteSize();
        }
        return qid == 0 ? ADMIN_IN_CAPSULE_BYTES : Math.min(options.inCapsuleDataBytes(), dataBytesPerRequest);
    }

    @Override
    MemorySegment inCapsuleData(Request r, long offset, int lengthBytes) {
        return offset == 0 ? r.dataSlice(lengthBytes) : r.dataBuffer.asSlice(offset, lengthBytes);
    }

    @Override
    long growBytes() {
        return (long) entries * dataBytesPerRequest + (long) entries * TcpSlot.META_BYTES;
    }

    @Override
    boolean grown() {
        return slots != null;
    }

    @Override
    void growBuffers() {
        MemorySegment data = arena.allocate((long) entries * dataBytesPerRequest, 4096);
        MemorySegment meta = arena.allocate((long) entries * TcpSlot.META_BYTES, 64);
        // the secondaries RDMA READ a forwarded write's payload from here: as an RDMA queue's data region
        MemoryRegion mr = rdmaDevice == null || qid == 0 ? null : target.protectionDomain(rdmaDevice)
                .registerMemory(data, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        TcpSlot[] s = new TcpSlot[entries];
        int[] f = new int[entries];
        for (int i = 0; i < entries; i++) {
            s[i] = new TcpSlot(i, meta.asSlice((long) i * TcpSlot.META_BYTES, TcpSlot.META_BYTES),
                    data.asSlice((long) i * dataBytesPerRequest, dataBytesPerRequest), mr);
            f[entries - 1 - i] = i;
        }
        if (mr != null) {
            target.registeredBytesCounter().addAndGet(data.byteSize());
        }
        dataMr = mr;
        dataRegion = data;
        free = f;
        freeCount = entries;
        slots = s;
    }

    @Override
    void postRecvs() {
        // a TCP queue reads capsules as they come
    }

    @Override
    DeviceContext device() {
        return dataMr == null ? null : rdmaDevice;
    }

    @Override
    ProtectionDomain protectionDomain() {
        return dataMr == null ? null : target.protectionDomain(rdmaDevice);
    }

    @Override
    MemorySegment dataRegion() {
        return dataRegion;
    }

    @Override
    MemorySegment recvRegion() {
        return connectData;
    }

    @Override
    InetSocketAddress localAddress() {
        try {
            return channel.getLocalAddress() instanceof InetSocketAddress a ? a : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    void disconnect() {
        TargetQueueMemory.closeQuietly(channel);
    }

    @Override
    void releaseTransport() {
        TargetQueueMemory.closeQuietly(channel);
        if (selector != null) {
            TargetQueueMemory.closeQuietly(selector);
        }
        if (dataMr != null) {
            TargetQueueMemory.closeQuietly(dataMr);
            target.registeredBytesCounter().addAndGet(-dataRegion.byteSize());
        }
        TargetQueueMemory.closeQuietly(arena);
    }

    @Override
    int trtype() {
        return DiscoveryLogDescriptor.TRTYPE_TCP;
    }
}
