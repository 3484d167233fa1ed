package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.BitSet;
import java.util.List;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Host and controller state machines against each other, and against tampered messages. */
class DhchapProtocolTest {
    private static final String HOST = DhchapVectorsTest.HOSTNQN;
    private static final String SUB = DhchapVectorsTest.SUBNQN;
    private final SecureRandom random = new SecureRandom();
    private final DhchapSecret hostKey = DhchapSecret.generate(1, 32, random);
    private final DhchapSecret ctrlKey = DhchapSecret.generate(3, 64, random);

    private static IntPredicate tids() {
        BitSet used = new BitSet();
        return t -> {
            if (used.get(t)) {
                return false;
            }
            used.set(t);
            return true;
        };
    }

    private DhchapController controller(DhchapSecret host, DhchapSecret ctrl, DhchapController.Policy p,
                                        IntPredicate tids) {
        return new DhchapController(SUB, HOST, host, ctrl, p, tids, random);
    }

    private static DhchapController.Policy policy(DhchapHash h, DhGroup g) {
        return new DhchapController.Policy(List.of(h), List.of(g));
    }

    /** Runs a whole transaction; the host's final message (Success2 / Failure2), if any, is delivered. */
    private static void run(DhchapHost h, DhchapController c) {
        c.send(h.negotiate());
        byte[] reply = h.onChallenge(c.receive());
        if (reply == null) {
            return;
        }
        c.send(reply);
        if (h.state() == DhchapHost.State.FAILED) {
            return;
        }
        byte[] last = h.onSuccess1(c.receive());
        if (last != null) {
            c.send(last);
        }
    }

