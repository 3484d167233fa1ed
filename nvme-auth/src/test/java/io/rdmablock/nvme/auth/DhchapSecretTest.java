package io.rdmablock.nvme.auth;

import org.junit.jupiter.api.Test;

import java.security.SecureRandom;
import java.util.Base64;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DhchapSecretTest {
    @Test
    void shouldRoundTripGeneratedSecretsOfEveryHashAndLength() {
        SecureRandom r = new SecureRandom();
        int[][] cases = {{0, 32}, {0, 48}, {0, 64}, {1, 32}, {2, 48}, {3, 64}};
        for (int[] c : cases) {
            DhchapSecret s = DhchapSecret.generate(c[0], c[1], r);
            String text = s.encoded();
            assertTrue(text.startsWith(String.format("DHHC-1:%02d:", c[0])), text.substring(0, 10));
            assertTrue(text.endsWith(":"));
            DhchapSecret back = DhchapSecret.parse(text);
            assertTrue(back.sameAs(s));
            assertEquals(c[1], back.keyLengthBytes());
            assertTrue(DhchapSecret.parse(text.substring(0, text.length() - 1)).sameAs(s), "trailing ':' optional");
        }
    }

    @Test
    void shouldRejectCrcMismatch() {
        String good = DhchapSecret.generate(1, 32, new SecureRandom()).encoded();
        byte[] raw = Base64.getDecoder().decode(good.substring(10, good.length() - 1));
        raw[3] ^= 1;
        String bad = "DHHC-1:01:" + Base64.getEncoder().encodeToString(raw) + ":";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse(bad));
        assertTrue(e.getMessage().contains("CRC-32"), e.getMessage());
    }

    @Test
    void shouldRejectBadPrefixHashLengthAndBase64() {
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-2:00:AAAA:"));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:04:"
                + DhchapSecret.generate(0, 32, new SecureRandom()).encoded().substring(10)));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:00:AAAA:"));
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:00:!!!!:"));
        // hh 01 (SHA-256) with a 64-byte key: gen-dhchap-key never makes it
        assertThrows(IllegalArgumentException.class, () -> DhchapSecret.parse("DHHC-1:01:"
                + DhchapSecret.generate(0, 64, new SecureRandom()).encoded().substring(10)));
    }

    @Test
    void shouldNeverShowTheKey() {
        DhchapSecret s = DhchapSecret.generate(1, 32, new SecureRandom());
        assertFalse(s.toString().contains(s.encoded().substring(10, 30)));
        assertEquals("DHHC-1:01:<32-byte key>:", s.toString());
    }

    @Test
    void shouldTransformWithTheSecretsHashAndKeepUntransformedKeys() {
        DhchapSecret none = DhchapSecret.generate(0, 48, new SecureRandom());
        assertEquals(48, none.transformedKey("nqn.x").length);
        assertEquals(64, DhchapSecret.generate(3, 64, new SecureRandom()).transformedKey("nqn.x").length);
        DhchapSecret s = DhchapSecret.generate(1, 32, new SecureRandom());
        assertFalse(java.util.Arrays.equals(s.transformedKey("nqn.a"), s.transformedKey("nqn.b")));
    }
}
