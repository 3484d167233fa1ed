package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.tcp.CapsulePdu;
import io.rdmablock.rdma.fabric.tcp.DataPdu;
import io.rdmablock.rdma.fabric.tcp.IcPdu;
import io.rdmablock.rdma.fabric.tcp.PduDigest;
import io.rdmablock.rdma.fabric.tcp.PduHeader;
import io.rdmablock.rdma.fabric.tcp.TermPdu;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32C;

/**
 * A minimal NVMe/TCP host for tests: one blocking socket, one command at a time, built on the rdma-io codec. ICReq
 * with the digests asked for, Fabrics Connect (in-capsule data), Identify, WRITE with in-capsule data or by R2T
 * (H2CData PDUs of at most {@code h2cChunk} bytes), READ (any number of C2HData PDUs), and raw bytes for bad-input
 * tests. Every read is bounded by the socket timeout.
 */
final class TcpTestHost implements AutoCloseable {
    static final int TIMEOUT_MS = 10_000;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final SocketChannel ch;
    final Arena arena = Arena.ofConfined();
    final CRC32C crc = new CRC32C();
    boolean hdgst;
    boolean ddgst;
    int maxH2cData;
    int qid;
    int cid;
    /** The last response's CQE (copied), the last C2HTermReq's FES (or -1). */
    final MemorySegment cqe = arena.allocate(CqeDescriptor.LENGTH);
    int termFes = -1;

    TcpTestHost(InetSocketAddress target) throws IOException {
        ch = SocketChannel.open(target);
        ch.socket().setSoTimeout(TIMEOUT_MS);
        ch.socket().setTcpNoDelay(true);
    }

    /** ICReq with the digests asked for; checks and reads the ICResp. */
    void icReq(boolean headerDigest, boolean dataDigest) throws IOException {
        MemorySegment p = arena.allocate(IcPdu.LENGTH);
        IcPdu.icReq(p, 0, (headerDigest ? IcPdu.DIGEST_HEADER : 0) | (dataDigest ? IcPdu.DIGEST_DATA : 0), 0);
        send(p, IcPdu.LENGTH);
        MemorySegment r = arena.allocate(IcPdu.LENGTH);
        readFully(r, 0, PduHeader.LENGTH);
        PduHeader.headerBytes(r, false, false);
        readFully(r, PduHeader.LENGTH, IcPdu.LENGTH - PduHeader.LENGTH);
        IcPdu.checkIcResp(r);
        hdgst = (IcPdu.digest(r) & IcPdu.DIGEST_HEADER) != 0;
        ddgst = (IcPdu.digest(r) & IcPdu.DIGEST_DATA) != 0;
        maxH2cData = IcPdu.max(r);
    }

