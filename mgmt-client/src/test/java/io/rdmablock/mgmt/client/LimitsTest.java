package io.rdmablock.mgmt.client;

import org.junit.jupiter.api.Test;

import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LimitsTest {
    @Test
    void shouldAcceptNamesOfOneToSixtyThreeAllowedChars() {
        assertDoesNotThrow(() -> Limits.checkName("name", "a"));
        assertDoesNotThrow(() -> Limits.checkName("name", "0vol_1.b-c"));
        assertDoesNotThrow(() -> Limits.checkName("name", "a".repeat(63)));
    }

    @Test
    void shouldRejectBadNamesNamingFieldAndPattern() {
        for (String bad : new String[] {"", "A", "-a", ".a", "a/b", "a b", "a".repeat(64), "vol\u00e9"}) {
            var e = assertThrows(IllegalArgumentException.class, () -> Limits.checkName("name", bad), bad);
            assertTrue(e.getMessage().startsWith("invalid name: name=\"" + bad + "\", must match "), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Limits.checkName("name", null));
    }

    @Test
    void shouldRejectSizeNotMultipleOfOneMebibyte() {
        var e = assertThrows(IllegalArgumentException.class, () -> Limits.checkSize("sizeBytes", 4096));
        assertEquals("invalid sizeBytes: sizeBytes=4096, must be a multiple of 1048576, min=1048576, "
                + "max=70368744177664", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Limits.checkSize("sizeBytes", 0));
        assertThrows(IllegalArgumentException.class, () -> Limits.checkSize("sizeBytes", -1048576));
        assertThrows(IllegalArgumentException.class, () -> Limits.checkSize("sizeBytes", (64L << 40) + (1 << 20)));
        assertDoesNotThrow(() -> Limits.checkSize("sizeBytes", 64L << 40));
    }

    @Test
    void shouldAcceptOnlyLbaSizes512And4096() {
        assertDoesNotThrow(() -> Limits.checkLbaSize(512));
        assertDoesNotThrow(() -> Limits.checkLbaSize(4096));
        var e = assertThrows(IllegalArgumentException.class, () -> Limits.checkLbaSize(1024));
        assertEquals("invalid lbaSize: lbaSize=1024, must be one of [512, 4096]", e.getMessage());
    }

    @Test
    void shouldAcceptReplicasOneToFive() {
        assertDoesNotThrow(() -> Limits.checkReplicas(1));
        assertDoesNotThrow(() -> Limits.checkReplicas(5));
        assertEquals("invalid replicas: replicas=0, min=1, max=5",
                assertThrows(IllegalArgumentException.class, () -> Limits.checkReplicas(0)).getMessage());
        assertEquals("invalid replicas: replicas=6, min=1, max=5",
                assertThrows(IllegalArgumentException.class, () -> Limits.checkReplicas(6)).getMessage());
    }

    @Test
    void shouldRejectMinInSyncAboveReplicas() {
        assertDoesNotThrow(() -> Limits.checkMinInSync("minInSync", 3, 3));
        assertEquals("invalid minInSync: minInSync=4, min=1, max=replicas=3",
                assertThrows(IllegalArgumentException.class, () -> Limits.checkMinInSync("minInSync", 4, 3))
                        .getMessage());
        assertEquals("invalid minInSync: minInSync=0, min=1, max=replicas=3",
                assertThrows(IllegalArgumentException.class, () -> Limits.checkMinInSync("minInSync", 0, 3))
                        .getMessage());
    }

    @Test
    void shouldDefaultMinInSyncToOneLessThanReplicas() {
        assertEquals(1, Limits.defaultMinInSync(1));
        assertEquals(1, Limits.defaultMinInSync(2));
        assertEquals(2, Limits.defaultMinInSync(3));
        assertEquals(4, Limits.defaultMinInSync(5));
    }

    @Test
    void shouldCheckAllowedHostNqns() {
        assertDoesNotThrow(() -> Limits.checkAllowedHosts(List.of(
                "nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "nqn.2026-11.io.rdmablock:h1")));
        var e = assertThrows(IllegalArgumentException.class,
                () -> Limits.checkAllowedHosts(List.of("nqn.2026-11.io.rdmablock:h1", "host1")));
        assertTrue(e.getMessage().startsWith("invalid allowedHosts[1]: allowedHosts[1]=\"host1\""), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Limits.checkAllowedHosts(
                List.of("nqn.2026-11.io.rdmablock:" + "x".repeat(200))));
        assertThrows(IllegalArgumentException.class, () -> Limits.checkAllowedHosts(
                List.of("nqn.2026-11.io.rdmablock:h1", "nqn.2026-11.io.rdmablock:h1")));
        assertThrows(IllegalArgumentException.class, () -> Limits.checkAllowedHosts(
                Collections.nCopies(65, "nqn.2026-11.io.rdmablock:h1")));
        assertDoesNotThrow(() -> Limits.checkAllowedHosts(List.of("*")));
        assertDoesNotThrow(() -> Limits.checkAllowedHosts(List.of()));
        e = assertThrows(IllegalArgumentException.class,
                () -> Limits.checkAllowedHosts(List.of("nqn.2026-11.io.rdmablock:h1", "*")));
        assertEquals("invalid allowedHosts[1]: allowedHosts[1]=\"*\", \"*\" admits any host and must be the only "
                + "entry", e.getMessage());
    }

    @Test
    void shouldCheckFabricAddresses() {
        assertDoesNotThrow(() -> Limits.checkAddress("fabricAddress", "127.0.0.1:4420"));
        assertDoesNotThrow(() -> Limits.checkAddress("fabricAddress", "[::1]:4420"));
        assertDoesNotThrow(() -> Limits.checkAddress("fabricAddress", "node-1.example:1"));
        for (String bad : new String[] {"", "host", ":4420", "host:", "host:0", "host:65536", "host:x", "::1:4420",
                "a b:1"}) {
            assertThrows(IllegalArgumentException.class, () -> Limits.checkAddress("fabricAddress", bad), bad);
        }
    }

    @Test
    void shouldCheckNodeRegistration() {
        assertDoesNotThrow(() -> Limits.check(new RegisterNodeRequest("n1", "127.0.0.1:4420",
                "http://127.0.0.1:9100/metrics", 10, 10)));
        var e = assertThrows(IllegalArgumentException.class, () -> Limits.check(
                new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 10, 11)));
        assertEquals("invalid freeBytes: freeBytes=11, min=0, max=capacityBytes=10", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Limits.check(
                new RegisterNodeRequest("n1", "127.0.0.1:4420", "ftp://x/", 10, 10)));
        assertThrows(IllegalArgumentException.class, () -> Limits.check(
                new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 0, 0)));
    }
}
