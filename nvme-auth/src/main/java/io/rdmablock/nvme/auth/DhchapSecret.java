package io.rdmablock.nvme.auth;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.CRC32;

/**
 * A DH-HMAC-CHAP secret in the text form nvme-cli {@code gen-dhchap-key} writes and Linux parses
 * ({@code drivers/nvme/common/auth.c} {@code nvme_auth_parse_key}, {@code nvme_auth_extract_key}; NVMe Base 2.0
 * section 8.13.5.8 "Secret representation"):
 *
 * <pre>
 *   DHHC-1:hh:BASE64(key || CRC-32(key) little-endian):
 *          hh  00 = used as is, 01 = SHA-256, 02 = SHA-384, 03 = SHA-512 (transformation hash, {@link DhchapHash})
 *          key 32, 48 or 64 bytes (so 36, 52 or 68 bytes under the base64, standard alphabet with padding)
 *          CRC-32 the IEEE / zlib polynomial ({@link CRC32}), 4 bytes little-endian
 * </pre>
 *
 * The trailing colon is optional on input and always written. With hh 01..03 the key length must be that hash's
 * length (32, 48, 64), as {@code gen-dhchap-key} makes them; with hh 00 any of the three lengths.
 *
 * <p>The key used in the HMAC of a response is the <em>transformed</em> secret ({@link #transformedKey}): for hh 00 the
 * key itself, otherwise {@code HMAC-hh(key, NQN || "NVMe-over-Fabrics")} (Linux {@code nvme_auth_transform_key}), where
 * NQN is the host NQN for a host secret and the subsystem NQN for a controller secret (no terminating NUL).
 *
 * <p>Immutable. {@link #toString} never shows the key.
 */
public final class DhchapSecret {
    /** The prefix of the text form. */
    public static final String PREFIX = "DHHC-1:";
    /** The 17 ASCII characters appended to the NQN in the transformation. */
    static final byte[] TRANSFORM_SUFFIX = "NVMe-over-Fabrics".getBytes(StandardCharsets.US_ASCII);

    private final int hh;
    private final byte[] key;

    private DhchapSecret(int hh, byte[] key) {
        this.hh = hh;
        this.key = key;
    }

    /**
     * A secret from its parts.
     *
     * @param hh  0 (no transformation) or a {@link DhchapHash#id}
     * @param key 32, 48 or 64 bytes (copied); with hh != 0, exactly that hash's length
     * @throws IllegalArgumentException for another hh or length
     */
    public static DhchapSecret of(int hh, byte[] key) {
        checkParts(hh, key.length);
        return new DhchapSecret(hh, key.clone());
    }

    /** A random secret, as {@code nvme gen-dhchap-key --hmac=hh --key-length=keyLengthBytes} makes. */
    public static DhchapSecret generate(int hh, int keyLengthBytes, SecureRandom random) {
        checkParts(hh, keyLengthBytes);
        byte[] k = new byte[keyLengthBytes];
        random.nextBytes(k);
        return new DhchapSecret(hh, k);
    }

