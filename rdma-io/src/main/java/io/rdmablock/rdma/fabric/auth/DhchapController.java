package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.List;
import java.util.function.IntPredicate;

import static io.rdmablock.rdma.fabric.auth.DhchapMessages.*;

/**
 * The controller side of DH-HMAC-CHAP on one queue (NVMe Base 2.0 section 8.13.5; Linux
 * {@code drivers/nvme/target/fabrics-cmd-auth.c}), transport independent: {@link #send} takes the data of each
 * Authentication Send, {@link #receive} makes the data of each Authentication Receive.
 *
 * <pre>
 *   NEGOTIATE --send(Negotiate)--> CHALLENGE --receive()=Challenge--> REPLY --send(Reply)--> VERIFY
 *   VERIFY --compute()--> SUCCESS1 | FAILURE1
 *   SUCCESS1 --receive()=Success1--> AUTHENTICATED (unidirectional) | SUCCESS2 --send(Success2)--> AUTHENTICATED
 *   any failure the controller detects --> FAILURE1 --receive()=Failure1--> FAILED;   send(Failure2) --> FAILED
 * </pre>
 *
 * Checks (each a Failure1 with the explanation of Linux nvmet): SC_C 00h else CONCAT_MISMATCH; a DH-HMAC-CHAP protocol
 * descriptor else PROTOCOL_NOT_USABLE; HALEN, DHLEN at most 30 else INCORRECT_PAYLOAD; a common hash
 * (HASH_UNUSABLE) and DH group (DHGROUP_UNUSABLE), the first of the controller's {@link Policy} order the host
 * offers; on every message after the Negotiate, the T_ID of the Negotiate, else INCORRECT_PAYLOAD; a message other than the one expected,
 * INCORRECT_MESSAGE; Reply: HL and DHVLEN those of the Challenge and within the message, else INCORRECT_PAYLOAD, a DH
 * value in range, else DHGROUP_UNUSABLE, R1 correct, else FAILED; then the T_ID
 * claimed for the association ({@code claimTid}, only once R1 proved the secret, so that a peer without it cannot
 * use up T_IDs the host will need), else INCORRECT_PAYLOAD (a replayed transaction); bidirectional (CVALID 1, S2 != 0) without a
 * controller secret, FAILED. An Authentication Receive in a state that has nothing to give answers Failure1 FAILED.
 * A Negotiate while authenticated restarts (re-authentication); {@link #isAuthenticated} stays true until a failure.
 *
 * <p>The DH computations (the Challenge's key pair, in CHALLENGE; the Reply's shared secret and R1 check, in VERIFY;
 * for ffdhe8192 each tens of ms, ffdhe2048 a few) are {@link #compute}: the transport can run it on a worker thread
 * while {@link #computePending} and only then call {@link #receive}; {@link #receive} runs it itself when nobody did.
 * A Negotiate and a Reply are only stored by {@link #send}: nothing costly happens before the host asks for the
 * answer. Not thread-safe: one thread at a time (the queue's poller; {@link #compute} on a worker while the poller
 * leaves the controller alone, the hand-off through the executor ordering them); {@link #isAuthenticated} may be
 * read from any thread.
 */
public final class DhchapController {
    /** Where the transaction stands. */
    public enum State {
        /** Expects AUTH_Negotiate (Authentication Send). */
        NEGOTIATE,
        /** The next Authentication Receive gets the Challenge. */
        CHALLENGE,
        /** Expects the Reply (Authentication Send). */
        REPLY,
        /** The Reply is stored; its check ({@link #compute}) comes before the next Authentication Receive. */
        VERIFY,
        /** The next Authentication Receive gets Success1. */
        SUCCESS1,
        /** Expects Success2 (bidirectional; Authentication Send). */
        SUCCESS2,
        /** The host is authenticated; a Negotiate restarts. */
        AUTHENTICATED,
        /** The next Authentication Receive gets Failure1. */
        FAILURE1,
        /** Failed (Failure1 given, or Failure2 received); terminal. */
        FAILED
    }

    /**
     * What the controller accepts, in its order of preference (the first the host offers is chosen).
     *
     * @param hashes hashes, at least one
     * @param groups DH groups, at least one ({@link DhGroup#NULL} for no DH exchange)
     */
    public record Policy(List<DhchapHash> hashes, List<DhGroup> groups) {
        /** SHA-256, -384, -512; ffdhe2048, 3072, 4096, 6144, 8192, then null. */
        public static final Policy DEFAULT = new Policy(
                List.of(DhchapHash.SHA_256, DhchapHash.SHA_384, DhchapHash.SHA_512),
                List.of(DhGroup.FFDHE2048, DhGroup.FFDHE3072, DhGroup.FFDHE4096, DhGroup.FFDHE6144,
                        DhGroup.FFDHE8192, DhGroup.NULL));

