package io.rdmablock.tools.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.zip.CRC32C;

/**
 * Writes and checks self-describing blocks for {@code verify=crc32c|md5} (and a repeated 32-bit pattern for
 * {@code verify=pattern}). Not fio's on-disk header, the same idea:
 *
 * <pre>
 *  0  u32 magic 0x52424b56 ("RBKV")
 *  4  u32 block length in bytes
 *  8  u64 device offset of the block
 * 16  u64 seed of the data
 * 24  u32 generation of the write (a job's write sequence number, see {@link BlockVerifyState}; 0 = none)
 * 28  u32 reserved 0
 * 32  16 bytes checksum (crc32c: first 4 bytes; md5: all 16) over the whole block with this field zeroed
 * 48  data: xorshift64 stream from the seed
 * </pre>
 *
 * A check fails on a wrong magic, length or offset (a misplaced or torn write) or a checksum mismatch; the caller
 * compares {@link #lastGeneration()} with the last acknowledged one (a lost write reads an older generation).
 * {@code verify=pattern} has no header: it cannot tell generations apart (as in fio). One instance per I/O unit:
 * not thread-safe.
 */
final class BlockVerifier {
    static final int MAGIC = 0x52424b56;
    static final int HEADER_BYTES = 48;
    private static final int CHECKSUM_AT = 32;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final JobSpec.Verify kind;
    private final int pattern;
    private final CRC32C crc = new CRC32C();
    private final MessageDigest md5;

    BlockVerifier(JobSpec.Verify kind, int pattern) {
        this.kind = kind;
        this.pattern = pattern;
        try {
            this.md5 = kind == JobSpec.Verify.MD5 ? MessageDigest.getInstance("MD5") : null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 not available", e);
        }
    }

    private int lastGeneration;

    /** The generation in the header of the block last checked successfully. */
    int lastGeneration() {
        return lastGeneration;
    }

    void fill(MemorySegment block, long offset, long seed, int generation) {
        long n = block.byteSize();
        if (kind == JobSpec.Verify.PATTERN) {
            for (long i = 0; i + 4 <= n; i += 4) {
                block.set(INT, i, pattern);
            }
            return;
        }
        long x = seed | 1;
        for (long i = HEADER_BYTES; i + 8 <= n; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            block.set(LONG, i, x);
        }
        block.set(INT, 0, MAGIC);
        block.set(INT, 4, (int) n);
        block.set(LONG, 8, offset);
        block.set(LONG, 16, seed);
        block.set(INT, 24, generation);
        block.set(INT, 28, 0);
        block.asSlice(CHECKSUM_AT, 16).fill((byte) 0);
        writeChecksum(block);
    }

    /** Returns null when the block is good, else what is wrong. */
    String check(MemorySegment block, long offset) {
        long n = block.byteSize();
        if (kind == JobSpec.Verify.PATTERN) {
            for (long i = 0; i + 4 <= n; i += 4) {
                int v = block.get(INT, i);
                if (v != pattern) {
                    return String.format("bad pattern at offset %d+%d: 0x%08x, want 0x%08x", offset, i, v, pattern);
                }
            }
            return null;
        }
        int magic = block.get(INT, 0);
        if (magic != MAGIC) {
            return String.format("bad magic header at offset %d: 0x%08x, want 0x%08x", offset, magic, MAGIC);
        }
        int len = block.get(INT, 4);
        long off = block.get(LONG, 8);
        if (len != n || off != offset) {
            return "bad header at offset " + offset + ": holds offset " + off + " length " + len + " (misplaced write)";
        }
        long c0 = block.get(LONG, CHECKSUM_AT);
        long c1 = block.get(LONG, CHECKSUM_AT + 8);
        block.asSlice(CHECKSUM_AT, 16).fill((byte) 0);
        writeChecksum(block);
        boolean ok = block.get(LONG, CHECKSUM_AT) == c0 && block.get(LONG, CHECKSUM_AT + 8) == c1;
        lastGeneration = ok ? block.get(INT, 24) : 0;
        return ok ? null : "bad " + kind.name().toLowerCase() + " checksum at offset " + offset + " (corrupt or torn block)";
    }

    private void writeChecksum(MemorySegment block) {
        ByteBuffer bb = block.asByteBuffer();
        if (kind == JobSpec.Verify.CRC32C) {
            crc.reset();
            crc.update(bb);
            block.set(INT, CHECKSUM_AT, (int) crc.getValue());
        } else {
            md5.reset();
            md5.update(bb);
            MemorySegment.copy(MemorySegment.ofArray(md5.digest()), 0, block, CHECKSUM_AT, 16);
        }
    }
}
