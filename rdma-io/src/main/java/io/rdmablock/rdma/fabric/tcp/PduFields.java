package io.rdmablock.rdma.fabric.tcp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian unaligned accessors of the NVMe/TCP PDU fields (every multi-byte PDU field is little-endian). */
final class PduFields {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private PduFields() {
    }

    static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    static void u8(MemorySegment s, long off, int v) {
        s.set(ValueLayout.JAVA_BYTE, off, (byte) v);
    }

    static int u16(MemorySegment s, long off) {
        return Short.toUnsignedInt(s.get(U16, off));
    }

    static void u16(MemorySegment s, long off, int v) {
        s.set(U16, off, (short) v);
    }

    static int u32(MemorySegment s, long off) {
        return s.get(U32, off);
    }

    static void u32(MemorySegment s, long off, int v) {
        s.set(U32, off, v);
    }

    /** Zeroes {@code len} bytes from {@code off} (reserved fields). */
    static void zero(MemorySegment s, long off, long len) {
        s.asSlice(off, len).fill((byte) 0);
    }
}