        public Policy {
            hashes = List.copyOf(hashes);
            groups = List.copyOf(groups);
            if (hashes.isEmpty() || groups.isEmpty()) {
                throw new IllegalArgumentException("invalid DH-HMAC-CHAP policy: hashes=" + hashes + ", groups="
                        + groups + ", each needs at least one");
            }
        }
    }

    private final String subnqn;
    private final String hostnqn;
    private final DhchapSecret hostSecret;
    private final DhchapSecret ctrlSecret;
    private final Policy policy;
    private final IntPredicate claimTid;
    private final SecureRandom random;
    private State state = State.NEGOTIATE;
    private volatile boolean authenticated;
    /** VERIFY: the Reply to check. */
    private byte[] pendingReply;
    private int tid = -1;
    private DhchapHash hash;
    private DhGroup group;
    private KeyPair keyPair;
    private byte[] c1;
    private int s1;
    private byte[] c2;
    private int s2;
    private byte[] sessionKey;
    private int failure;
    private String detail;

    /**
     * @param hostSecret the secret the host must prove (required)
     * @param ctrlSecret the controller's own secret for bidirectional authentication, or null
     * @param claimTid   called once the host's R1 proved its secret: true when the T_ID is new to the association
     *                   (then taken), false to refuse the transaction (a replayed T_ID; the transport may refuse
     *                   for its own reasons too, e.g. the queue's qid is taken)
     */
    public DhchapController(String subnqn, String hostnqn, DhchapSecret hostSecret, DhchapSecret ctrlSecret,
                            Policy policy, IntPredicate claimTid, SecureRandom random) {
        if (hostSecret == null) {
            throw new IllegalArgumentException("DH-HMAC-CHAP controller needs the host's secret");
        }
        this.subnqn = subnqn;
        this.hostnqn = hostnqn;
        this.hostSecret = hostSecret;
        this.ctrlSecret = ctrlSecret;
        this.policy = policy;
        this.claimTid = claimTid;
        this.random = random;
    }

    public State state() {
        return state;
    }

    /** True once the host proved its secret (and, bidirectional, sent Success2), until a failure. */
    public boolean isAuthenticated() {
        return authenticated;
    }

    public boolean isFailed() {
        return state == State.FAILED || state == State.FAILURE1;
    }

    /** The reason code explanation of the failure, 0 before one. */
    public int failureExplanation() {
        return failure;
    }

    /** What failed (for the log; never a key), or null. */
    public String failureDetail() {
        return detail;
    }

    public DhchapHash hash() {
        return hash;
    }

    public DhGroup group() {
        return group;
    }

    /** The data of an Authentication Send (exactly TL bytes). */
    public void send(byte[] m) {
        if (state == State.FAILED || state == State.FAILURE1) {
            return; // terminal, or a Failure1 is owed: nothing the host sends changes that
        }
        if (m.length < FAILURE_LENGTH) {
            fail(INCORRECT_PAYLOAD, "message lengthBytes=" + m.length + ", min=" + FAILURE_LENGTH);
            return;
        }
        int type = type(m);
        int id = id(m);
        if (type == TYPE_COMMON && id == ID_NEGOTIATE) {
            negotiate(m);
            return;
        }
        if (type == TYPE_COMMON && id == ID_FAILURE2) {
            authenticated = false;
            state = State.FAILED;
            failure = u8(m, EXPLANATION_OFFSET);
            detail = "host sent AUTH_Failure2: " + explanation(failure);
            return;
        }
        int expected = state == State.REPLY ? ID_REPLY : state == State.SUCCESS2 ? ID_SUCCESS2 : -1;
        if (type != TYPE_DHCHAP || id != expected) {
            fail(INCORRECT_MESSAGE, "message type=" + type + ", id=" + id + " in state " + state);
            return;
        }
        if (tid(m) != tid) {
            fail(INCORRECT_PAYLOAD, "t_id=" + tid(m) + ", expected=" + tid + " (the Negotiate's)");
            return;
        }
        if (id == ID_REPLY) {
            pendingReply = m; // checked by compute(), off the transport's thread when it can
            state = State.VERIFY;
        } else {
            authenticated = true;
            state = State.AUTHENTICATED;
        }
    }

