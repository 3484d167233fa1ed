package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Little-endian unaligned accessors used by every descriptor and by the NVMe/TCP PDUs
 * ({@code io.rdmablock.rdma.fabric.tcp}): NVMe fields are little-endian (NVMe Base 2.0 section 1.4.2; NVMe/TCP
 * Transport 1.0 section 3.3). Offsets are in bytes from the segment's start; out-of-bounds offsets throw
 * {@link IndexOutOfBoundsException}.
 */
public final class Wire {
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Wire() {
    }

    public static int u8(MemorySegment s, long off) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
    }

    public static void u8(MemorySegment s, long off, int v) {
        s.set(ValueLayout.JAVA_BYTE, off, (byte) v);
    }

    public static int u16(MemorySegment s, long off) {
        return Short.toUnsignedInt(s.get(U16, off));
    }

    public static void u16(MemorySegment s, long off, int v) {
        s.set(U16, off, (short) v);
    }

    public static int u32(MemorySegment s, long off) {
        return s.get(U32, off);
    }

    public static void u32(MemorySegment s, long off, int v) {
        s.set(U32, off, v);
    }

    public static long u64(MemorySegment s, long off) {
        return s.get(U64, off);
    }

    public static void u64(MemorySegment s, long off, long v) {
        s.set(U64, off, v);
    }

    /** Reads a NUL-padded ASCII/UTF-8 string field of {@code len} bytes. */
    /** Zeroes {@code len} bytes from {@code off} (reserved fields). */
    public static void zero(MemorySegment s, long off, long len) {
        s.asSlice(off, len).fill((byte) 0);
    }

    static String string(MemorySegment s, long off, int len) {
        byte[] b = s.asSlice(off, len).toArray(ValueLayout.JAVA_BYTE);
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8);
    }

    /** Writes {@code v} NUL-padded into a field of {@code len} bytes; longer values are an error. */
    static void string(MemorySegment s, long off, int len, String v, String field) {
        byte[] b = v.getBytes(StandardCharsets.UTF_8);
        if (b.length > len) {
            throw new IllegalArgumentException("invalid " + field + ": lengthBytes=" + b.length + ", max=" + len);
        }
        MemorySegment f = s.asSlice(off, len);
        f.fill((byte) 0);
        MemorySegment.copy(b, 0, f, ValueLayout.JAVA_BYTE, 0, b.length);
    }

    /** Writes {@code v} space-padded (Identify SN/MN/FR fields are ASCII, space padded). */
    static void spacePadded(MemorySegment s, long off, int len, String v) {
        MemorySegment f = s.asSlice(off, len);
        f.fill((byte) ' ');
        byte[] b = v.getBytes(StandardCharsets.US_ASCII);
        MemorySegment.copy(b, 0, f, ValueLayout.JAVA_BYTE, 0, Math.min(b.length, len));
    }
}
