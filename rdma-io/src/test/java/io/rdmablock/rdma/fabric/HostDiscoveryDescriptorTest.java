package io.rdmablock.rdma.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** Byte offsets of the structures a Linux host reads during connect, scan and discovery, against the spec figures. */
class HostDiscoveryDescriptorTest {

    private static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    @Test
    void shouldWriteTheInvalidateSubtypeInByte15() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sgl = arena.allocate(SglDescriptor.LENGTH);
            SglDescriptor.keyedInvalidate(sgl, 0x1000, 1024, 0x77);
            assertEquals(0x4F, u8(sgl, 15));
            assertEquals(1024, SglDescriptor.keyedLength(sgl));
            assertEquals(true, SglDescriptor.isKeyed(SglDescriptor.id(sgl)));
            assertEquals(false, SglDescriptor.isKeyed(0x41));
        }
    }

    @Test
    void shouldLayOutNamespaceIdentificationDescriptorsAsLinuxParsesThem() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = arena.allocate(NamespaceIdDescriptor.LENGTH);
            byte[] eui = {1, 2, 3, 4, 5, 6, 7, 8};
            byte[] nguid = new byte[16];
            byte[] uuid = new byte[16];
            for (int i = 0; i < 16; i++) {
                nguid[i] = (byte) (0x10 + i);
                uuid[i] = (byte) (0x30 + i);
            }
            NamespaceIdDescriptor.encode(d, new NamespaceIdDescriptor.Ids(eui, nguid, uuid, 0));
            assertEquals(1, u8(d, 0));
            assertEquals(8, u8(d, 1));
            assertEquals(1, u8(d, 4));
            assertEquals(2, u8(d, 12));
            assertEquals(16, u8(d, 13));
            assertEquals(0x10, u8(d, 16));
            assertEquals(3, u8(d, 32));
            assertEquals(16, u8(d, 33));
            assertEquals(0x30, u8(d, 36));
            assertEquals(4, u8(d, 52));
            assertEquals(1, u8(d, 53));
            assertEquals(0, u8(d, 56));
            assertEquals(0, u8(d, 57 + 1), "NIDL of the terminating descriptor");
            NamespaceIdDescriptor.Ids back = NamespaceIdDescriptor.decode(d);
            assertArrayEquals(eui, back.eui64());
            assertArrayEquals(nguid, back.nguid());
            assertArrayEquals(uuid, back.uuid());
            assertEquals(0, back.csi());
        }
    }

    @Test
    void shouldRejectADescriptorWhoseLengthDoesNotMatchItsType() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment d = arena.allocate(NamespaceIdDescriptor.LENGTH);
            d.set(ValueLayout.JAVA_BYTE, 0, (byte) NamespaceIdDescriptor.NIDT_NGUID);
            d.set(ValueLayout.JAVA_BYTE, 1, (byte) 8);
            assertThrows(IllegalArgumentException.class, () -> NamespaceIdDescriptor.decode(d));
        }
    }

    @Test
    void shouldEncodeGetLogPageLengthAndOffsetLikeNvmeGetLog() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sqe = arena.allocate(SqeDescriptor.LENGTH);
            LogPageDescriptor.sqe(sqe, 9, -1, LogPageDescriptor.LID_SMART_HEALTH, true, 512, 0x1_0000_0004L);
            assertEquals(0x02, u8(sqe, 40), "LID");
            assertEquals(0x80, u8(sqe, 41) & 0x80, "RAE bit 15");
            assertEquals(127, Short.toUnsignedInt(sqe.get(ValueLayout.JAVA_SHORT_UNALIGNED, 42)), "NUMDL 0-based");
            assertEquals(4, sqe.get(ValueLayout.JAVA_INT_UNALIGNED, 48), "LPOL");
            assertEquals(1, sqe.get(ValueLayout.JAVA_INT_UNALIGNED, 52), "LPOU");
            assertEquals(512, LogPageDescriptor.lengthBytes(sqe));
            assertEquals(0x1_0000_0004L, LogPageDescriptor.offsetBytes(sqe));
            LogPageDescriptor.sqe(sqe, 9, 0, LogPageDescriptor.LID_DISCOVERY, false, 1 << 20, 0);
            assertEquals(1 << 20, LogPageDescriptor.lengthBytes(sqe), "NUMDU carries bits 31:16");
        }
    }

    @Test
    void shouldPlaceDiscoveryEntryFieldsAtSpecOffsets() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment e = arena.allocate(DiscoveryLogDescriptor.ENTRY_LENGTH);
            var entry = new DiscoveryLogDescriptor.Entry(1, 1, 2, 2, 1, 0xFFFF, 32, 0, "4420",
                    "nqn.2026-11.io.rdmablock:volume:v", "10.0.0.1", 1, 1, 1);
            DiscoveryLogDescriptor.entry(e, entry);
            assertEquals(1, u8(e, 0));
            assertEquals(1, u8(e, 1));
            assertEquals(2, u8(e, 2));
            assertEquals(2, u8(e, 3));
            assertEquals(0xFFFF, Short.toUnsignedInt(e.get(ValueLayout.JAVA_SHORT_UNALIGNED, 6)));
            assertEquals(32, Short.toUnsignedInt(e.get(ValueLayout.JAVA_SHORT_UNALIGNED, 8)));
            assertEquals('4', u8(e, 32));
            assertEquals(' ', u8(e, 36), "TRSVCID space padded");
            assertEquals('n', u8(e, 256));
            assertEquals('1', u8(e, 512));
            assertEquals(1, u8(e, 768));
            assertEquals(1, u8(e, 769));
            assertEquals(1, u8(e, 770));
            assertEquals(entry, DiscoveryLogDescriptor.entry(e));
            MemorySegment h = arena.allocate(DiscoveryLogDescriptor.HEADER_LENGTH);
            DiscoveryLogDescriptor.header(h, 7, 3);
            assertEquals(7, h.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            assertEquals(3, h.get(ValueLayout.JAVA_LONG_UNALIGNED, 8));
        }
    }
}