    /**
     * Parses {@code DHHC-1:hh:base64:}.
     *
     * @throws IllegalArgumentException naming what is wrong (prefix, hh, base64, length, CRC); the message never
     *                                  contains the key
     */
    public static DhchapSecret parse(String text) {
        if (text == null || !text.startsWith(PREFIX)) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: must start with " + PREFIX);
        }
        String rest = text.substring(PREFIX.length()).trim();
        if (rest.length() < 3 || rest.charAt(2) != ':') {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: expected DHHC-1:hh:<base64>: with hh "
                    + "two decimal digits (00, 01, 02 or 03)");
        }
        int hh;
        try {
            hh = Integer.parseInt(rest.substring(0, 2));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: hh=" + rest.substring(0, 2)
                    + ", supported=00, 01, 02, 03");
        }
        String b64 = rest.substring(3);
        if (b64.endsWith(":")) {
            b64 = b64.substring(0, b64.length() - 1);
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(b64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: not base64 after DHHC-1:" + rest.substring(0, 2)
                    + ": (" + e.getMessage() + ")");
        }
        if (raw.length != 36 && raw.length != 52 && raw.length != 68) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: decoded lengthBytes=" + raw.length
                    + ", expected 36, 52 or 68 (a 32, 48 or 64-byte key and its 4-byte CRC-32)");
        }
        int keyLength = raw.length - 4;
        int crc = (raw[keyLength] & 0xFF) | (raw[keyLength + 1] & 0xFF) << 8 | (raw[keyLength + 2] & 0xFF) << 16
                | (raw[keyLength + 3] & 0xFF) << 24;
        byte[] k = Arrays.copyOf(raw, keyLength);
        Arrays.fill(raw, (byte) 0);
        if (crc != crc32(k)) {
            Arrays.fill(k, (byte) 0);
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: CRC-32 mismatch (the key was mistyped or "
                    + "truncated)");
        }
        checkParts(hh, keyLength);
        return new DhchapSecret(hh, k);
    }

    private static void checkParts(int hh, int keyLength) {
        if (hh != 0 && DhchapHash.byId(hh) == null) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: hh=" + hh + ", supported=0 (none), "
                    + "1 (SHA-256), 2 (SHA-384), 3 (SHA-512)");
        }
        if (keyLength != 32 && keyLength != 48 && keyLength != 64) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: keyLengthBytes=" + keyLength
                    + ", supported=32, 48, 64");
        }
        if (hh != 0 && DhchapHash.byId(hh).lengthBytes != keyLength) {
            throw new IllegalArgumentException("invalid DH-HMAC-CHAP secret: hh=0" + hh + " ("
                    + DhchapHash.byId(hh).displayName() + ") takes a " + DhchapHash.byId(hh).lengthBytes
                    + "-byte key, keyLengthBytes=" + keyLength);
        }
    }

    static int crc32(byte[] k) {
        CRC32 c = new CRC32();
        c.update(k);
        return (int) c.getValue();
    }

    /** The transformation hash identifier hh (0 = none). */
    public int hh() {
        return hh;
    }

    /** Length of the key in bytes (32, 48 or 64). */
    public int keyLengthBytes() {
        return key.length;
    }

    /**
     * The key of the response HMAC: the key itself for hh 00, else {@code HMAC-hh(key, nqn || "NVMe-over-Fabrics")}
     * ({@link DhchapHash#lengthBytes} of hh). A new array each call.
     *
     * @param nqn the host NQN (host secret) or subsystem NQN (controller secret), UTF-8, no NUL
     */
    public byte[] transformedKey(String nqn) {
        if (hh == 0) {
            return key.clone();
        }
        DhchapHash h = DhchapHash.byId(hh);
        return h.hmac(key, nqn.getBytes(StandardCharsets.UTF_8), TRANSFORM_SUFFIX);
    }

    /** The text form, {@code DHHC-1:hh:base64:} (contains the key: keep it out of logs). */
    public String encoded() {
        byte[] raw = Arrays.copyOf(key, key.length + 4);
        int crc = crc32(key);
        for (int i = 0; i < 4; i++) {
            raw[key.length + i] = (byte) (crc >>> (8 * i));
        }
        String s = PREFIX + String.format("%02d", hh) + ":" + Base64.getEncoder().encodeToString(raw) + ":";
        Arrays.fill(raw, (byte) 0);
        return s;
    }

    /** True when both hold the same hh and key (constant time in the key). */
    public boolean sameAs(DhchapSecret other) {
        return other != null && hh == other.hh && java.security.MessageDigest.isEqual(key, other.key);
    }

    @Override
    public String toString() {
        return PREFIX + String.format("%02d", hh) + ":<" + key.length + "-byte key>:";
    }
}
