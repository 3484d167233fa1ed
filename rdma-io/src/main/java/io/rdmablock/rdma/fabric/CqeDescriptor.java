package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * The 16-byte response capsule's completion queue entry (NVMe Base 2.0 section 4.6, Figure 89/90; NVMe-oF 1.1
 * section 2.2 "Response Capsule").
 *
 * <pre>
 *  0                               4                               8
 *  +-------------------------------+-------------------------------+
 *  |     dw0 (command specific)    |        dw1 (reserved)         |
 *  +---------------+---------------+---------------+---------------+
 *  |     sqhd      |     sqid      |      cid      |    status     |
 *  +---------------+---------------+---------------+---------------+
 *  8               10              12              14              16
 *  status: bit 0 phase tag (unused on fabrics, 0), bits 8:1 SC, 11:9 SCT, 13:12 CRD, 14 More, 15 DNR
 * </pre>
 */
public final class CqeDescriptor {
    public static final int LENGTH = 16;
    public static final int DW0_OFFSET = 0;
    public static final int DW1_OFFSET = 4;
    public static final int SQHD_OFFSET = 8;
    public static final int SQID_OFFSET = 10;
    public static final int CID_OFFSET = 12;
    public static final int STATUS_OFFSET = 14;

    private CqeDescriptor() {
    }

    public static int dw0(MemorySegment s) {
        return Wire.u32(s, DW0_OFFSET);
    }

    public static void dw0(MemorySegment s, int v) {
        Wire.u32(s, DW0_OFFSET, v);
    }

    public static int dw1(MemorySegment s) {
        return Wire.u32(s, DW1_OFFSET);
    }

    public static void dw1(MemorySegment s, int v) {
        Wire.u32(s, DW1_OFFSET, v);
    }

    public static int sqhd(MemorySegment s) {
        return Wire.u16(s, SQHD_OFFSET);
    }

    public static void sqhd(MemorySegment s, int v) {
        Wire.u16(s, SQHD_OFFSET, v);
    }

    public static int sqid(MemorySegment s) {
        return Wire.u16(s, SQID_OFFSET);
    }

    public static void sqid(MemorySegment s, int v) {
        Wire.u16(s, SQID_OFFSET, v);
    }

    public static int cid(MemorySegment s) {
        return Wire.u16(s, CID_OFFSET);
    }

    public static void cid(MemorySegment s, int v) {
        Wire.u16(s, CID_OFFSET, v);
    }

    /** The raw 16-bit status field including phase tag. */
    public static int statusField(MemorySegment s) {
        return Wire.u16(s, STATUS_OFFSET);
    }

    /** Status as {@link NvmeStatus#of(int, int, boolean)} (without phase tag): 0 = success. */
    public static int status(MemorySegment s) {
        return statusField(s) >>> 1;
    }

    /** Writes the status (an {@link NvmeStatus} value); phase tag 0. */
    public static void status(MemorySegment s, int status) {
        Wire.u16(s, STATUS_OFFSET, (status << 1) & 0xFFFE);
    }

    /** Writes the whole CQE in one go. */
    public static void set(MemorySegment s, int dw0, int sqhd, int sqid, int cid, int status) {
        Wire.u32(s, DW0_OFFSET, dw0);
        Wire.u32(s, DW1_OFFSET, 0);
        Wire.u16(s, SQHD_OFFSET, sqhd);
        Wire.u16(s, SQID_OFFSET, sqid);
        Wire.u16(s, CID_OFFSET, cid);
        status(s, status);
    }
}