    /**
     * True when {@link #receive} needs a DH computation first ({@link #compute}): the Challenge's key pair (a DH
     * group other than null) or the Reply's check.
     */
    public boolean computePending() {
        return state == State.CHALLENGE && group != DhGroup.NULL && keyPair == null || state == State.VERIFY;
    }

    /**
     * Runs the pending DH computation, if any ({@link #computePending}): generates the Challenge's key pair, or
     * checks the stored Reply (shared secret, R1), leaving SUCCESS1 or FAILURE1. Costs one modular exponentiation
     * (ffdhe2048 about 3 ms, ffdhe8192 about 40 ms of CPU); meant for a worker thread.
     */
    public void compute() {
        if (state == State.CHALLENGE && group != DhGroup.NULL && keyPair == null) {
            keyPair = DhchapCrypto.generateKeyPair(group, random);
        } else if (state == State.VERIFY) {
            byte[] m = pendingReply;
            pendingReply = null;
            reply(m);
        }
    }

    /**
     * Refuses the transaction as the transport decided (e.g. a rate limit): the next {@link #receive} gives Failure1
     * with {@code explanation}; {@code why} is for the log.
     */
    public void refuse(int explanation, String why) {
        pendingReply = null;
        fail(explanation, why);
    }

    /** The data of an Authentication Receive: the Challenge, Success1 or Failure1 this state owes. */
    public byte[] receive() {
        if (computePending()) {
            compute(); // nobody ran it off this thread
        }
        switch (state) {
            case CHALLENGE -> {
                c1 = new byte[hash.lengthBytes];
                random.nextBytes(c1);
                s1 = nonZeroSeqnum();
                byte[] value = null;
                if (group != DhGroup.NULL) {
                    value = DhchapCrypto.publicValue(group, keyPair); // keyPair made by compute()
                }
                state = State.REPLY;
                return DhchapMessages.challenge(tid, hash, group, s1, c1, value);
            }
            case SUCCESS1 -> {
                byte[] r2 = null;
                if (c2 != null) {
                    r2 = DhchapCrypto.controllerResponse(hash, ctrlSecret.transformedKey(subnqn),
                            DhchapCrypto.augment(hash, sessionKey, c2), s2, tid, subnqn, hostnqn);
                    state = State.SUCCESS2;
                } else {
                    authenticated = true;
                    state = State.AUTHENTICATED;
                }
                return DhchapMessages.success1(tid, hash.lengthBytes, r2);
            }
            case FAILURE1 -> {
                state = State.FAILED;
                return DhchapMessages.failure(ID_FAILURE1, Math.max(tid, 0), failure);
            }
            case FAILED -> {
                return DhchapMessages.failure(ID_FAILURE1, Math.max(tid, 0), failure);
            }
            default -> {
                fail(FAILED, "Authentication Receive in state " + state);
                state = State.FAILED;
                return DhchapMessages.failure(ID_FAILURE1, Math.max(tid, 0), failure);
            }
        }
    }

    /**
     * Length of the message {@link #receive} would give now, for the AL check (that of Failure1 when it gives one);
     * in VERIFY known only after {@link #compute} (the Failure1 length before).
     */
    public int receiveLengthBytes() {
        return switch (state) {
            case CHALLENGE -> HEADER_LENGTH + hash.lengthBytes + group.valueLengthBytes();
            case SUCCESS1 -> HEADER_LENGTH + (c2 != null ? hash.lengthBytes : 0);
            default -> FAILURE_LENGTH;
        };
    }

