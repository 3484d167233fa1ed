package io.rdmablock.tools.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/**
 * Writes and checks self-describing blocks for {@code verify=crc32c|md5|meta} and fio's other checksum types
 * ({@link VerifyChecksum}), and fio's pattern for
 * {@code verify=pattern} (no header). A block of {@code bs} bytes is checked in units of {@code verify_interval}
 * bytes (default: the block size, fio's {@code get_hdr_inc}); each unit carries a header at {@code verify_offset}
 * within it. Not fio's on-disk bytes, the same fields as fio's {@code struct verify_header} (verify.h, which since
 * fio 3.x holds what was {@code struct vhdr_meta}: offset, numberio, time, thread):
 *
 * <pre>
 *  0  u32 magic 0x52424b56 ("RBKV")
 *  4  u32 unit length in bytes (verify_interval)
 *  8  u64 device offset of the unit
 * 16  u64 seed of the data
 * 24  u32 generation of the write (fio's numberio: a job's write sequence number, {@link BlockVerifyState})
 * 28  u16 thread: the number of the job that wrote it (its first clone, 1-based, fio's thread_number)
 * 30  u8  verify kind, u8 version 1
 * 32  u32 write time, seconds since the epoch; 36 u32 nanoseconds
 * 40  u32 crc32c of bytes 0..39 (fio's header crc32)
 * 44  u32 reserved 0
 * 48  checksum over the unit with this field zeroed, {@link VerifyChecksum#length} bytes as fio stores them
 *     (crc32c 4, md5 16, sha512 64, ...; meta: none), in a field of at least 16 bytes rounded up to 8: the header
 *     is 64 bytes up to md5, 72 for sha1, 80 for sha256 and sha3-224/256, 96 for sha3-384, 112 for sha512/sha3-512
 * 64+ data: the verify_pattern when given ({@link VerifyPattern}, repeated over the whole block), else an
 *     xorshift64 stream from the seed
 * </pre>
 *
 * A check fails on a wrong magic, header crc, length or offset (a misplaced or torn write: the message names the
 * offset the unit was written for and the job that wrote it), a block written by another job than the expected one,
 * a checksum mismatch, or (meta and pattern) a byte that differs from the pattern, named by its device offset.
 * The caller compares {@link #lastGeneration()} with the last acknowledged one (a lost write reads an older
 * generation). {@code verify=pattern} has no header: it cannot tell generations apart (as in fio). One instance per
 * I/O unit: not thread-safe.
 */
final class BlockVerifier {
    static final int MAGIC = 0x52424b56;
    /** The smallest header (meta, crc*, md5, xxhash); {@link #headerBytes} gives each type's. */
    static final int HEADER_BYTES = 64;
    /** verify=pattern without verify_pattern: fio's documented example value. */
    static final String DEFAULT_PATTERN = "0xdeadbeef";
    private static final int CHECKSUM_AT = 48;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final JobSpec.Verify kind;
    private final VerifyPattern pattern;
    private final int interval;
    private final int headerAt;
    private final int thread;
    private final CRC32C crc = new CRC32C();
    private final VerifyChecksum sum;
    private final int headerBytes;
    private int lastGeneration;

    /**
     * @param spec   the job: verify, verify_pattern, verify_interval, verify_offset, bs
     * @param thread the number written in each header as the writing job (1-based)
     */
    BlockVerifier(JobSpec spec, int thread) {
        this.kind = spec.verify;
        this.pattern = spec.verifyPattern != null ? spec.verifyPattern
                : kind == JobSpec.Verify.PATTERN ? VerifyPattern.parse(DEFAULT_PATTERN) : null;
        this.interval = spec.verifyInterval > 0 ? spec.verifyInterval : spec.bsWrite;
        this.headerAt = spec.verifyOffset;
        this.thread = thread;
        this.sum = new VerifyChecksum(kind);
        this.headerBytes = headerBytes(kind);
    }

