package io.rdmablock.nvme.auth;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The hash functions of DH-HMAC-CHAP, by the identifier the wire carries (NVMe Base 2.0 section 8.13.5.2, Figure 448
 * "DH-HMAC-CHAP hash function identifiers"; Linux {@code include/linux/nvme.h} {@code NVME_AUTH_HASH_*}): the HASHID of
 * AUTH_Negotiate's identifier list and of DH-HMAC-CHAP_Challenge, and the {@code hh} of a {@code DHHC-1:hh:} secret
 * (where 00 means "no transformation", not a hash). The length in bytes is HL, the length of every challenge and
 * response of a transaction using it.
 */
public enum DhchapHash {
    SHA_256(0x01, 32, "HmacSHA256", "SHA-256"),
    SHA_384(0x02, 48, "HmacSHA384", "SHA-384"),
    SHA_512(0x03, 64, "HmacSHA512", "SHA-512");

    /** Identifier on the wire (1 byte). */
    public final int id;
    /** Digest length HL in bytes. */
    public final int lengthBytes;
    /** JCA name of the HMAC ({@link Mac}). */
    private final String hmacAlgorithm;
    /** JCA name of the digest ({@link MessageDigest}). */
    private final String digestAlgorithm;

    DhchapHash(int id, int lengthBytes, String hmacAlgorithm, String digestAlgorithm) {
        this.id = id;
        this.lengthBytes = lengthBytes;
        this.hmacAlgorithm = hmacAlgorithm;
        this.digestAlgorithm = digestAlgorithm;
    }

    /** The hash with wire identifier {@code id}, or null when it names none (0, FFh or reserved). */
    public static DhchapHash byId(int id) {
        for (DhchapHash h : values()) {
            if (h.id == id) {
                return h;
            }
        }
        return null;
    }

    /** The hash named {@code name} ({@code sha256}, {@code SHA-256}, {@code hmac(sha256)}; case-insensitive). */
    public static DhchapHash byName(String name) {
        String n = name.toLowerCase(java.util.Locale.ROOT).replace("-", "").replace("hmac(", "").replace(")", "");
        return switch (n) {
            case "sha256" -> SHA_256;
            case "sha384" -> SHA_384;
            case "sha512" -> SHA_512;
            default -> throw new IllegalArgumentException("invalid DH-HMAC-CHAP hash: name=" + name
                    + ", supported=sha256, sha384, sha512");
        };
    }

    /** The lowercase name nvme-cli and Linux use ({@code sha256}). */
    public String displayName() {
        return digestAlgorithm.toLowerCase(java.util.Locale.ROOT).replace("-", "");
    }

    /** HMAC with this hash of the concatenation of {@code parts} under {@code key}. */
    public byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(hmacAlgorithm);
            mac.init(new SecretKeySpec(key, hmacAlgorithm));
            for (byte[] p : parts) {
                mac.update(p);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(hmacAlgorithm + " unavailable: " + e, e);
        }
    }

    /** This hash of {@code data}. */
    public byte[] digest(byte[] data) {
        try {
            return MessageDigest.getInstance(digestAlgorithm).digest(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(digestAlgorithm + " unavailable: " + e, e);
        }
    }
}