    private void negotiate(byte[] m) {
        int t = tid(m);
        tid = t;
        keyPair = null;
        sessionKey = null;
        c2 = null;
        pendingReply = null;
        if (m.length < NEGOTIATE_LENGTH) {
            fail(INCORRECT_PAYLOAD, "negotiate lengthBytes=" + m.length + ", min=" + NEGOTIATE_LENGTH);
            return;
        }
        if (u8(m, SC_C_OFFSET) != 0) {
            fail(CONCAT_MISMATCH, "sc_c=" + u8(m, SC_C_OFFSET) + ", supported=0 (no secure channel)");
            return;
        }
        int napd = u8(m, NAPD_OFFSET);
        int desc = -1;
        for (int i = 0; i < napd && 8 + 64 * (i + 1) <= m.length; i++) {
            if (u8(m, AUTHID_OFFSET + 64 * i) == AUTHID_DHCHAP) {
                desc = 64 * i;
                break;
            }
        }
        if (desc < 0) {
            fail(PROTOCOL_NOT_USABLE, "no DH-HMAC-CHAP protocol descriptor (napd=" + napd + ")");
            return;
        }
        int halen = u8(m, HALEN_OFFSET + desc);
        int dhlen = u8(m, DHLEN_OFFSET + desc);
        if (halen > 30 || dhlen > 30) {
            fail(INCORRECT_PAYLOAD, "halen=" + halen + ", dhlen=" + dhlen + ", max=30");
            return;
        }
        hash = null;
        for (DhchapHash h : policy.hashes()) {
            if (offers(m, HASH_IDS_OFFSET + desc, halen, h.id)) {
                hash = h;
                break;
            }
        }
        if (hash == null) {
            fail(HASH_UNUSABLE, "no common hash: accepted=" + policy.hashes());
            return;
        }
        group = null;
        for (DhGroup g : policy.groups()) {
            if (offers(m, DH_IDS_OFFSET + desc, dhlen, g.id)) {
                group = g;
                break;
            }
        }
        if (group == null) {
            fail(DHGROUP_UNUSABLE, "no common DH group: accepted=" + policy.groups());
            return;
        }
        state = State.CHALLENGE;
    }

    private static boolean offers(byte[] m, int off, int len, int id) {
        for (int i = 0; i < len; i++) {
            if (u8(m, off + i) == id) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks and takes the Reply {@code m}: a Reply shorter than its {@value DhchapMessages#HEADER_LENGTH}-byte header
     * (HL at byte 6, DHVLEN at bytes 10-11, SEQNUM at 12-15) is INCORRECT_PAYLOAD before any of its fields is read;
     * every later read lies within {@code HEADER_LENGTH + 2 * HL + DHVLEN <= m.length}.
     */
    private void reply(byte[] m) {
        if (m.length < HEADER_LENGTH) {
            fail(INCORRECT_PAYLOAD, "reply lengthBytes=" + m.length + ", min=" + HEADER_LENGTH);
            return;
        }
        int hl = u8(m, HL_OFFSET);
        int dhvlen = u16(m, DHVLEN_OFFSET);
        if (hl != hash.lengthBytes || dhvlen != group.valueLengthBytes()
                || m.length < HEADER_LENGTH + 2 * hl + dhvlen) {
            fail(INCORRECT_PAYLOAD, "reply hl=" + hl + ", dhvlen=" + dhvlen + ", lengthBytes=" + m.length
                    + ", expected hl=" + hash.lengthBytes + ", dhvlen=" + group.valueLengthBytes());
            return;
        }
        if (group != DhGroup.NULL) {
            sessionKey = DhchapCrypto.sharedSecret(group, keyPair, slice(m, HEADER_LENGTH + 2 * hl, dhvlen));
            if (sessionKey == null) {
                fail(DHGROUP_UNUSABLE, "host DH value out of range (" + group.displayName + ")");
                return;
            }
        }
        byte[] expected = DhchapCrypto.hostResponse(hash, hostSecret.transformedKey(hostnqn),
                DhchapCrypto.augment(hash, sessionKey, c1), s1, tid, hostnqn, subnqn);
        if (!DhchapCrypto.same(expected, slice(m, HEADER_LENGTH, hl))) {
            fail(FAILED, "host response R1 mismatch (wrong host secret)");
            return;
        }
        if (!claimTid.test(tid)) {
            fail(INCORRECT_PAYLOAD, "t_id=" + tid + " refused by the association (already used by an authenticated "
                    + "transaction: replayed)");
            return;
        }
        s2 = u32(m, SEQNUM_OFFSET);
        if (u8(m, VALID_OFFSET) == 1 && s2 != 0) {
            if (ctrlSecret == null) {
                fail(FAILED, "host asked for bidirectional authentication; no controller secret is configured");
                return;
            }
            c2 = slice(m, HEADER_LENGTH + hl, hl);
        }
        state = State.SUCCESS1;
    }

    private int nonZeroSeqnum() {
        int s;
        do {
            s = random.nextInt();
        } while (s == 0);
        return s;
    }

    private void fail(int explanation, String why) {
        authenticated = false;
        failure = explanation;
        detail = why;
        state = State.FAILURE1;
    }
}
