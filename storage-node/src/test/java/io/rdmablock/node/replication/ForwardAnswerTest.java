package io.rdmablock.node.replication;

import io.rdmablock.rdma.fabric.NvmeStatus;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link ForwardAnswer#of}: what a secondary's answer means, by status, epochs, target and resends so far. */
class ForwardAnswerTest {
    private static final int CONFLICT = NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_RESERVATION_CONFLICT, true);
    private static final int TRANSITION = NvmeStatus.of(3, 0x03, false);

    @Test
    void shouldClassifyEveryAnswer() {
        assertEquals(ForwardAnswer.DONE, ForwardAnswer.of(0, 5, 5, true, 0));
        assertEquals(ForwardAnswer.RESEND_UNDER_CURRENT_EPOCH, ForwardAnswer.of(CONFLICT, 5, 6, true, 0),
                "refused an epoch below the current one: this primary's own bump");
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(CONFLICT, 5, 6, false, 0), "no longer a target");
        assertEquals(ForwardAnswer.FENCED, ForwardAnswer.of(CONFLICT, 6, 6, true, 0),
                "refused the current epoch: another primary's");
        assertEquals(ForwardAnswer.RESEND_AFTER_TRANSITION, ForwardAnswer.of(TRANSITION, 6, 6, true, 0));
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(TRANSITION, 6, 6, true,
                ReplicatedWrites.MAX_TRANSITION_RESENDS), "resends are bounded");
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(TRANSITION, 6, 6, false, 0));
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(ForwardQueue.TIMED_OUT, 6, 6, true, 0));
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(ForwardQueue.PATH_LOST, 6, 6, true, 0));
        assertEquals(ForwardAnswer.FAILED, ForwardAnswer.of(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR), 6, 6,
                true, 0));
    }
}