    /** Header bytes of a verify type: 48 + its checksum's length, at least 16 and rounded up to 8; 0 for pattern. */
    static int headerBytes(JobSpec.Verify kind) {
        return kind == JobSpec.Verify.PATTERN ? 0 : CHECKSUM_AT + ((Math.max(16, VerifyChecksum.length(kind)) + 7) & ~7);
    }

    /**
     * Checks verify_interval and verify_offset against the block size, before any I/O.
     *
     * @throws IllegalArgumentException naming the option, the job and the bounds
     */
    static void validate(JobSpec j) {
        if (j.verify == JobSpec.Verify.NONE) {
            if (j.verifyInterval > 0 || j.verifyOffset > 0) {
                throw new IllegalArgumentException("invalid job '" + j.name + "': verify_interval and verify_offset"
                        + " need a verify= type");
            }
            return;
        }
        int bs = j.bsWrite;
        int iv = j.verifyInterval > 0 ? j.verifyInterval : bs;
        boolean header = j.verify != JobSpec.Verify.PATTERN;
        int hb = headerBytes(j.verify);
        int min = header ? hb : 1;
        if (iv < min || iv > bs || bs % iv != 0) {
            throw new IllegalArgumentException("invalid verify_interval: " + iv + " in job '" + j.name + "': min="
                    + min + ", max=bs=" + bs + ", and bs must be a multiple of it");
        }
        if (j.verifyOffset > 0 && (!header || j.verifyOffset + hb > iv)) {
            throw new IllegalArgumentException("invalid verify_offset: " + j.verifyOffset + " in job '" + j.name
                    + "': " + (header ? "min=0, max=" + (iv - hb) + " (verify_interval " + iv
                    + " minus the " + hb + "-byte header)" : "verify=pattern has no header to move"));
        }
    }

    /** The smallest generation in the headers of the block last checked successfully. */
    int lastGeneration() {
        return lastGeneration;
    }

