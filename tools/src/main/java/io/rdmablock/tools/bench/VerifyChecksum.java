package io.rdmablock.tools.bench;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.zip.CRC32C;

/**
 * The checksum of one {@code verify=} type, as the bytes fio 3.33 stores in its checksum header ({@code verify.h}
 * {@code struct vhdr_*}; {@code verify.c fio_*}): CRCs and xxhash as little-endian integers of their width (crc7 one
 * byte, crc16 two, crc32/crc32c/xxhash four, crc64 eight), md5 and the sha3 family as their digest bytes, sha1 as
 * fio's five 32-bit words in host (little-endian) order. sha256 and sha512 are the standard digests (32 and 64
 * bytes, JDK {@code MessageDigest}). fio's crc32c ({@code crc32c_sw}) has no final xor: it is the JDK's {@code CRC32C}
 * inverted: fio 3.33 stores its hashing scratch buffer in those fields (its sha256 keeps the
 * low byte of each state word, its sha512 has no final step), so their bytes cannot be fio's. {@code FioChecksumsTest}
 * checks every other type against blocks fio 3.33 wrote. Not thread-safe (one per {@link BlockVerifier}).
 */
final class VerifyChecksum {
    /** Every verify= name accepted, with its type; {@code crc32c-intel} is fio's alias of crc32c. */
    static final String ALLOWED = "md5|crc64|crc32|crc32c|crc32c-intel|crc16|crc7|sha1|sha256|sha512|sha3-224|sha3-256"
            + "|sha3-384|sha3-512|xxhash|meta|pattern|0|none";

    private final JobSpec.Verify kind;
    private final MessageDigest digest;
    private final CRC32C crc32c = new CRC32C();

    VerifyChecksum(JobSpec.Verify kind) {
        this.kind = kind;
        String alg = switch (kind) {
            case MD5 -> "MD5";
            case SHA1 -> "SHA-1";
            case SHA256 -> "SHA-256";
            case SHA512 -> "SHA-512";
            case SHA3_224 -> "SHA3-224";
            case SHA3_256 -> "SHA3-256";
            case SHA3_384 -> "SHA3-384";
            case SHA3_512 -> "SHA3-512";
            default -> null;
        };
        try {
            this.digest = alg == null ? null : MessageDigest.getInstance(alg);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(alg + " not available in this JDK", e);
        }
    }

    /** The verify type of fio's name {@code v}, or null when {@code v} is not one. */
    static JobSpec.Verify parse(String v) {
        return switch (v) {
            case "0", "none", "" -> JobSpec.Verify.NONE;
            case "crc32c", "crc32c-intel" -> JobSpec.Verify.CRC32C;
            case "md5" -> JobSpec.Verify.MD5;
            case "pattern" -> JobSpec.Verify.PATTERN;
            case "meta" -> JobSpec.Verify.META;
            case "crc64" -> JobSpec.Verify.CRC64;
            case "crc32" -> JobSpec.Verify.CRC32;
            case "crc16" -> JobSpec.Verify.CRC16;
            case "crc7" -> JobSpec.Verify.CRC7;
            case "sha1" -> JobSpec.Verify.SHA1;
            case "sha256" -> JobSpec.Verify.SHA256;
            case "sha512" -> JobSpec.Verify.SHA512;
            case "sha3-224" -> JobSpec.Verify.SHA3_224;
            case "sha3-256" -> JobSpec.Verify.SHA3_256;
            case "sha3-384" -> JobSpec.Verify.SHA3_384;
            case "sha3-512" -> JobSpec.Verify.SHA3_512;
            case "xxhash" -> JobSpec.Verify.XXHASH;
            default -> null;
        };
    }

    /** fio's name of a type ({@code sha3-256}, {@code crc32c}). */
    static String name(JobSpec.Verify kind) {
        return kind.name().toLowerCase().replace('_', '-');
    }

    /** Bytes of the checksum of {@code kind}: 0 for none, meta and pattern, at most 64 (sha512, sha3-512). */
    static int length(JobSpec.Verify kind) {
        return switch (kind) {
            case NONE, META, PATTERN -> 0;
            case CRC7 -> 1;
            case CRC16 -> 2;
            case CRC32, CRC32C, XXHASH -> 4;
            case CRC64 -> 8;
            case MD5 -> 16;
            case SHA1 -> 20;
            case SHA3_224 -> 28;
            case SHA256, SHA3_256 -> 32;
            case SHA3_384 -> 48;
            case SHA512, SHA3_512 -> 64;
        };
    }

    /** The checksum of {@code len} bytes of {@code b} from {@code off}, {@link #length} bytes as fio stores them. */
    byte[] compute(byte[] b, int off, int len) {
        byte[] out = new byte[length(kind)];
        switch (kind) {
            case CRC7 -> out[0] = (byte) FioChecksums.crc7(b, off, len);
            case CRC16 -> le(out, FioChecksums.crc16(b, off, len), 2);
            case CRC32 -> le(out, FioChecksums.crc32(b, off, len), 4);
            case XXHASH -> le(out, FioChecksums.xxh32(b, off, len, 1), 4);
            case CRC64 -> le(out, FioChecksums.crc64(b, off, len), 8);
            case CRC32C -> {
                crc32c.reset();
                crc32c.update(b, off, len);
                le(out, ~crc32c.getValue(), 4); // crc32c_sw: init ~0, no final xor
            }
            case NONE, META, PATTERN -> {
            }
            default -> {
                digest.reset();
                digest.update(b, off, len);
                byte[] d = digest.digest();
                if (kind == JobSpec.Verify.SHA1) { // fio's uint32_t sha1[5], host order
                    for (int w = 0; w < 20; w += 4) {
                        for (int i = 0; i < 4; i++) {
                            out[w + i] = d[w + 3 - i];
                        }
                    }
                } else {
                    System.arraycopy(d, 0, out, 0, out.length);
                }
            }
        }
        return out;
    }

    private static void le(byte[] out, long v, int n) {
        for (int i = 0; i < n; i++) {
            out[i] = (byte) (v >>> (8 * i));
        }
    }
}
