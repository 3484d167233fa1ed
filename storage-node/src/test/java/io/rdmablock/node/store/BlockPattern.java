package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A self-describing 4 KiB block: every 8-byte word derives from (block, generation), and word 0 holds both, so a
 * block read back can be checked without knowing which generation landed: consistent, or all zero, or torn.
 */
final class BlockPattern {

    static final int BLOCK = 4096;

    private BlockPattern() {
    }

    static void fill(MemorySegment seg, long segOffset, long block, long gen) {
        long head = (block << 24) | (gen & 0xffffff) | (1L << 62);
        seg.set(JAVA_LONG, segOffset, head);
        for (int w = 1; w < BLOCK / 8; w++) {
            seg.set(JAVA_LONG, segOffset + 8L * w, word(head, w));
        }
    }

    private static long word(long head, int w) {
        return (head * 0x9E3779B97F4A7C15L) ^ (w * 0xC2B2AE3D27D4EB4FL);
    }

    /** The generation found in the block, -1 if all zero; throws AssertionError if torn or not this block. */
    static long check(MemorySegment seg, long segOffset, long block) {
        long head = seg.get(JAVA_LONG, segOffset);
        if (head == 0) {
            for (int w = 1; w < BLOCK / 8; w++) {
                if (seg.get(JAVA_LONG, segOffset + 8L * w) != 0) {
                    throw new AssertionError("torn block " + block + ": zero head, non-zero word " + w);
                }
            }
            return -1;
        }
        if ((head >>> 24) != ((block) | (1L << 38))) {
            throw new AssertionError("block " + block + " holds head " + Long.toHexString(head));
        }
        for (int w = 1; w < BLOCK / 8; w++) {
            if (seg.get(JAVA_LONG, segOffset + 8L * w) != word(head, w)) {
                throw new AssertionError("torn block " + block + " at word " + w);
            }
        }
        return head & 0xffffff;
    }
}
