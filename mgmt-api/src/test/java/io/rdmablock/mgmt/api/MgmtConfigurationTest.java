package io.rdmablock.mgmt.api;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The management server's knobs: defaults, values, and errors that name the property, the value and the bounds. */
class MgmtConfigurationTest {
    @Test
    void shouldTakeTheDefaultsWhenUnsetOrBlank() {
        assertEquals(MgmtConfiguration.DEFAULTS, MgmtConfiguration.from(Map.<String, String>of()::get));
        assertEquals(new MgmtConfiguration(120, 60_000), MgmtConfiguration.from(
                Map.of(MgmtConfiguration.PEER_LEASE_MAX_MS, "")::get));
    }

    @Test
    void shouldReadEachKnob() {
        assertEquals(new MgmtConfiguration(30, 0), MgmtConfiguration.from(Map.of(
                MgmtConfiguration.START_TIMEOUT_SECONDS, "30", MgmtConfiguration.PEER_LEASE_MAX_MS, " 0 ")::get));
    }

    @Test
    void shouldNameThePropertyValueAndBoundsOfABadOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MgmtConfiguration.from(
                Map.of(MgmtConfiguration.PEER_LEASE_MAX_MS, "3600001")::get));
        assertEquals("invalid rdmablock.mgmt.peerLeaseMaxMs: value=3600001, min=0, max=3600000", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MgmtConfiguration.from(
                Map.of(MgmtConfiguration.START_TIMEOUT_SECONDS, "2m")::get));
        assertEquals("invalid rdmablock.mgmt.startTimeoutSeconds: value=2m (not a number), min=1, max=3600",
                e.getMessage());
    }
}
