package io.rdmablock.rdma.fabric.auth;

import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.security.SecureRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DhGroupTest {
    @Test
    void shouldHaveRfc7919ShapedSafePrimes() {
        int[] bits = {2048, 3072, 4096, 6144, 8192};
        for (int i = 0; i < bits.length; i++) {
            DhGroup g = DhGroup.byId(i + 1);
            BigInteger p = g.prime;
            assertEquals(bits[i], p.bitLength(), g.displayName);
            assertEquals(bits[i] / 8, g.valueLengthBytes());
            BigInteger top = p.shiftRight(bits[i] - 64);
            assertEquals(new BigInteger("FFFFFFFFFFFFFFFF", 16), top, "top 64 bits of " + g.displayName);
            assertEquals(new BigInteger("FFFFFFFFFFFFFFFF", 16), p.and(new BigInteger("FFFFFFFFFFFFFFFF", 16)));
            assertTrue(p.isProbablePrime(2));
            assertTrue(p.subtract(BigInteger.ONE).shiftRight(1).isProbablePrime(2), "(p-1)/2 prime");
            assertEquals(g, DhGroup.byName(g.displayName));
        }
        assertEquals(0, DhGroup.NULL.valueLengthBytes());
    }

    @Test
    void shouldAgreeOnAPaddedSharedSecretAndRefuseOutOfRangeValues() {
        SecureRandom r = new SecureRandom();
        DhGroup g = DhGroup.FFDHE2048;
        var a = DhchapCrypto.generateKeyPair(g, r);
        var b = DhchapCrypto.generateKeyPair(g, r);
        byte[] ab = DhchapCrypto.sharedSecret(g, a, DhchapCrypto.publicValue(g, b));
        byte[] ba = DhchapCrypto.sharedSecret(g, b, DhchapCrypto.publicValue(g, a));
        assertEquals(256, ab.length);
        assertArrayEquals(ab, ba);
        assertNull(DhchapCrypto.sharedSecret(g, a, new byte[256]));
        assertNull(DhchapCrypto.sharedSecret(g, a, DhchapCrypto.fixed(BigInteger.ONE, 256)));
        assertNull(DhchapCrypto.sharedSecret(g, a, DhchapCrypto.fixed(g.prime.subtract(BigInteger.ONE), 256)));
    }

    @Test
    void shouldWeighAnExponentiationByModulusAndExponentInFfdhe2048Units() {
        int[] expected = {0, 1, 3, 6, 15, 28};
        DhGroup[] groups = {DhGroup.NULL, DhGroup.FFDHE2048, DhGroup.FFDHE3072, DhGroup.FFDHE4096, DhGroup.FFDHE6144,
                DhGroup.FFDHE8192};
        for (int i = 0; i < groups.length; i++) {
            assertEquals(expected[i], groups[i].cost(), groups[i].displayName);
        }
    }
}