    /** Fills a block to be written at device {@code offset}. */
    void fill(MemorySegment block, long offset, long seed, int generation) {
        long n = block.byteSize();
        if (pattern != null) {
            pattern.fill(block, offset, 0);
        } else {
            long x = seed | 1;
            for (long i = 0; i + 8 <= n; i += 8) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                block.set(LONG, i, x);
            }
        }
        if (kind == JobSpec.Verify.PATTERN) {
            return;
        }
        long now = System.currentTimeMillis();
        for (long p = 0; p + interval <= n; p += interval) {
            MemorySegment unit = block.asSlice(p, interval);
            MemorySegment h = unit.asSlice(headerAt, headerBytes);
            h.set(INT, 0, MAGIC);
            h.set(INT, 4, interval);
            h.set(LONG, 8, offset + p);
            h.set(LONG, 16, seed);
            h.set(INT, 24, generation);
            h.set(SHORT, 28, (short) thread);
            h.set(ValueLayout.JAVA_BYTE, 30, (byte) kind.ordinal());
            h.set(ValueLayout.JAVA_BYTE, 31, (byte) 1);
            h.set(INT, 32, (int) (now / 1000));
            h.set(INT, 36, (int) (now % 1000 * 1_000_000));
            h.set(INT, 40, headerCrc(h));
            h.set(INT, 44, 0);
            h.asSlice(CHECKSUM_AT, headerBytes - CHECKSUM_AT).fill((byte) 0);
            if (kind != JobSpec.Verify.META) {
                writeChecksum(unit, h);
            }
        }
    }

    /**
     * Checks a block read from device {@code offset}; null when good, else what is wrong (with the device offset).
     *
     * @param expectThread the job number every header must carry, or -1 to accept any job's
     */
    String check(MemorySegment block, long offset, int expectThread) {
        long n = block.byteSize();
        if (kind == JobSpec.Verify.PATTERN) {
            return patternMismatch(block, offset, 0, n, -1);
        }
        int minGen = Integer.MAX_VALUE;
        for (long p = 0; p + interval <= n; p += interval) {
            MemorySegment unit = block.asSlice(p, interval);
            MemorySegment h = unit.asSlice(headerAt, headerBytes);
            long at = offset + p;
            int magic = h.get(INT, 0);
            if (magic != MAGIC) {
                return String.format("bad magic header at offset %d: 0x%08x, want 0x%08x", at, magic, MAGIC);
            }
            if (h.get(INT, 40) != headerCrc(h)) {
                return "bad header crc at offset " + at + " (corrupt header)";
            }
            int len = h.get(INT, 4);
            long off = h.get(LONG, 8);
            int writer = Short.toUnsignedInt(h.get(SHORT, 28));
            if (len != interval || off != at) {
                return "bad header at offset " + at + ": holds offset " + off + " length " + len + ", written by job "
                        + writer + " generation " + h.get(INT, 24) + " (misplaced write)";
            }
            if (expectThread >= 0 && writer != expectThread) {
                return "bad header at offset " + at + ": written by job " + writer + " (generation " + h.get(INT, 24)
                        + "), want job " + expectThread + " (another job overwrote it)";
            }
            if (kind == JobSpec.Verify.META) {
                if (pattern != null) {
                    String bad = patternMismatch(unit, offset, p, interval, headerAt);
                    if (bad != null) {
                        return bad;
                    }
                }
            } else {
                MemorySegment field = h.asSlice(CHECKSUM_AT, headerBytes - CHECKSUM_AT);
                byte[] stored = field.toArray(ValueLayout.JAVA_BYTE);
                field.fill((byte) 0);
                writeChecksum(unit, h);
                if (!java.util.Arrays.equals(stored, field.toArray(ValueLayout.JAVA_BYTE))) {
                    String where = pattern != null ? patternMismatch(unit, offset, p, interval, headerAt) : null;
                    return "bad " + VerifyChecksum.name(kind) + " checksum at offset " + at + " length " + interval
                            + (where != null ? ": " + where : " (corrupt or torn block)");
                }
            }
            minGen = Math.min(minGen, h.get(INT, 24));
        }
        lastGeneration = minGen == Integer.MAX_VALUE ? 0 : minGen;
        return null;
    }

    /** The first byte of {@code seg} (at {@code phase} in the block) that differs from the pattern, outside the header. */
    private String patternMismatch(MemorySegment seg, long blockOffset, long phase, long n, int skipHeaderAt) {
        byte[] chunk = pattern.chunk(blockOffset);
        for (long i = 0; i < n; i++) {
            if (skipHeaderAt >= 0 && i >= skipHeaderAt && i < skipHeaderAt + headerBytes) {
                continue;
            }
            byte want = chunk[(int) ((phase + i) % chunk.length)];
            byte got = seg.get(ValueLayout.JAVA_BYTE, i);
            if (got != want) {
                return String.format("bad pattern at offset %d (block %d + %d): 0x%02x, want 0x%02x (verify_pattern %s)",
                        blockOffset + phase + i, blockOffset, phase + i, got & 0xff, want & 0xff, pattern);
            }
        }
        return null;
    }

    private int headerCrc(MemorySegment h) {
        crc.reset();
        crc.update(h.asSlice(0, 40).asByteBuffer());
        return (int) crc.getValue();
    }

    private void writeChecksum(MemorySegment unit, MemorySegment h) {
        if (kind == JobSpec.Verify.CRC32C) {
            crc.reset();
            crc.update(unit.asByteBuffer());
            h.set(INT, CHECKSUM_AT, (int) ~crc.getValue()); // fio's crc32c_sw (VerifyChecksum)
        } else {
            byte[] data = unit.toArray(ValueLayout.JAVA_BYTE);
            MemorySegment.copy(MemorySegment.ofArray(sum.compute(data, 0, data.length)), 0, h, CHECKSUM_AT,
                    VerifyChecksum.length(kind));
        }
    }
}
