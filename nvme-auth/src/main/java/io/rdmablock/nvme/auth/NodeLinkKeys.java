package io.rdmablock.nvme.auth;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * The DH-HMAC-CHAP secrets of node-to-node associations (replication, resync, verify, peer leases;
 * docs/authentication.md, "Node identities"). Each storage node has a <em>node key</em>, 32 random bytes the
 * management plane makes at registration and can rotate; the secrets of the link from the node with host NQN
 * {@code A} to the node with key {@code K_B} are derived from the <em>target's</em> key:
 *
 * <pre>
 *   host secret       = DHHC-1:01:  HMAC-SHA256(K_B, "rdmablock node link host" || 00h || A)   (32 bytes)
 *   controller secret = DHHC-1:01:  HMAC-SHA256(K_B, "rdmablock node link ctrl" || 00h || A)   (32 bytes)
 * </pre>
 *
 * So node B, knowing only its own key, can check any node A that connects to it (and prove itself back,
 * bidirectional), while A is handed by the management plane just the secrets of its own links, never another node's
 * key: a node that leaks its secrets can impersonate no other node toward a third. The HMAC's input carries no
 * subsystem: one pair of secrets serves every volume the two nodes share (the DH-HMAC-CHAP transformation binds the
 * host secret to A and the controller secret to the subsystem NQN, NVMe Base 2.0 section 8.13.5.8).
 *
 * <p>Stateless and thread-safe.
 */
public final class NodeLinkKeys {
    /** Bytes of a node key. */
    public static final int KEY_BYTES = 32;
    private static final byte[] HOST_LABEL = "rdmablock node link host\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CTRL_LABEL = "rdmablock node link ctrl\0".getBytes(StandardCharsets.US_ASCII);

    private NodeLinkKeys() {
    }

    /** A new random node key of {@value #KEY_BYTES} bytes. */
    public static byte[] newKey(SecureRandom random) {
        byte[] k = new byte[KEY_BYTES];
        random.nextBytes(k);
        return k;
    }

    /**
     * The host secret node {@code hostNqn} proves when it connects to the node whose key is {@code targetKey}.
     *
     * @throws IllegalArgumentException when the key is not {@value #KEY_BYTES} bytes or the NQN is null or empty
     */
    public static DhchapSecret hostSecret(byte[] targetKey, String hostNqn) {
        return DhchapSecret.of(1, derive(targetKey, HOST_LABEL, hostNqn));
    }

    /** The controller secret the node with {@code targetKey} proves back to node {@code hostNqn} (bidirectional). */
    public static DhchapSecret ctrlSecret(byte[] targetKey, String hostNqn) {
        return DhchapSecret.of(1, derive(targetKey, CTRL_LABEL, hostNqn));
    }

    private static byte[] derive(byte[] key, byte[] label, String hostNqn) {
        if (key == null || key.length != KEY_BYTES) {
            throw new IllegalArgumentException("invalid node key: length=" + (key == null ? -1 : key.length)
                    + ", expected " + KEY_BYTES);
        }
        if (hostNqn == null || hostNqn.isEmpty()) {
            throw new IllegalArgumentException("invalid hostNqn: empty");
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(label);
            return mac.doFinal(hostNqn.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
