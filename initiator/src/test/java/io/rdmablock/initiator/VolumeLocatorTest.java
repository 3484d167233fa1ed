package io.rdmablock.initiator;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class VolumeLocatorTest {
    @Test
    void shouldParseHostPortAndBracketedIpv6() {
        assertEquals(4420, VolumeLocator.parseAddress("127.0.0.1:4420").getPort());
        assertEquals("127.0.0.1", VolumeLocator.parseAddress("127.0.0.1:4420").getHostString());
        assertEquals(4421, VolumeLocator.parseAddress("[::1]:4421").getPort());
    }

    @Test
    void shouldRejectAddressWithoutValidPort() {
        assertThrows(IllegalArgumentException.class, () -> VolumeLocator.parseAddress("host"));
        assertThrows(IllegalArgumentException.class, () -> VolumeLocator.parseAddress("host:"));
        assertThrows(IllegalArgumentException.class, () -> VolumeLocator.parseAddress("host:x"));
        assertThrows(IllegalArgumentException.class, () -> VolumeLocator.parseAddress("host:70000"));
    }
}
