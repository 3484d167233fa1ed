package io.rdmablock.rdma.fabric.tcp;

import io.rdmablock.rdma.fabric.Wire;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** Byte layouts of Linux include/linux/nvme-tcp.h, round trips and the receive checks. */
class PduCodecTest {
    private final Arena arena = Arena.ofAuto();
    private final CRC32C crc = new CRC32C();

    private MemorySegment seg(int n) {
        return arena.allocate(n, 8);
    }

    private static byte[] bytes(MemorySegment s, int n) {
        return s.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
    }

    private static byte[] hex(String h) {
        String s = h.replace(" ", "");
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    @Test
    void icReqHasTheKernelLayoutAndRoundTrips() {
        MemorySegment p = seg(IcPdu.LENGTH);
        p.fill((byte) 0x77);
        IcPdu.icReq(p, 0, IcPdu.DIGEST_HEADER | IcPdu.DIGEST_DATA, 0);
        // struct nvme_tcp_icreq_pdu: type 0, flags 0, hlen 128, pdo 0, plen 128 | pfv 0 | hpda | digest | maxr2t
        assertArrayEquals(hex("00 00 80 00 80000000 0000 00 03 00000000"), bytes(p, 16));
        for (int i = 16; i < IcPdu.LENGTH; i++) {
            assertEquals(0, p.get(ValueLayout.JAVA_BYTE, i), "reserved byte " + i);
        }
        assertEquals(IcPdu.LENGTH, PduHeader.headerBytes(p, true, false));
        assertEquals(IcPdu.LENGTH, PduHeader.headerBytes(p, true, true), "ICReq never carries a header digest");
        assertEquals(0, PduHeader.dataBytes(p, true, 0));
        IcPdu.checkIcReq(p);
        assertEquals(3, IcPdu.digest(p));
    }

    @Test
    void icRespRoundTripsAndIsCheckedByAHost() {
        MemorySegment p = seg(IcPdu.LENGTH);
        IcPdu.icResp(p, 0, IcPdu.DIGEST_DATA, 131072);
        assertArrayEquals(hex("01 00 80 00 80000000 0000 00 02 00000200"), bytes(p, 16));
        assertEquals(IcPdu.LENGTH, PduHeader.headerBytes(p, false, false));
        IcPdu.checkIcResp(p);
        assertEquals(131072, IcPdu.max(p));
        assertThrows(IllegalArgumentException.class, () -> IcPdu.icResp(p, 0, 0, 4094));
        assertThrows(IllegalArgumentException.class, () -> IcPdu.icResp(p, 32, 0, 8192));
        Wire.u32(p, IcPdu.MAX_OFFSET, 1024);
        PduFormatException e = assertThrows(PduFormatException.class, () -> IcPdu.checkIcResp(p));
        assertEquals(IcPdu.MAX_OFFSET, e.fei);
        assertTrue(e.getMessage().contains("MAXH2CDATA"), e.getMessage());
    }

    @Test
    void icReqWithAnotherVersionOrUnknownDigestBitsIsRefused() {
        MemorySegment p = seg(IcPdu.LENGTH);
        IcPdu.icReq(p, 0, 0, 0);
        Wire.u16(p, IcPdu.PFV_OFFSET, 1);
        PduFormatException e = assertThrows(PduFormatException.class, () -> IcPdu.checkIcReq(p));
        assertEquals(TermPdu.FES_INVALID_PDU_HEADER, e.fes);
        assertEquals(IcPdu.PFV_OFFSET, e.fei);
        IcPdu.icReq(p, 0, 0, 0);
        Wire.u8(p, IcPdu.DIGEST_OFFSET, 4);
        assertEquals(IcPdu.DIGEST_OFFSET, assertThrows(PduFormatException.class, () -> IcPdu.checkIcReq(p)).fei);
    }

    @Test
    void capsuleCmdWithInCapsuleDataAndDigestsRoundTrips() {
        byte[] payload = "in-capsule data of a write, 37 bytes".getBytes(StandardCharsets.US_ASCII);
        int hd = PduDigest.LENGTH;
        MemorySegment p = seg(CapsulePdu.CMD_HLEN + hd + payload.length + PduDigest.LENGTH);
        MemorySegment sqe = CapsulePdu.sqe(p);
        SqeDescriptor.opcode(sqe, 0x01);
        SqeDescriptor.cid(sqe, 0x1234);
        int plen = CapsulePdu.cmdHeader(p, true, true, payload.length);
        PduDigest.putHeaderDigest(crc, p, CapsulePdu.CMD_HLEN);
        MemorySegment.copy(payload, 0, p, ValueLayout.JAVA_BYTE, CapsulePdu.CMD_HLEN + hd, payload.length);
        int dd = PduDigest.crc32c(crc, p, CapsulePdu.CMD_HLEN + hd, payload.length);
        Wire.u32(p, CapsulePdu.CMD_HLEN + hd + payload.length, dd);
        // type 4, flags HDGST|DDGST, hlen 72, pdo 76, plen 72 + 4 + data + 4
        assertArrayEquals(hex("04 03 48 4C"), bytes(p, 4));
        assertEquals(CapsulePdu.CMD_HLEN + 8 + payload.length, plen);
        assertEquals(plen, PduHeader.plen(p));
        assertEquals(0x01, p.get(ValueLayout.JAVA_BYTE, 8));
        assertEquals((byte) 0x34, p.get(ValueLayout.JAVA_BYTE, 10));

        assertEquals(CapsulePdu.CMD_HLEN + hd, PduHeader.headerBytes(p, true, true));
        PduDigest.checkHeaderDigest(crc, p, CapsulePdu.CMD_HLEN);
        assertEquals(payload.length, PduHeader.dataBytes(p, true, 8192));
        PduDigest.checkDataDigest(crc, p.asSlice(CapsulePdu.CMD_HLEN + hd, payload.length).asByteBuffer(), dd);
        assertEquals(0x1234, SqeDescriptor.cid(CapsulePdu.sqe(p)));
    }

    @Test
    void capsuleCmdWithoutDataHasPdoZero() {
        MemorySegment p = seg(CapsulePdu.CMD_HLEN);
        assertEquals(CapsulePdu.CMD_HLEN, CapsulePdu.cmdHeader(p, false, true, 0));
        assertArrayEquals(hex("04 00 48 00 48000000"), bytes(p, 8));
        assertEquals(CapsulePdu.CMD_HLEN, PduHeader.headerBytes(p, true, false));
        assertEquals(0, PduHeader.dataBytes(p, true, 8192));
    }

    @Test
    void capsuleRespRoundTrips() {
        MemorySegment p = seg(CapsulePdu.RESP_HLEN + 4);
        MemorySegment cqe = CapsulePdu.cqe(p);
        CqeDescriptor.cid(cqe, 7);
        CqeDescriptor.sqhd(cqe, 3);
        assertEquals(28, CapsulePdu.respHeader(p, true));
        PduDigest.putHeaderDigest(crc, p, CapsulePdu.RESP_HLEN);
        assertArrayEquals(hex("05 01 18 00 1C000000"), bytes(p, 8));
        assertEquals(28, PduHeader.headerBytes(p, false, true));
        PduDigest.checkHeaderDigest(crc, p, CapsulePdu.RESP_HLEN);
        assertEquals(0, PduHeader.dataBytes(p, true, 0));
        assertEquals(7, CqeDescriptor.cid(CapsulePdu.cqe(p)));
    }

    @Test
    void dataPdusAndR2tHaveTheKernelLayout() {
        MemorySegment p = seg(64);
        int plen = DataPdu.dataHeader(p, PduHeader.TYPE_C2H_DATA, false, true, PduHeader.FLAG_LAST_PDU
                | PduHeader.FLAG_SUCCESS, 0xABCD, 0, 4096, 512);
        // type 7, flags DDGST|LAST|SUCCESS, hlen 24, pdo 24, plen 24+512+4 | cccid | ttag | datao | datal | rsvd
        assertArrayEquals(hex("07 0E 18 18 1C020000 CDAB 0000 00100000 00020000 00000000"), bytes(p, 24));
        assertEquals(24 + 512 + 4, plen);
        assertEquals(24, PduHeader.headerBytes(p, false, false));
        assertEquals(512, PduHeader.dataBytes(p, true, 512));
        assertEquals(TermPdu.FES_DATA_LIMIT_EXCEEDED,
                assertThrows(PduFormatException.class, () -> PduHeader.dataBytes(p, true, 511)).fes);

        DataPdu.r2t(p, true, 0x0102, 5, 131072, 65536);
        assertArrayEquals(hex("09 01 18 00 1C000000 0201 0500 00000200 00000100 00000000"), bytes(p, 24));
        assertEquals(28, PduHeader.headerBytes(p, false, true));
        assertEquals(0, PduHeader.dataBytes(p, false, 0));
        assertEquals(0x0102, DataPdu.cccid(p));
        assertEquals(5, DataPdu.ttag(p));
        assertEquals(131072, DataPdu.dataOffset(p));
        assertEquals(65536, DataPdu.dataLength(p));

        DataPdu.dataHeader(p, PduHeader.TYPE_H2C_DATA, true, false, PduHeader.FLAG_LAST_PDU, 1, 5, 0, 8192);
        assertEquals(28, PduHeader.headerBytes(p, true, true));
        assertEquals(8192, PduHeader.dataBytes(p, false, 131072));
        assertThrows(IllegalArgumentException.class, () -> DataPdu.dataHeader(p, PduHeader.TYPE_H2C_DATA, false, false,
                PduHeader.FLAG_LAST_PDU | PduHeader.FLAG_SUCCESS, 1, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> DataPdu.r2t(p, false, 1, 0, 0, 0));
    }

    @Test
    void termReqCarriesFesFeiAndTheOffendingHeader() {
        MemorySegment bad = seg(CapsulePdu.CMD_HLEN);
        CapsulePdu.cmdHeader(bad, false, false, 0);
        MemorySegment p = seg(TermPdu.HLEN + PduHeader.MAX_TERM_DATA);
        int plen = TermPdu.write(p, PduHeader.TYPE_C2H_TERM_REQ, TermPdu.FES_INVALID_PDU_HEADER, 2, bad);
        assertEquals(TermPdu.HLEN + CapsulePdu.CMD_HLEN, plen);
        assertArrayEquals(hex("03 00 18 18 60000000 0100 02000000"), bytes(p, 14));
        assertEquals(TermPdu.HLEN, PduHeader.headerBytes(p, false, true));
        assertEquals(CapsulePdu.CMD_HLEN, PduHeader.dataBytes(p, true, 0));
        assertEquals(1, TermPdu.fes(p));
        assertEquals(2, TermPdu.fei(p));
        assertThrows(IllegalArgumentException.class, () -> TermPdu.write(p, PduHeader.TYPE_C2H_TERM_REQ, 9, 0, null));
        assertThrows(IllegalArgumentException.class, () -> TermPdu.write(p, PduHeader.TYPE_CAPSULE_CMD, 1, 0, null));
    }

    @Test
    void wrongTypeOrHlenIsAnInvalidHeaderField() {
        MemorySegment p = seg(CapsulePdu.CMD_HLEN);
        CapsulePdu.cmdHeader(p, false, false, 0);
        PduFormatException e = assertThrows(PduFormatException.class, () -> PduHeader.headerBytes(p, false, false));
        assertEquals(PduHeader.TYPE_OFFSET, e.fei, "a CapsuleCmd is not for a host");
        Wire.u8(p, PduHeader.HLEN_OFFSET, 24);
        e = assertThrows(PduFormatException.class, () -> PduHeader.headerBytes(p, true, false));
        assertEquals(TermPdu.FES_INVALID_PDU_HEADER, e.fes);
        assertEquals(PduHeader.HLEN_OFFSET, e.fei);
        assertTrue(e.getMessage().contains("hlen=24") && e.getMessage().contains("expected=72"), e.getMessage());
        Wire.u8(p, PduHeader.TYPE_OFFSET, 0x08);
        assertEquals(PduHeader.TYPE_OFFSET,
                assertThrows(PduFormatException.class, () -> PduHeader.headerBytes(p, true, false)).fei);
    }

    @Test
    void headerDigestFlagMustMatchTheNegotiation() {
        MemorySegment p = seg(CapsulePdu.CMD_HLEN);
        CapsulePdu.cmdHeader(p, false, false, 0);
        assertEquals(PduHeader.FLAGS_OFFSET,
                assertThrows(PduFormatException.class, () -> PduHeader.headerBytes(p, true, true)).fei);
    }

    @Test
    void wrongPlenOrMisalignedPdoIsRefused() {
        MemorySegment p = seg(128);
        CapsulePdu.cmdHeader(p, false, false, 16);
        Wire.u8(p, PduHeader.PDO_OFFSET, 74); // not right after the header
        PduFormatException e = assertThrows(PduFormatException.class, () -> PduHeader.dataBytes(p, false, 8192));
        assertEquals(PduHeader.PDO_OFFSET, e.fei);
        assertTrue(e.getMessage().contains("pdo=74"), e.getMessage());

        CapsulePdu.respHeader(p, false);
        Wire.u32(p, PduHeader.PLEN_OFFSET, 30); // a response has no data
        assertEquals(PduHeader.PLEN_OFFSET,
                assertThrows(PduFormatException.class, () -> PduHeader.dataBytes(p, false, 0)).fei);
        Wire.u32(p, PduHeader.PLEN_OFFSET, 10); // below HLEN
        assertEquals(PduHeader.PLEN_OFFSET,
                assertThrows(PduFormatException.class, () -> PduHeader.headerBytes(p, false, false)).fei);

        DataPdu.dataHeader(p, PduHeader.TYPE_H2C_DATA, false, false, 0, 1, 1, 0, 100);
        Wire.u32(p, DataPdu.LENGTH_OFFSET, 99); // DATAL disagrees with PLEN
        assertEquals(DataPdu.LENGTH_OFFSET,
                assertThrows(PduFormatException.class, () -> PduHeader.dataBytes(p, false, 4096)).fei);
        DataPdu.dataHeader(p, PduHeader.TYPE_H2C_DATA, false, false, 0, 1, 1, 0, 100);
        assertEquals(PduHeader.FLAGS_OFFSET, assertThrows(PduFormatException.class,
                () -> PduHeader.dataBytes(p, true, 4096)).fei, "data digest negotiated, DDGST flag missing");
    }

    @Test
    void digestMismatchesAreClearErrors() {
        MemorySegment p = seg(CapsulePdu.RESP_HLEN + 4);
        CapsulePdu.respHeader(p, true);
        PduDigest.putHeaderDigest(crc, p, CapsulePdu.RESP_HLEN);
        p.set(ValueLayout.JAVA_BYTE, 12, (byte) 1);
        PduFormatException e = assertThrows(PduFormatException.class,
                () -> PduDigest.checkHeaderDigest(crc, p, CapsulePdu.RESP_HLEN));
        assertEquals(TermPdu.FES_HEADER_DIGEST, e.fes);
        assertTrue(e.getMessage().startsWith("header digest error"), e.getMessage());

        MemorySegment d = seg(64);
        int good = PduDigest.crc32c(crc, d, 0, 64);
        d.set(ValueLayout.JAVA_BYTE, 5, (byte) 9);
        e = assertThrows(PduFormatException.class, () -> PduDigest.checkDataDigest(crc, d.asByteBuffer(), good));
        assertTrue(e.isDataDigestError());
        assertTrue(e.getMessage().contains("lengthBytes=64"), e.getMessage());
    }

    @Test
    void crc32cIsTheCastagnoliCheckValue() {
        // RFC 3720 B.4 / the CRC catalogue check value of "123456789" for CRC-32C
        MemorySegment s = seg(9);
        MemorySegment.copy("123456789".getBytes(StandardCharsets.US_ASCII), 0, s, ValueLayout.JAVA_BYTE, 0, 9);
        assertEquals(0xE3069283, PduDigest.crc32c(crc, s, 0, 9));
        // 32 zero bytes: RFC 3720 B.4 gives aa 36 91 8a on the wire, little-endian 0x8A9136AA
        assertEquals(0x8A9136AA, PduDigest.crc32c(crc, seg(32), 0, 32));
    }
}
