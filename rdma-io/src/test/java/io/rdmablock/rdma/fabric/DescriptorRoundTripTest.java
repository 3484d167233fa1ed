package io.rdmablock.rdma.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class DescriptorRoundTripTest {

    @Test
    void shouldPlaceSqeFieldsAtSpecOffsets() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqe = arena.allocate(SqeDescriptor.LENGTH);
            SqeDescriptor.opcode(sqe, Opcodes.IO_WRITE);
            SqeDescriptor.cid(sqe, 0xBEEF);
            SqeDescriptor.nsid(sqe, 1);
            SqeDescriptor.slba(sqe, 0x1122334455667788L);
            SqeDescriptor.blockCount(sqe, 10, SqeDescriptor.CDW12_FUA);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 0xAABBCCDD00L, 5120, 0x12345678);

            assertEquals(0x01, sqe.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals((byte) 0xEF, sqe.get(ValueLayout.JAVA_BYTE, 2));
            assertEquals((byte) 0xBE, sqe.get(ValueLayout.JAVA_BYTE, 3));
            assertEquals((byte) 0x88, sqe.get(ValueLayout.JAVA_BYTE, 40));
            assertEquals(9, sqe.get(ValueLayout.JAVA_BYTE, 48));
            assertEquals(0x40, sqe.get(ValueLayout.JAVA_BYTE, 51) & 0xFF);
            assertEquals(0x40, sqe.get(ValueLayout.JAVA_BYTE, 24 + 15) & 0xFF);
            assertEquals(10, SqeDescriptor.blockCount(sqe));
            assertEquals(5120, SglDescriptor.keyedLength(SqeDescriptor.sgl1(sqe)));
            assertEquals(0x12345678, SglDescriptor.key(SqeDescriptor.sgl1(sqe)));
            assertEquals(0xAABBCCDD00L, SglDescriptor.address(SqeDescriptor.sgl1(sqe)));
        }
    }

    @Test
    void shouldEncodeCqeStatusWithoutPhaseTag() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cqe = arena.allocate(CqeDescriptor.LENGTH);
            int status = NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE);
            CqeDescriptor.set(cqe, 7, 3, 1, 0x42, status);
            assertEquals(status, CqeDescriptor.status(cqe));
            assertEquals(0, CqeDescriptor.statusField(cqe) & 1);
            assertEquals(0x80, NvmeStatus.sc(CqeDescriptor.status(cqe)));
            assertTrue(NvmeStatus.dnr(status));
            assertEquals(0x42, CqeDescriptor.cid(cqe));
            assertTrue(NvmeStatus.describe(status).contains("LBA out of range"));
        }
    }

    @Test
    void shouldRejectKeyedLengthAbove24Bits() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sgl = arena.allocate(SglDescriptor.LENGTH);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SglDescriptor.keyed(sgl, 0, 1 << 24, 1));
            assertTrue(e.getMessage().contains("max=16777215"), e.getMessage());
        }
    }

    @Test
    void shouldRoundTripConnectDataAndIdentify() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(ConnectDataDescriptor.DATA_LENGTH);
            ConnectDataDescriptor.data(data, new byte[16], 0xFFFF, "nqn.2026-11.io.rdmablock:volume:v1",
                    "nqn.2014-08.org.nvmexpress:uuid:1234");
            assertEquals("nqn.2026-11.io.rdmablock:volume:v1", ConnectDataDescriptor.subnqn(data));
            assertEquals(0xFFFF, ConnectDataDescriptor.cntlid(data));

            MemorySegment id = arena.allocate(IdentifyControllerDescriptor.LENGTH);
            var info = new IdentifyControllerDescriptor.Info("SN1", "rdmablock", "0.1", 3, 128 * 1024, 128, 1, true,
                    "nqn.x", 8192);
            IdentifyControllerDescriptor.encode(id, info);
            assertEquals(info, IdentifyControllerDescriptor.decode(id));

            MemorySegment ns = arena.allocate(IdentifyNamespaceDescriptor.LENGTH);
            var nsInfo = new IdentifyNamespaceDescriptor.Info(1 << 21, 0, 512, true);
            IdentifyNamespaceDescriptor.encode(ns, nsInfo);
            assertEquals(nsInfo, IdentifyNamespaceDescriptor.decode(ns));
        }
    }

    @Test
    void shouldRoundTripCmPrivateData() {
        var req = new CmPrivateData.Request(0, 2, 32, 31, 5);
        assertEquals(req, CmPrivateData.Request.decode(req.encode()));
        assertThrows(IllegalArgumentException.class, () -> CmPrivateData.Request.decode(new byte[3]));
        assertEquals(new CmPrivateData.Reject(0, 4), CmPrivateData.Reject.decode(new CmPrivateData.Reject(0, 4).encode()));
        assertNull(CmPrivateData.Reject.decode(new byte[148]), "zero-filled IB CM REJ data is not an NVMe/RDMA reject");
        assertNull(CmPrivateData.Reject.decode(new CmPrivateData.Reject(1, 4).encode()), "RECFMT 1");
        assertNull(CmPrivateData.Reject.decode(new CmPrivateData.Reject(0, 0x0A).encode()), "STS beyond 09h");
    }
}
