package io.rdmablock.e2e;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The stamp {@link FailoverCampaign}'s writers put in every 4 KiB block: magic, block number, writer lane, sequence,
 * a checksum over the rest, and a filler derived from block and sequence ({@link #encode}, {@link #decode}).
 */
final class BlockStamps {
    static final int BLOCK = 4096;
    private static final long MAGIC = 0x52424348414f5331L; // "RBCHAOS1"

    private BlockStamps() {
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Writes block {@code block}'s stamp for (lane, seq) at {@code off}: magic, block, lane, seq, checksum, filler. */
    static void encode(MemorySegment buf, long off, long block, long lane, long seq) {
        long words = BLOCK / 8;
        long sum = mix(MAGIC ^ block) ^ mix(lane + 31 * seq);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off, MAGIC);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 8, block);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 16, lane);
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 24, seq);
        long seed = mix(block * 0x9E3779B97F4A7C15L + seq);
        for (long w = 5; w < words; w++) {
            long v = seed + w * 0x9E3779B97F4A7C15L;
            buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8, v);
            sum = sum * 31 + v;
        }
        buf.set(ValueLayout.JAVA_LONG_UNALIGNED, off + 32, sum);
    }

    /** The sequence a block holds: 0 when all zero (never written), -1 when its stamp or checksum is wrong. */
    static long decode(MemorySegment buf, long off, long block) {
        long words = BLOCK / 8;
        long magic = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
        if (magic == 0) {
            for (long w = 1; w < words; w++) {
                if (buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8) != 0) {
                    return -1;
                }
            }
            return 0;
        }
        long b = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 8);
        long lane = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 16);
        long seq = buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 24);
        if (magic != MAGIC || b != block || seq <= 0) {
            return -1;
        }
        long sum = mix(MAGIC ^ block) ^ mix(lane + 31 * seq);
        for (long w = 5; w < words; w++) {
            sum = sum * 31 + buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + w * 8);
        }
        return sum == buf.get(ValueLayout.JAVA_LONG_UNALIGNED, off + 32) ? seq : -1;
    }
}
