package io.rdmablock.node.target;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.tcp.CapsulePdu;
import io.rdmablock.rdma.fabric.tcp.DataPdu;
import io.rdmablock.rdma.fabric.tcp.PduHeader;
import io.rdmablock.rdma.fabric.tcp.PduDigest;
import io.rdmablock.rdma.fabric.tcp.TermPdu;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NVMe/TCP on the target ({@link TcpListener}, {@link TcpQueue}) with an in-JVM host ({@link TcpTestHost}): ICReq,
 * Connect of admin and I/O queues, Identify, WRITE in the capsule and by R2T (several H2CData PDUs), READ (several
 * C2HData PDUs), with and without digests, the discovery log over TCP, and bad input: it ends that connection with a
 * C2HTermReq and no other queue, TCP or RDMA (soft provider), notices.
 */
@Timeout(120)
class TcpTargetTest extends TargetTestBase {
    /** The host of the RDMA association beside (a new association of one host ends its previous one). */
    private static final String RDMA_HOST = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000002";
    private TcpListener listener;
    private InetSocketAddress address;

    @BeforeEach
    void listen() {
        listener = TcpListener.start(f.target, new InetSocketAddress("127.0.0.1", 0));
        address = listener.localAddress();
    }

    @AfterEach
    void stopListening() {
        listener.close();
    }

    /** An admin and an I/O queue of one association; returns the I/O host (the admin host in {@code out[0]}). */
    private TcpTestHost associate(boolean hdgst, boolean ddgst, TcpTestHost[] out) throws IOException {
        TcpTestHost a = new TcpTestHost(address);
        out[0] = a;
        a.icReq(hdgst, ddgst);
        assertEquals(hdgst, a.hdgst);
        assertEquals(ddgst, a.ddgst);
        assertEquals(0, a.connect(0, 31, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF), "admin Connect");
        MemorySegment id = a.identifyController();
        assertEquals(0, CqeDescriptor.status(a.cqe), "Identify");
        int cntlid = IdentifyControllerDescriptor.decode(id).cntlid();
        TcpTestHost io = new TcpTestHost(address);
        io.icReq(hdgst, ddgst);
        assertEquals(0, io.connect(1, 15, f.subnqn, TargetFixture.HOSTNQN, cntlid), "I/O Connect");
        return io;
    }

