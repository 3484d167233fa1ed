package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.List;

import static io.rdmablock.rdma.fabric.auth.DhchapMessages.*;

/**
 * The host side of one DH-HMAC-CHAP transaction on one queue (NVMe Base 2.0 section 8.13.5; Linux
 * {@code drivers/nvme/host/auth.c} {@code nvme_queue_auth_work}), transport independent: the caller sends what
 * {@link #negotiate} returns with Authentication Send, reads the controller's message with Authentication Receive
 * (allocation length {@link DhchapMessages#MAX_LENGTH}), hands it to {@link #onChallenge}, sends the returned reply,
 * reads again and hands that to {@link #onSuccess1}; a non-null result of that is sent too (Success2 when
 * bidirectional, or Failure2). Then {@link #state} is {@link State#AUTHENTICATED} or {@link State#FAILED}.
 *
 * <pre>
 *   START --negotiate()--> AWAIT_CHALLENGE --onChallenge()--> AWAIT_SUCCESS1 --onSuccess1()--> AUTHENTICATED
 *                                 \ Failure1 / bad challenge          \ Failure1 / wrong R2 (bidirectional)
 *                                  +-------------------------------------+--> FAILED
 * </pre>
 *
 * The host offers every hash (SHA-256, -384, -512) and every DH group (null, ffdhe2048 .. 8192), as Linux does; with a
 * controller secret it asks for bidirectional authentication (CVALID 1, S2 != 0) and checks the controller's response
 * R2 ({@link DhchapCrypto}). A failure it detects answers Failure2 with the explanation; one the controller reports
 * (Failure1) is recorded as {@link #failedByController}. Not thread-safe: one queue's connect path drives it.
 */
public final class DhchapHost {
    /** Where the transaction stands. */
    public enum State {
        /** Nothing sent yet. */
        START,
        /** Negotiate sent; the next Authentication Receive should bring the Challenge. */
        AWAIT_CHALLENGE,
        /** Reply sent; the next Authentication Receive should bring Success1. */
        AWAIT_SUCCESS1,
        /** The controller accepted the host (and, bidirectional, the host the controller). */
        AUTHENTICATED,
        /** Failed; see {@link #failureExplanation}. */
        FAILED
    }

    private final String hostnqn;
    private final String subnqn;
    private final DhchapSecret hostSecret;
    private final DhchapSecret ctrlSecret;
    private final int tid;
    private final SecureRandom random;
    private State state = State.START;
    private DhchapHash hash;
    private DhGroup group;
    private byte[] sessionKey;
    private byte[] c2;
    private int s2;
    private int failure;
    private boolean byController;
    private String detail;

    /**
     * @param hostSecret the host's secret (required)
     * @param ctrlSecret the controller's secret for bidirectional authentication, or null
     * @param tid        the transaction identifier T_ID (0..65535), distinct per queue of an association
     */
    public DhchapHost(String hostnqn, String subnqn, DhchapSecret hostSecret, DhchapSecret ctrlSecret, int tid,
                      SecureRandom random) {
        if (hostSecret == null) {
            throw new IllegalArgumentException("DH-HMAC-CHAP host needs a host secret");
        }
        this.hostnqn = hostnqn;
        this.subnqn = subnqn;
        this.hostSecret = hostSecret;
        this.ctrlSecret = ctrlSecret;
        this.tid = tid & 0xFFFF;
        this.random = random;
    }

    public State state() {
        return state;
    }

    /** The reason code explanation of a failure ({@link DhchapMessages#FAILED} ...), 0 before one. */
    public int failureExplanation() {
        return failure;
    }

    /** True when the controller reported the failure (AUTH_Failure1), false when the host detected it. */
    public boolean failedByController() {
        return byController;
    }

    /** What failed, for logs and errors (never a key). */
    public String failureDetail() {
        return detail;
    }

    /** The hash the controller chose, or null before the Challenge. */
    public DhchapHash hash() {
        return hash;
    }

    /** The DH group the controller chose, or null before the Challenge. */
    public DhGroup group() {
        return group;
    }

    /** AUTH_Negotiate (72 bytes): START to AWAIT_CHALLENGE. */
    public byte[] negotiate() {
        expect(State.START);
        state = State.AWAIT_CHALLENGE;
        return DhchapMessages.negotiate(tid, List.of(DhchapHash.values()), List.of(DhGroup.values()));
    }