    @Test
    void shouldAuthenticateWithEachHashAndTheNullGroup() {
        for (DhchapHash hash : DhchapHash.values()) {
            DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 3, random);
            DhchapController c = controller(hostKey, null, policy(hash, DhGroup.NULL), tids());
            run(h, c);
            assertEquals(DhchapHost.State.AUTHENTICATED, h.state(), hash + ": " + h.failureDetail());
            assertTrue(c.isAuthenticated(), hash + ": " + c.failureDetail());
            assertEquals(hash, h.hash());
            assertEquals(DhGroup.NULL, h.group());
        }
    }

    @Test
    void shouldAuthenticateWithFfdhe2048AndAugmentedChallenges() {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, ctrlKey, 9, random);
        DhchapController c = controller(hostKey, ctrlKey, DhchapController.Policy.DEFAULT, tids());
        run(h, c);
        assertEquals(DhchapHost.State.AUTHENTICATED, h.state(), h.failureDetail());
        assertTrue(c.isAuthenticated(), c.failureDetail());
        assertEquals(DhGroup.FFDHE2048, c.group());
        assertEquals(DhchapHash.SHA_256, c.hash());
    }

    @Test
    void shouldAuthenticateWithFfdhe3072AndSha512() {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 1, random);
        DhchapController c = controller(hostKey, null, policy(DhchapHash.SHA_512, DhGroup.FFDHE3072), tids());
        run(h, c);
        assertEquals(DhchapHost.State.AUTHENTICATED, h.state(), h.failureDetail());
        assertTrue(c.isAuthenticated());
    }

    @Test
    void shouldAuthenticateBidirectionally() {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, ctrlKey, 4, random);
        DhchapController c = controller(hostKey, ctrlKey, policy(DhchapHash.SHA_384, DhGroup.NULL), tids());
        c.send(h.negotiate());
        c.send(h.onChallenge(c.receive()));
        byte[] success1 = c.receive();
        assertEquals(DhchapController.State.SUCCESS2, c.state());
        assertFalse(c.isAuthenticated(), "not before Success2");
        byte[] success2 = h.onSuccess1(success1);
        assertEquals(DhchapMessages.ID_SUCCESS2, DhchapMessages.id(success2));
        c.send(success2);
        assertTrue(c.isAuthenticated());
        assertEquals(DhchapHost.State.AUTHENTICATED, h.state());
    }

    @Test
    void shouldFailAHostWithTheWrongSecret() {
        DhchapSecret other = DhchapSecret.generate(1, 32, random);
        DhchapHost h = new DhchapHost(HOST, SUB, other, null, 5, random);
        DhchapController c = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        run(h, c);
        assertEquals(DhchapController.State.FAILED, c.state());
        assertFalse(c.isAuthenticated());
        assertEquals(DhchapMessages.FAILED, c.failureExplanation());
        assertEquals(DhchapHost.State.FAILED, h.state());
        assertTrue(h.failedByController());
        assertEquals(DhchapMessages.FAILED, h.failureExplanation());
    }

    @Test
    void shouldFailAControllerThatAnswersWrongly() {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, ctrlKey, 6, random);
        DhchapController c = controller(hostKey, DhchapSecret.generate(3, 64, random),
                policy(DhchapHash.SHA_256, DhGroup.FFDHE2048), tids());
        c.send(h.negotiate());
        c.send(h.onChallenge(c.receive()));
        byte[] failure2 = h.onSuccess1(c.receive());
        assertEquals(DhchapHost.State.FAILED, h.state());
        assertFalse(h.failedByController());
        assertEquals(DhchapMessages.ID_FAILURE2, DhchapMessages.id(failure2));
        c.send(failure2);
        assertEquals(DhchapController.State.FAILED, c.state());
        assertFalse(c.isAuthenticated());
    }

    @Test
    void shouldFailAControllerThatDoesNotAnswerTheHostsChallenge() {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, ctrlKey, 6, random);
        DhchapController c = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.NULL), tids());
        run(h, c); // the controller has no secret of its own: it refuses bidirectional authentication
        assertEquals(DhchapHost.State.FAILED, h.state());
        assertFalse(c.isAuthenticated());
    }

    @Test
    void shouldRefuseAReplayedTransactionId() {
        IntPredicate tids = tids();
        DhchapController first = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids);
        run(new DhchapHost(HOST, SUB, hostKey, null, 11, random), first);
        assertTrue(first.isAuthenticated());
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 11, random);
        DhchapController second = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids);
        run(h, second);
        assertFalse(second.isAuthenticated());
        assertEquals(DhchapMessages.INCORRECT_PAYLOAD, second.failureExplanation());
        assertTrue(h.failedByController());
    }

    @Test
    void shouldRefuseAReplyWithAnotherTransactionIdOrFromAnEarlierTransaction() {
        IntPredicate tids = tids();
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 20, random);
        DhchapController c = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.NULL), tids);
        c.send(h.negotiate());
        byte[] reply = h.onChallenge(c.receive());
        byte[] tampered = reply.clone();
        tampered[4] = 21;
        c.send(tampered);
        assertEquals(DhchapController.State.FAILURE1, c.state());
        assertEquals(DhchapMessages.INCORRECT_PAYLOAD, c.failureExplanation());
        assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(c.receive()));
        // the recorded reply of that transaction, replayed into a new one with the same T_ID (new challenge)
        DhchapController next = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.NULL), t -> true);
        next.send(new DhchapHost(HOST, SUB, hostKey, null, 20, random).negotiate());
        next.receive();
        next.send(reply);
        assertTrue(next.computePending(), "a Reply is only stored; compute() checks it");
        next.compute();
        assertFalse(next.isAuthenticated());
        assertEquals(DhchapMessages.FAILED, next.failureExplanation());
    }

    @Test
    void shouldFailWithoutCommonHashOrGroup() {
        DhchapController c = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        byte[] neg = DhchapMessages.negotiate(1, List.of(), List.of(DhGroup.NULL));
        c.send(neg);
        assertEquals(DhchapMessages.HASH_UNUSABLE, c.failureExplanation());
        DhchapController d = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.FFDHE8192), tids());
        d.send(DhchapMessages.negotiate(1, List.of(DhchapHash.SHA_256), List.of(DhGroup.NULL)));
        assertEquals(DhchapMessages.DHGROUP_UNUSABLE, d.failureExplanation());
        assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(d.receive()));
    }

    @Test
    void shouldAnswerMalformedAndOutOfOrderMessagesWithFailure1() {
        DhchapController c = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        c.send(new byte[3]);
        assertEquals(DhchapMessages.INCORRECT_PAYLOAD, c.failureExplanation());
        DhchapController d = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        d.send(DhchapMessages.success2(0));
        assertEquals(DhchapMessages.INCORRECT_MESSAGE, d.failureExplanation());
        DhchapController e = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        byte[] m = e.receive(); // nothing negotiated
        assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(m));
        assertFalse(e.isAuthenticated());
        // a truncated challenge on the host side: Failure2, no exception
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 2, random);
        DhchapController f = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.FFDHE2048), tids());
        f.send(h.negotiate());
        byte[] challenge = f.receive();
        byte[] out = h.onChallenge(java.util.Arrays.copyOf(challenge, 40));
        assertNotNull(out);
        assertEquals(DhchapMessages.ID_FAILURE2, DhchapMessages.id(out));
        assertEquals(DhchapMessages.INCORRECT_PAYLOAD, h.failureExplanation());
    }

    @Test
    void shouldReauthenticateAfterSuccess() {
        DhchapController c = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        run(new DhchapHost(HOST, SUB, hostKey, null, 1, random), c);
        assertTrue(c.isAuthenticated());
        DhchapHost again = new DhchapHost(HOST, SUB, hostKey, null, 2, random);
        run(again, c);
        assertEquals(DhchapHost.State.AUTHENTICATED, again.state());
        assertTrue(c.isAuthenticated());
        assertNull(again.failureDetail());
    }

    @Test
    void shouldRunTheDhComputationsOnAnotherThreadBeforeReceive() throws Exception {
        DhchapHost h = new DhchapHost(HOST, SUB, hostKey, null, 40, random);
        DhchapController c = controller(hostKey, null, policy(DhchapHash.SHA_256, DhGroup.FFDHE2048), tids());
        c.send(h.negotiate());
        assertTrue(c.computePending(), "the Challenge needs a key pair; a Negotiate alone makes none");
        Thread worker = new Thread(c::compute);
        worker.start();
        worker.join(10_000);
        assertFalse(c.computePending());
        byte[] reply = h.onChallenge(c.receive());
        c.send(reply);
        assertEquals(DhchapController.State.VERIFY, c.state());
        assertTrue(c.computePending(), "the Reply is checked by compute()");
        worker = new Thread(c::compute);
        worker.start();
        worker.join(10_000);
        assertEquals(DhchapController.State.SUCCESS1, c.state());
        h.onSuccess1(c.receive());
        assertEquals(DhchapHost.State.AUTHENTICATED, h.state(), h.failureDetail());
        assertTrue(c.isAuthenticated());
    }

    @Test
    void shouldAnswerFailure1AfterTheTransportRefusedTheTransaction() {
        DhchapController c = controller(hostKey, null, DhchapController.Policy.DEFAULT, tids());
        c.refuse(DhchapMessages.FAILED, "rate limit");
        assertEquals(DhchapController.State.FAILURE1, c.state());
        assertFalse(c.computePending());
        assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(c.receive()));
        assertEquals("rate limit", c.failureDetail());
    }
}
