package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The attack: a host answers the Challenge with a DH-HMAC-CHAP Reply cut short inside its 16-byte header (8 bytes is
 * the least {@link DhchapController#send} lets through to the Reply parser). Before the fix DHVLEN (bytes 10-11) was
 * read before the length check, so 8-11 bytes threw ArrayIndexOutOfBoundsException out of the controller. Now every
 * length answers AUTH_Failure1, reason authentication failure, explanation "incorrect payload".
 */
class DhchapTruncatedReplyTest {
    private final SecureRandom random = new SecureRandom();
    private final DhchapSecret hostKey = DhchapSecret.generate(1, 32, random);

    @ParameterizedTest
    @ValueSource(ints = {8, 9, 10, 11, 12, 15})
    void shouldAnswerIncorrectPayloadToAReplyShorterThanItsHeader(int lengthBytes) {
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            DhchapHost h = new DhchapHost(DhchapVectorsTest.HOSTNQN, DhchapVectorsTest.SUBNQN, hostKey, null, 7,
                    random);
            DhchapController c = new DhchapController(DhchapVectorsTest.SUBNQN, DhchapVectorsTest.HOSTNQN, hostKey,
                    null, new DhchapController.Policy(List.of(DhchapHash.SHA_256), List.of(DhGroup.NULL)),
                    t -> true, random);
            c.send(h.negotiate());
            byte[] reply = h.onChallenge(c.receive());
            assertEquals(DhchapController.State.REPLY, c.state());

            c.send(Arrays.copyOf(reply, lengthBytes)); // type, id and T_ID intact: it reaches the Reply parser
            c.compute(); // the Reply is checked off the poller (DhchapWork), as the node does

            assertEquals(DhchapController.State.FAILURE1, c.state());
            assertFalse(c.isAuthenticated());
            assertEquals(DhchapMessages.INCORRECT_PAYLOAD, c.failureExplanation(), c.failureDetail());
            byte[] failure1 = c.receive();
            assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(failure1));
            assertEquals(DhchapMessages.REASON_FAILURE, DhchapMessages.u8(failure1, DhchapMessages.REASON_OFFSET));
            assertEquals(DhchapMessages.INCORRECT_PAYLOAD,
                    DhchapMessages.u8(failure1, DhchapMessages.EXPLANATION_OFFSET));
            assertEquals(7, DhchapMessages.tid(failure1));
        });
    }
}