    /**
     * The controller's answer to Negotiate (the data of Authentication Receive, zero padding allowed).
     *
     * @return the Reply to send, or a Failure2 to send, or null (the controller sent Failure1; nothing to send)
     */
    public byte[] onChallenge(byte[] m) {
        expect(State.AWAIT_CHALLENGE);
        if (isFailure1(m)) {
            return null;
        }
        if (type(m) != TYPE_DHCHAP || id(m) != ID_CHALLENGE || m.length < HEADER_LENGTH) {
            return fail(INCORRECT_MESSAGE, "expected DH-HMAC-CHAP_Challenge, got type=" + type(m) + ", id=" + id(m));
        }
        if (tid(m) != tid) {
            return fail(INCORRECT_MESSAGE, "challenge t_id=" + tid(m) + ", expected=" + tid);
        }
        int hl = u8(m, HL_OFFSET);
        hash = DhchapHash.byId(u8(m, HASHID_OFFSET));
        if (hash == null || hash.lengthBytes != hl) {
            return fail(HASH_UNUSABLE, "challenge hashid=" + u8(m, HASHID_OFFSET) + ", hl=" + hl);
        }
        group = DhGroup.byId(u8(m, DHGID_OFFSET));
        if (group == null) {
            return fail(DHGROUP_UNUSABLE, "challenge dhgid=" + u8(m, DHGID_OFFSET));
        }
        int dhvlen = u16(m, DHVLEN_OFFSET);
        if (dhvlen != group.valueLengthBytes()) {
            return fail(group == DhGroup.NULL ? INCORRECT_PAYLOAD : DHGROUP_UNUSABLE, "challenge dhvlen=" + dhvlen
                    + ", expected=" + group.valueLengthBytes() + " (" + group.displayName + ")");
        }
        if (m.length < HEADER_LENGTH + hl + dhvlen) {
            return fail(INCORRECT_PAYLOAD, "challenge lengthBytes=" + m.length + ", min=" + (HEADER_LENGTH + hl + dhvlen));
        }
        int s1 = u32(m, SEQNUM_OFFSET);
        byte[] c1 = slice(m, HEADER_LENGTH, hl);
        byte[] hostValue = null;
        if (group != DhGroup.NULL) {
            KeyPair kp = DhchapCrypto.generateKeyPair(group, random);
            hostValue = DhchapCrypto.publicValue(group, kp);
            sessionKey = DhchapCrypto.sharedSecret(group, kp, slice(m, HEADER_LENGTH + hl, dhvlen));
            if (sessionKey == null) {
                return fail(INCORRECT_PAYLOAD, "controller DH value out of range (" + group.displayName + ")");
            }
        }
        byte[] r1 = DhchapCrypto.hostResponse(hash, hostSecret.transformedKey(hostnqn),
                DhchapCrypto.augment(hash, sessionKey, c1), s1, tid, hostnqn, subnqn);
        if (ctrlSecret != null) {
            c2 = new byte[hl];
            random.nextBytes(c2);
            do {
                s2 = random.nextInt();
            } while (s2 == 0);
        }
        state = State.AWAIT_SUCCESS1;
        return DhchapMessages.reply(tid, hl, r1, c2, s2, hostValue);
    }

    /**
     * The controller's answer to Reply.
     *
     * @return Success2 to send (bidirectional, R2 verified), or Failure2 to send, or null (unidirectional success,
     *         or the controller sent Failure1)
     */
    public byte[] onSuccess1(byte[] m) {
        expect(State.AWAIT_SUCCESS1);
        if (isFailure1(m)) {
            return null;
        }
        if (type(m) != TYPE_DHCHAP || id(m) != ID_SUCCESS1 || m.length < HEADER_LENGTH) {
            return fail(INCORRECT_MESSAGE, "expected DH-HMAC-CHAP_Success1, got type=" + type(m) + ", id=" + id(m));
        }
        if (tid(m) != tid) {
            return fail(INCORRECT_MESSAGE, "success1 t_id=" + tid(m) + ", expected=" + tid);
        }
        int hl = u8(m, HL_OFFSET);
        if (hl != hash.lengthBytes) {
            return fail(HASH_UNUSABLE, "success1 hl=" + hl + ", expected=" + hash.lengthBytes);
        }
        if (ctrlSecret == null) {
            state = State.AUTHENTICATED;
            return null;
        }
        if (u8(m, VALID_OFFSET) != 1 || m.length < HEADER_LENGTH + hl) {
            return fail(FAILED, "controller did not answer the host's challenge (rvalid=" + u8(m, VALID_OFFSET) + ")");
        }
        byte[] expected = DhchapCrypto.controllerResponse(hash, ctrlSecret.transformedKey(subnqn),
                DhchapCrypto.augment(hash, sessionKey, c2), s2, tid, subnqn, hostnqn);
        if (!DhchapCrypto.same(expected, slice(m, HEADER_LENGTH, hl))) {
            return fail(FAILED, "controller response R2 mismatch (wrong controller secret)");
        }
        state = State.AUTHENTICATED;
        return DhchapMessages.success2(tid);
    }

    private boolean isFailure1(byte[] m) {
        if (type(m) == TYPE_COMMON && id(m) == ID_FAILURE1 && m.length >= FAILURE_LENGTH) {
            state = State.FAILED;
            failure = u8(m, EXPLANATION_OFFSET);
            byController = true;
            detail = "controller sent AUTH_Failure1: reason " + u8(m, REASON_OFFSET) + ", explanation "
                    + explanation(failure);
            return true;
        }
        return false;
    }

    private byte[] fail(int explanation, String why) {
        state = State.FAILED;
        failure = explanation;
        detail = why + " (host sends AUTH_Failure2: " + DhchapMessages.explanation(explanation) + ")";
        return DhchapMessages.failure(ID_FAILURE2, tid, explanation);
    }

    private void expect(State s) {
        if (state != s) {
            throw new IllegalStateException("DH-HMAC-CHAP host: state=" + state + ", expected=" + s);
        }
    }
}
