package io.rdmablock.rdma.fabric;

import java.lang.foreign.MemorySegment;

/**
 * Identify Namespace data structure (NVM command set), 4096 bytes (NVM Command Set 1.0 section 4.1.5.1, Figure 97).
 *
 * <pre>
 *  0 NSZE(8, LBAs) 8 NCAP(8) 16 NUSE(8) 24 NSFEAT(1: bit 2 DAE deallocated error, bit 3 ...) 25 NLBAF(1, 0-based)
 *  26 FLBAS(1: format index in bits 3:0) 30 NMIC(1: bit 0 shared, may be attached to several controllers)
 *  33 DLFEAT(1: bits 2:0 read behaviour after deallocate, 001b = zeroes; bit 3 Write Zeroes supports Deallocate)
 *  104 NGUID(16) 120 EUI64(8) 128 LBAF0(4: bits 23:16 LBADS = log2(LBA size))
 * </pre>
 */
public final class IdentifyNamespaceDescriptor {
    public static final int LENGTH = 4096;
    public static final int NSZE = 0;
    public static final int NCAP = 8;
    public static final int NUSE = 16;
    public static final int NSFEAT = 24;
    public static final int NLBAF = 25;
    public static final int FLBAS = 26;
    public static final int NMIC = 30;
    public static final int DLFEAT = 33;
    public static final int NGUID = 104;
    public static final int EUI64 = 120;
    /** NMIC bit 0: the namespace may be attached to two or more controllers (multipath). */
    public static final int NMIC_SHARED = 1;
    public static final int LBAF0 = 128;

    /** DLFEAT read behaviour 001b: deallocated blocks read as all zeroes. */
    public static final int DLFEAT_READS_ZEROES = 0x1;
    /** DLFEAT bit 3: WRITE ZEROES with DEAC deallocates. */
    public static final int DLFEAT_WRITE_ZEROES_DEAC = 0x8;

    private IdentifyNamespaceDescriptor() {
    }

    /** What rdmablock advertises per namespace. */
    public record Info(long sizeBlocks, long usedBlocks, int lbaSize, boolean zeroesAfterTrim) {
        public long capacityBytes() {
            return sizeBlocks * lbaSize;
        }
    }

    public static void encode(MemorySegment data, Info info) {
        if (info.lbaSize() < 512 || Integer.bitCount(info.lbaSize()) != 1) {
            throw new IllegalArgumentException("invalid lbaSize: lbaSize=" + info.lbaSize() + ", must be 512 x 2^n");
        }
        data.asSlice(0, LENGTH).fill((byte) 0);
        Wire.u64(data, NSZE, info.sizeBlocks());
        Wire.u64(data, NCAP, info.sizeBlocks());
        Wire.u64(data, NUSE, info.usedBlocks());
        Wire.u8(data, NLBAF, 0);
        Wire.u8(data, FLBAS, 0);
        Wire.u8(data, DLFEAT, info.zeroesAfterTrim() ? DLFEAT_READS_ZEROES | DLFEAT_WRITE_ZEROES_DEAC : 0);
        Wire.u32(data, LBAF0, Integer.numberOfTrailingZeros(info.lbaSize()) << 16);
    }

    /**
     * Sets NMIC (byte 30) and the namespace's NGUID (104, 16 bytes) and EUI64 (120, 8 bytes) after {@link #encode};
     * they must equal the descriptors of Identify CNS 03h ({@link NamespaceIdDescriptor}).
     */
    public static void identifiers(MemorySegment data, int nmic, byte[] nguid16, byte[] eui64) {
        Wire.u8(data, NMIC, nmic);
        MemorySegment.copy(nguid16, 0, data, java.lang.foreign.ValueLayout.JAVA_BYTE, NGUID, 16);
        MemorySegment.copy(eui64, 0, data, java.lang.foreign.ValueLayout.JAVA_BYTE, EUI64, 8);
    }

    public static int nmic(MemorySegment data) {
        return Wire.u8(data, NMIC);
    }

    public static Info decode(MemorySegment data) {
        int lbads = (Wire.u32(data, LBAF0 + 4 * (Wire.u8(data, FLBAS) & 0xF)) >>> 16) & 0xFF;
        return new Info(Wire.u64(data, NSZE), Wire.u64(data, NUSE), 1 << lbads,
                (Wire.u8(data, DLFEAT) & 0x7) == DLFEAT_READS_ZEROES);
    }
}
