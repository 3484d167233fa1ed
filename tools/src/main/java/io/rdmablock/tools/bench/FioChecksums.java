package io.rdmablock.tools.bench;

/**
 * fio's own checksums where they differ from the JDK's, computed as fio 3.33 does (no JDK class gives these values):
 * {@code crc/crc64.c} {@code fio_crc64} (reflected, polynomial 0x95ac9329ac4bc9b5, init 0, no final xor),
 * {@code crc/crc32.c} {@code fio_crc32} (the POSIX {@code cksum} table, polynomial 0x04c11db7 MSB first, init 0, no
 * final xor, no length), {@code crc/crc16.c} (reflected 0x8005, init 0), {@code crc/crc7.c} (x^7 + x^3 + 1, fio's
 * {@code crc7_syndrome_table[(crc << 1) ^ byte]}) and {@code crc/xxhash.c} {@code XXH32} (fio seeds it with 1).
 * Each takes a byte range of an array and returns the value in the low bits of the result. Tables are built at class
 * load from the polynomials; {@code FioChecksumsTest} compares them with entries of fio's tables and with blocks fio
 * wrote.
 */
final class FioChecksums {
    private static final long[] CRC64 = new long[256];
    private static final int[] CRC32 = new int[256];
    private static final int[] CRC16 = new int[256];
    private static final int[] CRC7 = new int[256];

    static {
        for (int i = 0; i < 256; i++) {
            long c = i;
            int c16 = i;
            int c32 = i << 24;
            for (int b = 0; b < 8; b++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x95ac9329ac4bc9b5L : c >>> 1;
                c16 = (c16 & 1) != 0 ? (c16 >>> 1) ^ 0xa001 : c16 >>> 1;
                c32 = (c32 & 0x80000000) != 0 ? (c32 << 1) ^ 0x04c11db7 : c32 << 1;
            }
            CRC64[i] = c;
            CRC16[i] = c16;
            CRC32[i] = c32;
            // crc7: the 7-bit remainder of byte i times x^7 (MSB first), poly x^7 + x^3 + 1 (0x09)
            int r = i;
            for (int b = 0; b < 8; b++) {
                r = (r & 0x80) != 0 ? ((r << 1) ^ (0x09 << 1)) & 0xff : (r << 1) & 0xff;
            }
            CRC7[i] = r >>> 1;
        }
    }

    private FioChecksums() {
    }

    /** fio_crc64 (crc/crc64.c). */
    static long crc64(byte[] b, int off, int len) {
        long crc = 0;
        for (int i = off; i < off + len; i++) {
            crc = CRC64[(int) ((crc ^ b[i]) & 0xff)] ^ (crc >>> 8);
        }
        return crc;
    }

    /** fio_crc32 (crc/crc32.c), unsigned 32 bits. */
    static int crc32(byte[] b, int off, int len) {
        int crc = 0;
        for (int i = off; i < off + len; i++) {
            crc = (crc << 8) ^ CRC32[((crc >>> 24) ^ b[i]) & 0xff];
        }
        return crc;
    }

    /** fio_crc16 (crc/crc16.c), 16 bits. */
    static int crc16(byte[] b, int off, int len) {
        int crc = 0;
        for (int i = off; i < off + len; i++) {
            crc = (crc >>> 8) ^ CRC16[(crc ^ b[i]) & 0xff];
        }
        return crc & 0xffff;
    }

    /** fio_crc7 (crc/crc7.c), 7 bits. */
    static int crc7(byte[] b, int off, int len) {
        int crc = 0;
        for (int i = off; i < off + len; i++) {
            crc = CRC7[((crc << 1) ^ b[i]) & 0xff];
        }
        return crc;
    }

    /** Entry {@code i} of a table, for comparison with fio's source in tests: kind 64, 32, 16 or 7. */
    static long tableEntry(int kind, int i) {
        return switch (kind) {
            case 64 -> CRC64[i];
            case 32 -> CRC32[i] & 0xffffffffL;
            case 16 -> CRC16[i];
            default -> CRC7[i];
        };
    }

    private static final int P1 = (int) 2654435761L;
    private static final int P2 = (int) 2246822519L;
    private static final int P3 = (int) 3266489917L;
    private static final int P4 = 668265263;
    private static final int P5 = 374761393;

    /** XXH32 of the range with {@code seed} (crc/xxhash.c; verify.c uses seed 1), unsigned 32 bits. */
    static int xxh32(byte[] b, int off, int len, int seed) {
        int p = off;
        int end = off + len;
        int h;
        if (len >= 16) {
            int v1 = seed + P1 + P2;
            int v2 = seed + P2;
            int v3 = seed;
            int v4 = seed - P1;
            for (; p <= end - 16; p += 16) {
                v1 = Integer.rotateLeft(v1 + le32(b, p) * P2, 13) * P1;
                v2 = Integer.rotateLeft(v2 + le32(b, p + 4) * P2, 13) * P1;
                v3 = Integer.rotateLeft(v3 + le32(b, p + 8) * P2, 13) * P1;
                v4 = Integer.rotateLeft(v4 + le32(b, p + 12) * P2, 13) * P1;
            }
            h = Integer.rotateLeft(v1, 1) + Integer.rotateLeft(v2, 7) + Integer.rotateLeft(v3, 12)
                    + Integer.rotateLeft(v4, 18);
        } else {
            h = seed + P5;
        }
        h += len;
        for (; p + 4 <= end; p += 4) {
            h = Integer.rotateLeft(h + le32(b, p) * P3, 17) * P4;
        }
        for (; p < end; p++) {
            h = Integer.rotateLeft(h + (b[p] & 0xff) * P5, 11) * P1;
        }
        h ^= h >>> 15;
        h *= P2;
        h ^= h >>> 13;
        h *= P3;
        h ^= h >>> 16;
        return h;
    }

    private static int le32(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }
}
