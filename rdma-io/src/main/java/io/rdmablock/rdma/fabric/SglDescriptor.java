package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * A 16-byte SGL descriptor as carried in SGL1 of a command capsule (NVMe Base 2.0 section 4.3.2, Figures 118-122;
 * NVMe/RDMA transport 1.0 section 3.3).
 *
 * <pre>
 * Keyed SGL Data Block (type 4h, subtype 0h address / Fh invalidate key):
 *  0                               8                     11                      15      16
 *  +-------------------------------+----------------------+-----------------------+-------+
 *  |    address (host virtual)     | length (24-bit, LE)  |     key (32-bit rkey) |  id   |
 *  +-------------------------------+----------------------+-----------------------+-------+
 * SGL Data Block, offset (type 0h, subtype 1h) = in-capsule data:
 *  0                               8                               12              15      16
 *  +-------------------------------+-------------------------------+---------------+-------+
 *  |  offset into capsule data     |        length (32-bit)        |   reserved    |  id   |
 *  +-------------------------------+-------------------------------+---------------+-------+
 * id (byte 15): type bits 7:4, subtype bits 3:0
 * </pre>
 */
public final class SglDescriptor {
    public static final int LENGTH = 16;
    public static final int ADDRESS_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int KEY_OFFSET = 11;
    public static final int ID_OFFSET = 15;

    /** Byte 15 of a Keyed SGL Data Block with an address (type 4h, subtype 0h). */
    public static final int ID_KEYED_DATA_BLOCK = 0x40;
    /** Keyed SGL Data Block, invalidate key (type 4h, subtype Fh). */
    public static final int ID_KEYED_DATA_BLOCK_INVALIDATE = 0x4F;
    /** SGL Data Block with an offset into in-capsule data (type 0h, subtype 1h). */
    public static final int ID_DATA_BLOCK_OFFSET = 0x01;
    /**
     * Transport SGL Data Block, transport specific subtype Ah (identifier 5Ah): NVMe/TCP data the controller fetches
     * with R2T / H2CData or sends with C2HData (NVMe/TCP Transport Specification 1.0 section 3.5.1; Linux
     * {@code nvme_tcp_set_sg_host_data}: address 0, 32-bit length, as {@link #dataBlockLength}).
     */
    public static final int ID_TRANSPORT_DATA_BLOCK = 0x5A;
    /** Largest length a keyed descriptor can carry: 2^24 - 1 bytes. */
    public static final int MAX_KEYED_LENGTH = (1 << 24) - 1;

    private SglDescriptor() {
    }

    /**
     * True for a Keyed SGL Data Block, with either subtype a host uses: 40h (address) or 4Fh (address, and the host
     * asks the target to invalidate the key with SEND with Invalidate; Linux nvme-rdma with fast-registration MRs).
     */
    public static boolean isKeyed(int id) {
        return id == ID_KEYED_DATA_BLOCK || id == ID_KEYED_DATA_BLOCK_INVALIDATE;
    }

    public static int id(MemorySegment sgl) {
        return Wire.u8(sgl, ID_OFFSET);
    }

    public static int type(MemorySegment sgl) {
        return id(sgl) >>> 4;
    }

    public static int subtype(MemorySegment sgl) {
        return id(sgl) & 0x0F;
    }

    public static long address(MemorySegment sgl) {
        return Wire.u64(sgl, ADDRESS_OFFSET);
    }

    /** Length of a keyed descriptor: 24 bits. */
    public static int keyedLength(MemorySegment sgl) {
        return Wire.u16(sgl, LENGTH_OFFSET) | (Wire.u8(sgl, LENGTH_OFFSET + 2) << 16);
    }

    public static int key(MemorySegment sgl) {
        return Wire.u32(sgl, KEY_OFFSET);
    }

    /** Length of an (unkeyed) data block descriptor: 32 bits. */
    public static long dataBlockLength(MemorySegment sgl) {
        return Integer.toUnsignedLong(Wire.u32(sgl, LENGTH_OFFSET));
    }

    /**
     * Writes a Keyed SGL Data Block descriptor.
     *
     * @throws IllegalArgumentException if lengthBytes is outside 0 .. 2^24-1
     */
    public static void keyed(MemorySegment sgl, long address, int lengthBytes, int rkey) {
        if (lengthBytes < 0 || lengthBytes > MAX_KEYED_LENGTH) {
            throw new IllegalArgumentException("invalid keyed SGL length: lengthBytes=" + lengthBytes
                    + ", min=0, max=" + MAX_KEYED_LENGTH);
        }
        Wire.u64(sgl, ADDRESS_OFFSET, address);
        Wire.u16(sgl, LENGTH_OFFSET, lengthBytes & 0xFFFF);
        Wire.u8(sgl, LENGTH_OFFSET + 2, lengthBytes >>> 16);
        Wire.u32(sgl, KEY_OFFSET, rkey);
        Wire.u8(sgl, ID_OFFSET, ID_KEYED_DATA_BLOCK);
    }

    /** Writes a Keyed SGL Data Block with the invalidate subtype (identifier 4Fh), as Linux nvme-rdma does. */
    public static void keyedInvalidate(MemorySegment sgl, long address, int lengthBytes, int rkey) {
        keyed(sgl, address, lengthBytes, rkey);
        Wire.u8(sgl, ID_OFFSET, ID_KEYED_DATA_BLOCK_INVALIDATE);
    }

    /** Writes an in-capsule SGL Data Block descriptor (offset from the start of in-capsule data). */
    public static void inCapsule(MemorySegment sgl, long offsetBytes, int lengthBytes) {
        Wire.u64(sgl, ADDRESS_OFFSET, offsetBytes);
        Wire.u32(sgl, LENGTH_OFFSET, lengthBytes);
        Wire.u16(sgl, 12, 0);
        Wire.u8(sgl, 14, 0);
        Wire.u8(sgl, ID_OFFSET, ID_DATA_BLOCK_OFFSET);
    }
}
