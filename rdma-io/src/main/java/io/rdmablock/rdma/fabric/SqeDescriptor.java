package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * The 64-byte command capsule's submission queue entry (NVMe Base 2.0 section 4.2, Figure 88; NVMe-oF 1.1 section
 * 2.1 "Command Capsule"). In-capsule data, when present, follows the SQE at byte 64 of the capsule.
 *
 * <pre>
 *  0       1       2               4                               8
 *  +-------+-------+---------------+-------------------------------+
 *  |opcode |flags  |      cid      |             nsid              |   flags: FUSE 1:0, PSDT 7:6 (01b = SGL)
 *  +-------+-------+---------------+-------------------------------+
 *  8  cdw2 | 12 cdw3 (NVM commands without PI: reserved; rdmablock's forwarded epoch, {@link #cdw23})  16
 *  16 mptr (unused, 0)                                                                          24
 *  24 SGL1: 16-byte SGL descriptor ({@link SglDescriptor})                                       40
 *  40 cdw10 | 44 cdw11 | 48 cdw12 | 52 cdw13 | 56 cdw14 | 60 cdw15                              64
 * </pre>
 *
 * <p>All accessors take the segment that holds the capsule and read/write at offset 0 of it; no bounds other than the
 * segment's own are checked (a segment shorter than 64 bytes throws {@link IndexOutOfBoundsException}).
 */
public final class SqeDescriptor {
    public static final int LENGTH = 64;
    public static final int OPCODE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int CID_OFFSET = 2;
    public static final int NSID_OFFSET = 4;
    /** Fabrics commands (opcode 0x7F): FCTYPE at byte 4 (overlaps nsid, NVMe-oF 1.1 Figure 9). */
    public static final int FCTYPE_OFFSET = 4;
    /**
     * Command dword 2 (SQE bytes 8..11). NVM WRITE / FLUSH / WRITE ZEROES / DATASET MANAGEMENT on a namespace without
     * protection information: reserved (NVM Command Set 1.0 section 3.2.6); rdmablock's node-to-node forwarding puts
     * the primary's epoch bits 31:0 here (docs/replication.md, "Wire").
     */
    public static final int CDW2_OFFSET = 8;
    /** Command dword 3 (SQE bytes 12..15): the forwarded epoch's bits 63:32 (see {@link #CDW2_OFFSET}). */
    public static final int CDW3_OFFSET = 12;
    public static final int SGL1_OFFSET = 24;
    public static final int CDW10_OFFSET = 40;
    public static final int CDW11_OFFSET = 44;
    public static final int CDW12_OFFSET = 48;
    public static final int CDW13_OFFSET = 52;
    public static final int CDW14_OFFSET = 56;
    public static final int CDW15_OFFSET = 60;
    /** PSDT = 01b: SGL, data block descriptors (bits 7:6 of byte 1). */
    public static final int PSDT_SGL = 0x40;
    public static final int PSDT_MASK = 0xC0;

    /** READ/WRITE cdw12: Force Unit Access (bit 30). */
    public static final int CDW12_FUA = 1 << 30;
    /** WRITE ZEROES cdw12: Deallocate (bit 25). */
    public static final int CDW12_DEAC = 1 << 25;
    /** DATASET MANAGEMENT cdw11: Attribute - Deallocate (bit 2). */
    public static final int DSM_CDW11_AD = 1 << 2;

    private SqeDescriptor() {
    }

    public static int opcode(MemorySegment s) {
        return Wire.u8(s, OPCODE_OFFSET);
    }

    public static void opcode(MemorySegment s, int v) {
        Wire.u8(s, OPCODE_OFFSET, v);
    }

    public static int flags(MemorySegment s) {
        return Wire.u8(s, FLAGS_OFFSET);
    }

    public static void flags(MemorySegment s, int v) {
        Wire.u8(s, FLAGS_OFFSET, v);
    }

    public static int cid(MemorySegment s) {
        return Wire.u16(s, CID_OFFSET);
    }

    public static void cid(MemorySegment s, int v) {
        Wire.u16(s, CID_OFFSET, v);
    }

    public static int nsid(MemorySegment s) {
        return Wire.u32(s, NSID_OFFSET);
    }

    public static void nsid(MemorySegment s, int v) {
        Wire.u32(s, NSID_OFFSET, v);
    }

    public static int fctype(MemorySegment s) {
        return Wire.u8(s, FCTYPE_OFFSET);
    }

    public static void fctype(MemorySegment s, int v) {
        Wire.u8(s, FCTYPE_OFFSET, v);
    }

    /**
     * CDW2 (bits 31:0) and CDW3 (bits 63:32) as one little-endian 64-bit value, SQE bytes 8..15: the primary's epoch
     * in a forwarded write-type command (docs/replication.md, "Wire"); 0 when the host sent none.
     */
    public static long cdw23(MemorySegment s) {
        return Wire.u64(s, CDW2_OFFSET);
    }

    /** Sets SQE bytes 8..15: CDW2 = bits 31:0 of {@code v}, CDW3 = bits 63:32. */
    public static void cdw23(MemorySegment s, long v) {
        Wire.u64(s, CDW2_OFFSET, v);
    }

    /** Command dword {@code n}, 10 .. 15. */
    public static int cdw(MemorySegment s, int n) {
        return Wire.u32(s, cdwOffset(n));
    }

    public static void cdw(MemorySegment s, int n, int v) {
        Wire.u32(s, cdwOffset(n), v);
    }

    /** READ/WRITE/WRITE ZEROES/VERIFY: starting LBA (cdw10 low, cdw11 high). */
    public static long slba(MemorySegment s) {
        return Wire.u64(s, CDW10_OFFSET);
    }

    public static void slba(MemorySegment s, long v) {
        Wire.u64(s, CDW10_OFFSET, v);
    }

    /** READ/WRITE/WRITE ZEROES: number of logical blocks, 1-based (the wire field NLB in cdw12 15:0 is 0-based). */
    public static int blockCount(MemorySegment s) {
        return (Wire.u32(s, CDW12_OFFSET) & 0xFFFF) + 1;
    }

    /** Sets cdw12 = (blockCount - 1) | extra bits (FUA, DEAC). blockCount 1 .. 65536. */
    public static void blockCount(MemorySegment s, int blockCount, int cdw12Flags) {
        if (blockCount < 1 || blockCount > 65536) {
            throw new IllegalArgumentException("invalid blockCount: blockCount=" + blockCount + ", min=1, max=65536");
        }
        Wire.u32(s, CDW12_OFFSET, (blockCount - 1) | cdw12Flags);
    }

    /** Slice of the capsule's SGL1 field, for {@link SglDescriptor}. */
    public static MemorySegment sgl1(MemorySegment s) {
        return s.asSlice(SGL1_OFFSET, SglDescriptor.LENGTH);
    }

    /** Zeroes the 64 bytes of the SQE. */
    public static void clear(MemorySegment s) {
        s.asSlice(0, LENGTH).fill((byte) 0);
    }

    private static long cdwOffset(int n) {
        if (n < 10 || n > 15) {
            throw new IllegalArgumentException("invalid cdw: n=" + n + ", min=10, max=15");
        }
        return CDW10_OFFSET + 4L * (n - 10);
    }
}