    private static MemorySegment pattern(TcpTestHost h, int bytes, long seed) {
        byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        MemorySegment s = h.arena.allocate(bytes);
        MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, bytes);
        return s;
    }

    private void writeAndReadBack(boolean hdgst, boolean ddgst) throws IOException {
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost io = associate(hdgst, ddgst, admin); TcpTestHost a = admin[0]) {
            MemorySegment small = pattern(io, 4096, 1);
            assertEquals(0, io.write(0, LBA, small, true, 0), "WRITE in the capsule");
            int big = 128 * 1024;
            assertTrue(big > 8192 * 2);
            MemorySegment large = pattern(io, big, 2);
            assertEquals(0, io.write(64, LBA, large, false, 8192), "WRITE by R2T, 16 H2CData PDUs");
            MemorySegment back = io.arena.allocate(big);
            assertEquals(0, io.read(64, LBA, back), "READ, 2 C2HData PDUs");
            assertEquals(-1, back.mismatch(large), "data read back");
            MemorySegment back4k = io.arena.allocate(4096);
            assertEquals(0, io.read(0, LBA, back4k));
            assertEquals(-1, back4k.mismatch(small), "in-capsule data read back");
            assertTrue(a.ch.isOpen());
        }
    }

    @Test
    void writesAndReadsWithoutDigests() throws IOException {
        writeAndReadBack(false, false);
    }

    @Test
    void writesAndReadsWithHeaderAndDataDigests() throws IOException {
        writeAndReadBack(true, true);
    }

    @Test
    void writesAndReadsWithHeaderDigestOnly() throws IOException {
        writeAndReadBack(true, false);
    }

    @Test
    void aKeyedSglIsAnSglTypeError() throws IOException {
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost io = associate(false, false, admin); TcpTestHost a = admin[0]) {
            MemorySegment sqe = io.arena.allocate(SqeDescriptor.LENGTH);
            SqeDescriptor.opcode(sqe, Opcodes.IO_READ);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.cid(sqe, 77);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.blockCount(sqe, 8, 0);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 0x1000, 4096, 0x1234);
            int status = io.command(sqe, null, false, 0, io.arena.allocate(4096));
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), status);
            assertEquals(0, io.read(0, LBA, io.arena.allocate(512)), "the queue goes on");
        }
    }

    @Test
    void discoveryListsEachSubsystemPerTransport() throws IOException {
        try (TcpTestHost d = new TcpTestHost(address)) {
            d.icReq(false, false);
            assertEquals(0, d.connect(0, 31, DiscoveryLogDescriptor.DISCOVERY_NQN, TargetFixture.HOSTNQN, 0xFFFF));
            int len = DiscoveryLogDescriptor.HEADER_LENGTH + 4 * DiscoveryLogDescriptor.ENTRY_LENGTH;
            MemorySegment sqe = d.arena.allocate(SqeDescriptor.LENGTH);
            LogPageDescriptor.sqe(sqe, 9, 0, LogPageDescriptor.LID_DISCOVERY, false, len, 0);
            MemorySegment sgl = SqeDescriptor.sgl1(sqe);
            sgl.fill((byte) 0);
            sgl.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN),
                    SglDescriptor.LENGTH_OFFSET, len);
            sgl.set(ValueLayout.JAVA_BYTE, SglDescriptor.ID_OFFSET, (byte) SglDescriptor.ID_TRANSPORT_DATA_BLOCK);
            MemorySegment log = d.arena.allocate(len);
            assertEquals(0, d.command(sqe, null, false, 0, log));
            assertEquals(4, DiscoveryLogDescriptor.numrec(log), "discovery + vol1, per transport (RDMA, TCP)");
            var rdma = DiscoveryLogDescriptor.entry(log.asSlice(2048, 1024));
            var tcp = DiscoveryLogDescriptor.entry(log.asSlice(4096, 1024));
            assertEquals(DiscoveryLogDescriptor.TRTYPE_RDMA, rdma.trtype());
            assertEquals(f.subnqn, rdma.subnqn());
            assertEquals(DiscoveryLogDescriptor.TRTYPE_TCP, tcp.trtype());
            assertEquals(f.subnqn, tcp.subnqn());
            assertEquals(Integer.toString(address.getPort()), tcp.trsvcid());
            assertEquals("127.0.0.1", tcp.traddr());
            assertEquals(DiscoveryLogDescriptor.ADRFAM_IPV4, tcp.adrfam());
        }
    }

    @Test
    void aHeaderDigestErrorEndsOnlyThatConnectionWithC2hTermReq() throws IOException {
        connect(RDMA_HOST, 0); // an RDMA association (soft provider) of another host beside
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost other = associate(true, true, admin); TcpTestHost a = admin[0];
             TcpTestHost bad = new TcpTestHost(address)) {
            bad.icReq(true, true);
            MemorySegment p = bad.arena.allocate(CapsulePdu.CMD_HLEN + 4);
            SqeDescriptor.opcode(CapsulePdu.sqe(p), 0x7F);
            int plen = CapsulePdu.cmdHeader(p, true, true, 0);
            PduDigest.putHeaderDigest(bad.crc, p, CapsulePdu.CMD_HLEN);
            p.set(ValueLayout.JAVA_BYTE, CapsulePdu.CMD_HLEN, (byte) (p.get(ValueLayout.JAVA_BYTE, CapsulePdu.CMD_HLEN)
                    ^ 1));
            bad.send(p, plen);
            assertEquals(TermPdu.FES_HEADER_DIGEST, bad.awaitTermination());
            assertIoWorks(other, 3);
            assertEquals(0, io.writeBlocks(1, 200, 0x5A, 0).status(), "the RDMA queue goes on");
        }
    }

    @Test
    void aDataDigestErrorEndsTheConnection() throws IOException {
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost io = associate(false, true, admin); TcpTestHost a = admin[0]) {
            io.ddgst = false; // sends no data digest although negotiated: the flag check catches it first
            MemorySegment data = pattern(io, 512, 5);
            assertThrows(IOException.class, () -> io.write(0, LBA, data, true, 0));
        }
        try (TcpTestHost io = associate(false, true, admin); TcpTestHost a = admin[0]) {
            MemorySegment data = pattern(io, 4096, 6);
            // a wrong digest: corrupt the data after the digest was computed, by sending the PDU by hand
            MemorySegment p = io.arena.allocate(CapsulePdu.CMD_HLEN + 4096 + 4);
            MemorySegment sqe = CapsulePdu.sqe(p);
            SqeDescriptor.opcode(sqe, Opcodes.IO_WRITE);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.cid(sqe, 500);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.blockCount(sqe, 8, 0);
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, 4096);
            int plen = CapsulePdu.cmdHeader(p, false, true, 4096);
            MemorySegment.copy(data, 0, p, CapsulePdu.CMD_HLEN, 4096);
            int good = PduDigest.crc32c(io.crc, data, 0, 4096);
            p.set(ValueLayout.JAVA_INT_UNALIGNED, CapsulePdu.CMD_HLEN + 4096, good ^ 0x10);
            io.send(p, plen);
            assertEquals(TermPdu.FES_HEADER_DIGEST, io.awaitTermination(), "C2HTermReq (digest error, as SPDK)");
        }
    }

    @Test
    void garbageOrAStalledHostStallsNoOtherQueue() throws IOException {
        connect(RDMA_HOST, 0);
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost other = associate(false, false, admin); TcpTestHost a = admin[0];
             TcpTestHost garbage = new TcpTestHost(address); TcpTestHost stalled = new TcpTestHost(address)) {
            MemorySegment junk = garbage.arena.allocate(64);
            junk.fill((byte) 0x42);
            garbage.send(junk, 64);
            assertEquals(TermPdu.FES_INVALID_PDU_HEADER, garbage.awaitTermination(), "unknown PDU type");
            stalled.icReq(false, false);
            MemorySegment half = stalled.arena.allocate(CapsulePdu.CMD_HLEN);
            CapsulePdu.cmdHeader(half, false, false, 0);
            stalled.send(half, 30); // stops in the middle of the header
            assertIoWorks(other, 7);
            assertEquals(0, io.writeBlocks(1, 300, 0x33, 0).status(), "the RDMA queue goes on");
            assertTrue(stalled.ch.isOpen());
        }
    }

    @Test
    void h2cDataOutsideItsR2tOrWithoutOneEndsTheConnection() throws IOException {
        TcpTestHost[] admin = new TcpTestHost[1];
        try (TcpTestHost io = associate(false, false, admin); TcpTestHost a = admin[0]) {
            MemorySegment p = io.arena.allocate(CapsulePdu.CMD_HLEN);
            MemorySegment sqe = CapsulePdu.sqe(p);
            SqeDescriptor.opcode(sqe, Opcodes.IO_WRITE);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.cid(sqe, 900);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.blockCount(sqe, 8, 0);
            MemorySegment sgl = SqeDescriptor.sgl1(sqe);
            sgl.set(ValueLayout.JAVA_INT_UNALIGNED, SglDescriptor.LENGTH_OFFSET, 4096);
            sgl.set(ValueLayout.JAVA_BYTE, SglDescriptor.ID_OFFSET, (byte) SglDescriptor.ID_TRANSPORT_DATA_BLOCK);
            io.send(p, CapsulePdu.cmdHeader(p, false, false, 0));
            MemorySegment r2t = io.arena.allocate(DataPdu.HLEN);
            io.readFully(r2t, 0, DataPdu.HLEN);
            assertEquals(PduHeader.TYPE_R2T, PduHeader.type(r2t));
            assertEquals(4096, DataPdu.dataLength(r2t));
            MemorySegment h2c = io.arena.allocate(DataPdu.HLEN + 512);
            int plen = DataPdu.dataHeader(h2c, PduHeader.TYPE_H2C_DATA, false, false, PduHeader.FLAG_LAST_PDU, 900,
                    DataPdu.ttag(r2t), 4096, 512); // beyond R2TO + R2TL
            io.send(h2c, plen);
            assertEquals(TermPdu.FES_DATA_OUT_OF_RANGE, io.awaitTermination());
        }
        try (TcpTestHost io = associate(false, false, admin); TcpTestHost a = admin[0]) {
            MemorySegment h2c = io.arena.allocate(DataPdu.HLEN + 512);
            int plen = DataPdu.dataHeader(h2c, PduHeader.TYPE_H2C_DATA, false, false, PduHeader.FLAG_LAST_PDU, 1, 2,
                    0, 512);
            io.send(h2c, plen);
            assertEquals(TermPdu.FES_PDU_SEQUENCE, io.awaitTermination(), "H2CData without an R2T");
            a.identifyController();
            assertEquals(0, CqeDescriptor.status(a.cqe), "the admin queue goes on");
        }
        try (TcpTestHost h = new TcpTestHost(address)) {
            MemorySegment p = h.arena.allocate(CapsulePdu.CMD_HLEN);
            h.send(p, CapsulePdu.cmdHeader(p, false, false, 0));
            assertEquals(TermPdu.FES_PDU_SEQUENCE, h.awaitTermination(), "CapsuleCmd before ICReq");
        }
    }

    private void assertIoWorks(TcpTestHost h, long seed) throws IOException {
        MemorySegment data = pattern(h, 32 * 1024, seed);
        assertEquals(0, h.write(512, LBA, data, false, 0));
        MemorySegment back = h.arena.allocate(32 * 1024);
        assertEquals(0, h.read(512, LBA, back));
        assertArrayEquals(data.toArray(ValueLayout.JAVA_BYTE), back.toArray(ValueLayout.JAVA_BYTE));
    }
}
