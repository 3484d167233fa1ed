package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import javax.crypto.KeyAgreement;
import javax.crypto.interfaces.DHPublicKey;
import javax.crypto.spec.DHParameterSpec;
import javax.crypto.spec.DHPublicKeySpec;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * The computations of DH-HMAC-CHAP (NVMe Base 2.0 section 8.13.5.3-8.13.5.5), in the byte order of Linux
 * {@code drivers/nvme/host/auth.c} ({@code nvme_auth_dhchap_setup_host_response}, {@code _ctrl_response}) and
 * {@code drivers/nvme/common/auth.c} ({@code nvme_auth_augmented_challenge}):
 *
 * <pre>
 *   host response       R1 = HMAC(Kh', Ca1 || LE32(S1) || LE16(T_ID) || 00h || "HostHost"   || NQNh || 00h || NQNc)
 *   controller response R2 = HMAC(Kc', Ca2 || LE32(S2) || LE16(T_ID) || 00h || "Controller" || NQNc || 00h || NQNh)
 *   augmented challenge Ca = HMAC(H(g^xy mod p), C)   with a DH group;   Ca = C with the NULL group
 * </pre>
 *
 * HMAC and H use the transaction's hash; Kh', Kc' are {@link DhchapSecret#transformedKey}; g^xy mod p is the shared
 * value as a big-endian integer zero-padded to the modulus length. Stateless.
 */
final class DhchapCrypto {
    private static final byte[] HOST_HOST = "HostHost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTROLLER = "Controller".getBytes(StandardCharsets.US_ASCII);

    private DhchapCrypto() {
    }

    static byte[] hmac(DhchapHash h, byte[] key, byte[]... parts) {
        return h.hmac(key, parts);
    }

    static byte[] digest(DhchapHash h, byte[] data) {
        return h.digest(data);
    }

    /** Ca = HMAC(H(sessionKey), challenge), or the challenge itself when {@code sessionKey} is null (NULL group). */
    static byte[] augment(DhchapHash h, byte[] sessionKey, byte[] challenge) {
        if (sessionKey == null) {
            return challenge;
        }
        return hmac(h, digest(h, sessionKey), challenge);
    }

    /** R1, the host's response to challenge C1 (already augmented). */
    static byte[] hostResponse(DhchapHash h, byte[] hostKey, byte[] challenge, int seqnum, int tid, String hostnqn,
                               String subnqn) {
        return response(h, hostKey, challenge, seqnum, tid, HOST_HOST, hostnqn, subnqn);
    }

    /** R2, the controller's response to challenge C2 (already augmented). */
    static byte[] controllerResponse(DhchapHash h, byte[] ctrlKey, byte[] challenge, int seqnum, int tid,
                                     String subnqn, String hostnqn) {
        return response(h, ctrlKey, challenge, seqnum, tid, CONTROLLER, subnqn, hostnqn);
    }

    private static byte[] response(DhchapHash h, byte[] key, byte[] challenge, int seqnum, int tid, byte[] label,
                                   String firstNqn, String secondNqn) {
        byte[] seq = {(byte) seqnum, (byte) (seqnum >>> 8), (byte) (seqnum >>> 16), (byte) (seqnum >>> 24)};
        byte[] t = {(byte) tid, (byte) (tid >>> 8)};
        byte[] zero = {0};
        return hmac(h, key, challenge, seq, t, zero, label, firstNqn.getBytes(StandardCharsets.UTF_8), zero,
                secondNqn.getBytes(StandardCharsets.UTF_8));
    }

    /** A fresh DH key pair in {@code group} (not {@link DhGroup#NULL}), private exponent of the RFC 7919 size. */
    static KeyPair generateKeyPair(DhGroup group, SecureRandom random) {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("DH");
            g.initialize(new DHParameterSpec(group.prime, DhGroup.generator(), group.privateExponentBits), random);
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("DH key generation failed: group=" + group.displayName + ": " + e, e);
        }
    }

    /** The public value of {@code kp} as DHVLEN bytes, big-endian, zero-padded. */
    static byte[] publicValue(DhGroup group, KeyPair kp) {
        return fixed(((DHPublicKey) kp.getPublic()).getY(), group.valueLengthBytes());
    }

    /**
     * g^xy mod p from our key pair and the peer's public value ({@link DhGroup#valueLengthBytes} bytes, big-endian),
     * zero-padded to the modulus length; null when the peer value is not in 2 .. p-2 (RFC 7919 section 5.1).
     */
    static byte[] sharedSecret(DhGroup group, KeyPair kp, byte[] peerValue) {
        BigInteger y = new BigInteger(1, peerValue);
        BigInteger p = group.prime;
        if (y.compareTo(BigInteger.ONE) <= 0 || y.compareTo(p.subtract(BigInteger.ONE)) >= 0) {
            return null;
        }
        try {
            KeyFactory kf = KeyFactory.getInstance("DH");
            var peer = kf.generatePublic(new DHPublicKeySpec(y, p, DhGroup.generator()));
            KeyAgreement ka = KeyAgreement.getInstance("DH");
            ka.init(kp.getPrivate());
            ka.doPhase(peer, true);
            return fixed(new BigInteger(1, ka.generateSecret()), group.valueLengthBytes());
        } catch (GeneralSecurityException e) {
            return null;
        }
    }

    /** {@code v} as exactly {@code length} big-endian bytes (v &lt; 2^(8 length)). */
    static byte[] fixed(BigInteger v, int length) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[length];
        int n = Math.min(b.length, length);
        System.arraycopy(b, b.length - n, out, length - n, n);
        return out;
    }

    /** Constant-time comparison. */
    static boolean same(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
    }
}
