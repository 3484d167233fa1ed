package io.rdmablock.mgmt.api.store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Encryption at rest of the secrets a {@link MetadataStore} keeps: the hosts' DH-HMAC-CHAP secrets
 * ({@link HostRecord#dhchapSecret()}, {@link HostRecord#dhchapCtrlSecret()}) and the node keys
 * ({@link NodeRecord#nodeKey()}). Each value is sealed with AES-256-GCM (128-bit tag) under the key of the
 * {@code --secret-key-file} (32 random bytes, base64, e.g. {@code head -c 32 /dev/urandom | base64}), a fresh random
 * 96-bit nonce per value, and as associated data the record's kind, name and field (e.g.
 * {@code host/nqn.2014-08.org.example:h1/dhchapSecret}), so a value copied to another record or field does not open.
 * The stored text is {@value #PREFIX} + base64(nonce | ciphertext | tag); any other text is a value written in clear
 * (an older version, or no key file) and is read as it is; the next write of its record seals it.
 *
 * <p>{@link #NONE} (no key file) stores values in clear, as before, and refuses to read a sealed one. Thread-safe.
 */
public final class SecretCipher {
    private static final Logger LOG = LoggerFactory.getLogger(SecretCipher.class);
    /** Start of a sealed value. */
    public static final String PREFIX = "enc:v1:";
    /** Key length, bytes (AES-256). */
    public static final int KEY_BYTES = 32;
    /** Nonce length, bytes. */
    static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** No key: values are stored in clear; a sealed value cannot be read. */
    public static final SecretCipher NONE = new SecretCipher(null, null);

    private final SecretKeySpec key;
    private final Path keyFile;

    private SecretCipher(byte[] key, Path keyFile) {
        this.key = key == null ? null : new SecretKeySpec(key, "AES");
        this.keyFile = keyFile;
    }

    /**
     * Reads a key file: base64 (standard alphabet, padding optional, surrounding white space ignored) of exactly
     * {@value #KEY_BYTES} bytes.
     *
     * @throws IllegalArgumentException naming {@code --secret-key-file} and the path when the file is missing or
     *                                  unreadable, not base64, or not 32 bytes
     */
    public static SecretCipher fromKeyFile(Path file) {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("invalid --secret-key-file " + file + ": cannot read it (" + e
                    + "); make one with: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE");
        }
        byte[] key;
        try {
            key = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid --secret-key-file " + file + ": not base64 ("
                    + e.getMessage() + "); it must hold base64 of 32 random bytes: head -c 32 /dev/urandom | base64");
        }
        if (key.length != KEY_BYTES) {
            throw new IllegalArgumentException("invalid --secret-key-file " + file + ": " + key.length
                    + " bytes after base64 decoding, must be " + KEY_BYTES
                    + " (head -c 32 /dev/urandom | base64)");
        }
        try {
            return new SecretCipher(key, file);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /** @return true when values are sealed (a key file was given) */
    public boolean enabled() {
        return key != null;
    }

    /** @return the key file, or null for {@link #NONE} */
    public Path keyFile() {
        return keyFile;
    }

    /** @return true when {@code stored} is a sealed value (starts with {@value #PREFIX}) */
    public static boolean isSealed(String stored) {
        return stored != null && stored.startsWith(PREFIX);
    }

    /**
     * @param context associated data: the record's kind, name and field
     * @param plain   the secret (null stays null)
     * @return the sealed text, or {@code plain} itself when there is no key ({@link #NONE})
     * @throws IllegalStateException when this JVM has no AES/GCM cipher (every standard JDK has it)
     */
    public String seal(String context, String plain) {
        if (plain == null || key == null) {
            return plain;
        }
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            c.updateAAD(context.getBytes(StandardCharsets.UTF_8));
            byte[] sealed = c.doFinal(plain.getBytes(StandardCharsets.UTF_8));
            byte[] out = Arrays.copyOf(nonce, NONCE_BYTES + sealed.length);
            System.arraycopy(sealed, 0, out, NONCE_BYTES, sealed.length);
            return PREFIX + Base64.getEncoder().encodeToString(out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM unavailable in this JVM: " + e, e);
        }
    }

    /**
     * @param context associated data, as given to {@link #seal}
     * @param stored  the stored text (null stays null)
     * @return the secret: {@code stored} itself when it is not sealed (written in clear)
     * @throws MetadataStoreException naming {@code context} and the key file when the value does not open under this
     *                                key (a wrong key file, or an altered value), or when it is sealed and there is no
     *                                key file; never a partly decrypted value
     */
    public String open(String context, String stored) {
        if (!isSealed(stored)) {
            return stored;
        }
        if (key == null) {
            throw new MetadataStoreException("cannot read " + context + ": it is encrypted (" + PREFIX
                    + "...) but no --secret-key-file is configured; give the key file the management servers use", null);
        }
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(stored.substring(PREFIX.length()));
        } catch (IllegalArgumentException e) {
            throw new MetadataStoreException("cannot read " + context + ": its encrypted value is not base64 (corrupt)",
                    e);
        }
        if (raw.length < NONCE_BYTES + TAG_BITS / 8) {
            throw new MetadataStoreException("cannot read " + context + ": its encrypted value is " + raw.length
                    + " bytes, too short (corrupt)", null);
        }
        try {
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, raw, 0, NONCE_BYTES));
            c.updateAAD(context.getBytes(StandardCharsets.UTF_8));
            return new String(c.doFinal(raw, NONCE_BYTES, raw.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (AEADBadTagException e) {
            throw new MetadataStoreException("cannot decrypt " + context + " with the key of --secret-key-file "
                    + keyFile + ": wrong key (not the one it was written with) or the stored value was altered", e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM unavailable in this JVM: " + e, e);
        }
    }

    /** @return {@code record} with its secrets sealed (host and node records; any other record unchanged) */
    Object sealRecord(Object record) {
        return switch (record) {
            case HostRecord h when key != null -> new HostRecord(h.hostNqn(),
                    seal(context("host", h.hostNqn(), "dhchapSecret"), h.dhchapSecret()),
                    seal(context("host", h.hostNqn(), "dhchapCtrlSecret"), h.dhchapCtrlSecret()), h.updatedAtMs());
            case NodeRecord n when key != null && n.nodeKey() != null ->
                    n.withNodeKey(seal(context("node", n.nodeId(), "nodeKey"), n.nodeKey()));
            default -> record;
        };
    }

    /**
     * @return {@code record} with its secrets opened
     * @throws MetadataStoreException as {@link #open}
     */
    <T> T openRecord(T record) {
        Object out = switch (record) {
            case HostRecord h -> new HostRecord(h.hostNqn(),
                    open(context("host", h.hostNqn(), "dhchapSecret"), h.dhchapSecret()),
                    open(context("host", h.hostNqn(), "dhchapCtrlSecret"), h.dhchapCtrlSecret()), h.updatedAtMs());
            case NodeRecord n when n.nodeKey() != null ->
                    n.withNodeKey(open(context("node", n.nodeId(), "nodeKey"), n.nodeKey()));
            default -> record;
        };
        @SuppressWarnings("unchecked")
        T t = (T) out;
        return t;
    }

    /**
     * Logs one WARN when any of {@code stored} (records as stored, not opened) holds a secret in clear: without a key
     * file that they are not encrypted, with one that they will be at their next write.
     */
    static void warnClear(String where, SecretCipher secrets, Stream<?> stored) {
        long clear = stored.filter(SecretCipher::holdsClearSecret).count();
        if (clear > 0) {
            LOG.warn("{}: {} host or node records hold secrets (DH-HMAC-CHAP secrets, node keys) in clear; {}", where,
                    clear, secrets.enabled() ? "they are encrypted with --secret-key-file " + secrets.keyFile()
                            + " at their next write"
                            : "not encrypted at rest: give --secret-key-file to encrypt them (docs/authentication.md)");
        }
    }

    /** @return true when the record holds a secret stored in clear */
    static boolean holdsClearSecret(Object record) {
        return switch (record) {
            case HostRecord h -> !isSealed(h.dhchapSecret())
                    || (h.dhchapCtrlSecret() != null && !isSealed(h.dhchapCtrlSecret()));
            case NodeRecord n -> n.nodeKey() != null && !isSealed(n.nodeKey());
            default -> false;
        };
    }

    private static String context(String kind, String name, String field) {
        return kind + "/" + name + "/" + field;
    }

    @Override
    public String toString() { // never the key
        return key == null ? "SecretCipher[none]" : "SecretCipher[keyFile=" + keyFile + "]";
    }
}
