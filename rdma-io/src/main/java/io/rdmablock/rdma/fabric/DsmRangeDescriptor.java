package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * One Dataset Management range, 16 bytes (NVM Command Set 1.0 section 3.2.3, Figure 39). The command carries
 * NR + 1 ranges (cdw10 bits 7:0, 0-based, max 256 ranges = 4096 bytes of data).
 *
 * <pre>
 *  0 context attributes(4) | 4 length in logical blocks(4) | 8 starting LBA(8)
 * </pre>
 */
public final class DsmRangeDescriptor {
    public static final int LENGTH = 16;
    public static final int MAX_RANGES = 256;

    private DsmRangeDescriptor() {
    }

    public static int blockCount(MemorySegment ranges, int index) {
        return Wire.u32(ranges, (long) index * LENGTH + 4);
    }

    public static long slba(MemorySegment ranges, int index) {
        return Wire.u64(ranges, (long) index * LENGTH + 8);
    }

    public static void set(MemorySegment ranges, int index, long slba, int blockCount) {
        long base = (long) index * LENGTH;
        Wire.u32(ranges, base, 0);
        Wire.u32(ranges, base + 4, blockCount);
        Wire.u64(ranges, base + 8, slba);
    }
}
