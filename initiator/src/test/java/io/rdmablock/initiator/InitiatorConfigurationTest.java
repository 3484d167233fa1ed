package io.rdmablock.initiator;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The initiator's knobs: defaults, values, and errors that name the property, the value and the bounds. */
class InitiatorConfigurationTest {
    @Test
    void shouldTakeTheDefaultsWhenUnsetOrBlank() {
        assertEquals(InitiatorConfiguration.DEFAULTS, InitiatorConfiguration.from(Map.<String, String>of()::get));
        assertEquals(InitiatorConfiguration.DEFAULTS, InitiatorConfiguration.from(
                Map.of(InitiatorConfiguration.POLL_BATCH, " ")::get));
        assertEquals(16, InitiatorConfiguration.DEFAULTS.pollBatch());
    }

    @Test
    void shouldReadEachKnob() {
        InitiatorConfiguration c = InitiatorConfiguration.from(Map.of(InitiatorConfiguration.SPIN_NS, "2000",
                InitiatorConfiguration.POLL_BATCH, "64", InitiatorConfiguration.MGMT_TIMEOUT_MS, "60000")::get);
        assertEquals(new InitiatorConfiguration(2000, 64, 60_000), c);
    }

    @Test
    void shouldNameThePropertyValueAndBoundsOfABadOne() {
        for (String bad : new String[] {"0", "-1", "65", "x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InitiatorConfiguration
                    .from(Map.of(InitiatorConfiguration.POLL_BATCH, bad)::get));
            assertTrue(e.getMessage().startsWith("invalid rdmablock.initiator.pollBatch: value=" + bad),
                    e.getMessage());
            assertTrue(e.getMessage().contains("min=1, max=64"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> InitiatorConfiguration
                .from(Map.of(InitiatorConfiguration.MGMT_TIMEOUT_MS, "0")::get));
        assertEquals("invalid rdmablock.mgmt.timeoutMs: value=0, min=1, max=3600000", e.getMessage());
    }

    @Test
    void shouldBeWhatTheIoQueueUses() {
        assertEquals(InitiatorConfiguration.current().pollBatch(), IoQueue.POLL_BATCH);
    }
}
