package io.rdmablock.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The initiator poller's completion batch ({@code rdmablock.initiator.pollBatch}): default and bounds. */
class PollBatchTest {
    @Test
    void shouldDefaultTo16() {
        if (System.getProperty("rdmablock.initiator.pollBatch") == null) {
            assertEquals(16, IoQueue.POLL_BATCH);
        }
    }

    @Test
    void shouldAcceptOneTo64AndNameThePropertyAndBoundsOtherwise() {
        assertEquals(1, IoQueue.pollBatch(1));
        assertEquals(64, IoQueue.pollBatch(64));
        for (int bad : new int[] {0, -1, 65}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IoQueue.pollBatch(bad));
            assertTrue(e.getMessage().contains("rdmablock.initiator.pollBatch: " + bad), e.getMessage());
            assertTrue(e.getMessage().contains("1..64"), e.getMessage());
        }
    }
}