    /** Fabrics Connect with the Connect data in the capsule; returns the CQE status (0 = success). */
    int connect(int qid, int sqsize, String subnqn, String hostnqn, int cntlid) throws IOException {
        this.qid = qid;
        MemorySegment sqe = arena.allocate(SqeDescriptor.LENGTH);
        ConnectDataDescriptor.sqe(sqe, nextCid(), qid, sqsize, qid == 0 ? 30_000 : 0);
        MemorySegment data = arena.allocate(ConnectDataDescriptor.DATA_LENGTH);
        ConnectDataDescriptor.data(data, new byte[16], cntlid, subnqn, hostnqn);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, ConnectDataDescriptor.DATA_LENGTH);
        return command(sqe, data, true, 0, null);
    }

    /** Identify Controller (CNS 1) into a 4096-byte segment; status must be checked by the caller from {@link #cqe}. */
    MemorySegment identifyController() throws IOException {
        MemorySegment sqe = sqe(Opcodes.ADMIN_IDENTIFY, 0);
        SqeDescriptor.cdw(sqe, 10, 1);
        transportSgl(sqe, Opcodes.IDENTIFY_DATA_LENGTH);
        MemorySegment out = arena.allocate(Opcodes.IDENTIFY_DATA_LENGTH);
        command(sqe, null, false, 0, out);
        return out;
    }

    /**
     * WRITE of {@code data} at {@code slba} (512-byte blocks): in the capsule when {@code inCapsule}, else asked for
     * by R2T and sent in H2CData PDUs of at most {@code h2cChunk} bytes; returns the status.
     */
    int write(long slba, int lbaBytes, MemorySegment data, boolean inCapsule, int h2cChunk) throws IOException {
        MemorySegment sqe = sqe(Opcodes.IO_WRITE, 1);
        SqeDescriptor.slba(sqe, slba);
        SqeDescriptor.blockCount(sqe, (int) (data.byteSize() / lbaBytes), 0);
        if (inCapsule) {
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, (int) data.byteSize());
        } else {
            transportSgl(sqe, (int) data.byteSize());
        }
        return command(sqe, data, inCapsule, h2cChunk, null);
    }

    /** READ of {@code out.byteSize()} bytes at {@code slba}; returns the status. */
    int read(long slba, int lbaBytes, MemorySegment out) throws IOException {
        MemorySegment sqe = sqe(Opcodes.IO_READ, 1);
        SqeDescriptor.slba(sqe, slba);
        SqeDescriptor.blockCount(sqe, (int) (out.byteSize() / lbaBytes), 0);
        transportSgl(sqe, (int) out.byteSize());
        return command(sqe, null, false, 0, out);
    }

    private MemorySegment sqe(int opcode, int nsid) {
        MemorySegment sqe = arena.allocate(SqeDescriptor.LENGTH);
        SqeDescriptor.opcode(sqe, opcode);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, nextCid());
        SqeDescriptor.nsid(sqe, nsid);
        return sqe;
    }

    static void transportSgl(MemorySegment sqe, int length) {
        MemorySegment sgl = SqeDescriptor.sgl1(sqe);
        sgl.fill((byte) 0);
        sgl.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), SglDescriptor.LENGTH_OFFSET, length);
        sgl.set(ValueLayout.JAVA_BYTE, SglDescriptor.ID_OFFSET, (byte) SglDescriptor.ID_TRANSPORT_DATA_BLOCK);
    }

    private int nextCid() {
        cid = (cid + 1) & 0xFFFF;
        return cid;
    }

    /**
     * Sends a CapsuleCmd ({@code data} in the capsule when {@code inCapsule}), answers R2Ts from {@code data},
     * gathers C2HData into {@code out}, until the CapsuleResp; returns its status.
     */
    int command(MemorySegment sqe, MemorySegment data, boolean inCapsule, int h2cChunk, MemorySegment out)
            throws IOException {
        int inData = inCapsule && data != null ? (int) data.byteSize() : 0;
        MemorySegment p = arena.allocate(CapsulePdu.CMD_HLEN + 8 + inData);
        MemorySegment.copy(sqe, 0, p, CapsulePdu.ENTRY_OFFSET, SqeDescriptor.LENGTH);
        int plen = CapsulePdu.cmdHeader(p, hdgst, ddgst, inData);
        int off = CapsulePdu.CMD_HLEN;
        if (hdgst) {
            PduDigest.putHeaderDigest(crc, p, CapsulePdu.CMD_HLEN);
            off += 4;
        }
        if (inData > 0) {
            MemorySegment.copy(data, 0, p, off, inData);
            if (ddgst) {
                p.set(LE_INT, off + inData, PduDigest.crc32c(crc, data, 0, inData));
            }
        }
        send(p, plen);
        MemorySegment h = arena.allocate(PduHeader.MAX_HLEN + 4);
        for (int pdus = 0; pdus < 100_000; pdus++) {
            readFully(h, 0, PduHeader.LENGTH);
            int hb = PduHeader.headerBytes(h, false, hdgst);
            readFully(h, PduHeader.LENGTH, hb - PduHeader.LENGTH);
            int type = PduHeader.type(h);
            if (type == PduHeader.TYPE_C2H_TERM_REQ) {
                termFes = TermPdu.fes(h);
                throw new IOException("C2HTermReq: fes=" + termFes + ", fei=" + TermPdu.fei(h));
            }
            if (hdgst) {
                PduDigest.checkHeaderDigest(crc, h, PduHeader.hlen(h));
            }
            int len = PduHeader.dataBytes(h, ddgst, out == null ? 0 : (int) out.byteSize());
            switch (type) {
                case PduHeader.TYPE_CAPSULE_RESP -> {
                    MemorySegment.copy(h, CapsulePdu.ENTRY_OFFSET, cqe, 0, CqeDescriptor.LENGTH);
                    if (CqeDescriptor.cid(cqe) != SqeDescriptor.cid(sqe)) {
                        throw new IOException("response cid " + CqeDescriptor.cid(cqe) + ", expected "
                                + SqeDescriptor.cid(sqe));
                    }
                    return CqeDescriptor.status(cqe);
                }
                case PduHeader.TYPE_C2H_DATA -> {
                    int datao = DataPdu.dataOffset(h);
                    readFully(out, datao, len);
                    if (ddgst) {
                        MemorySegment d = arena.allocate(4);
                        readFully(d, 0, 4);
                        PduDigest.checkDataDigest(crc, out.asSlice(datao, len).asByteBuffer(), d.get(LE_INT, 0));
                    }
                }
                case PduHeader.TYPE_R2T -> h2c(data, DataPdu.cccid(h), DataPdu.ttag(h), DataPdu.dataOffset(h),
                        DataPdu.dataLength(h), h2cChunk);
                default -> throw new IOException("unexpected PDU type 0x" + Integer.toHexString(type));
            }
        }
        throw new IOException("no response within 100000 PDUs");
    }

    /** H2CData PDUs for an R2T: {@code length} bytes of {@code data} from {@code offset}, chunks of at most chunk. */
    private void h2c(MemorySegment data, int cccid, int ttag, int offset, int length, int chunk) throws IOException {
        int max = Math.min(chunk <= 0 ? maxH2cData : chunk, maxH2cData);
        for (int done = 0; done < length; ) { // bounded: done grows by at least 1 each time
            int n = Math.min(max, length - done);
            MemorySegment p = arena.allocate(DataPdu.HLEN + 8 + n);
            int plen = DataPdu.dataHeader(p, PduHeader.TYPE_H2C_DATA, hdgst, ddgst,
                    done + n == length ? PduHeader.FLAG_LAST_PDU : 0, cccid, ttag, offset + done, n);
            int off = DataPdu.HLEN;
            if (hdgst) {
                PduDigest.putHeaderDigest(crc, p, DataPdu.HLEN);
                off += 4;
            }
            MemorySegment.copy(data, offset + done, p, off, n);
            if (ddgst) {
                p.set(LE_INT, off + n, PduDigest.crc32c(crc, p, off, n));
            }
            send(p, plen);
            done += n;
        }
    }

    void send(MemorySegment p, int length) throws IOException {
        ByteBuffer b = p.asSlice(0, length).asByteBuffer();
        while (b.hasRemaining()) { // blocking channel: each write makes progress or throws
            ch.write(b);
        }
    }

    /** Reads exactly {@code length} bytes into {@code s} at {@code offset}, within the socket timeout. */
    void readFully(MemorySegment s, long offset, int length) throws IOException {
        ByteBuffer b = s.asSlice(offset, length).asByteBuffer();
        var in = ch.socket().getInputStream(); // honours the socket timeout
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (b.hasRemaining()) {
            if (System.nanoTime() > deadline) {
                throw new SocketTimeoutException("no data within " + TIMEOUT_MS + " ms");
            }
            byte[] tmp = new byte[b.remaining()];
            int n = in.read(tmp);
            if (n < 0) {
                throw new java.io.EOFException("connection closed by the target");
            }
            b.put(tmp, 0, n);
        }
    }

    /** Reads PDUs until a C2HTermReq (its FES) or the end of the connection (-1), within the socket timeout. */
    int awaitTermination() throws IOException {
        MemorySegment h = arena.allocate(PduHeader.MAX_HLEN + PduHeader.MAX_TERM_DATA);
        try {
            readFully(h, 0, PduHeader.LENGTH);
        } catch (java.io.EOFException e) {
            return -1;
        }
        if (PduHeader.type(h) != PduHeader.TYPE_C2H_TERM_REQ) {
            throw new IOException("expected C2HTermReq, got type 0x" + Integer.toHexString(PduHeader.type(h)));
        }
        readFully(h, PduHeader.LENGTH, TermPdu.HLEN - PduHeader.LENGTH);
        termFes = TermPdu.fes(h);
        return termFes;
    }

    @Override
    public void close() {
        try {
            ch.close();
        } catch (IOException e) {
            // test cleanup
        }
        arena.close();
    }
}
