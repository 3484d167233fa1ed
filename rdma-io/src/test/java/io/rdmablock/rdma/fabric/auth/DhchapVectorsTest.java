package io.rdmablock.rdma.fabric.auth;

import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.nvme.auth.DhchapSecret;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks the secret codec, the key transformation and the response HMACs against values computed independently by
 * {@code src/test/resources/dhchap/vectors.py} (Python hmac, hashlib, zlib, base64; its output is vectors.txt).
 */
class DhchapVectorsTest {
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:6a3c0f3e-1b1e-4b7a-9d44-5c2d6e1f0a11";
    static final String SUBNQN = "nqn.2026-11.io.rdmablock:volume:vol1";
    private static final HexFormat HEX = HexFormat.of();

    static List<String[]> vectors(String kind) throws IOException {
        try (InputStream in = DhchapVectorsTest.class.getResourceAsStream("/dhchap/vectors.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).lines().map(l -> l.split(" "))
                    .filter(f -> f[0].equals(kind)).toList();
        }
    }

    @Test
    void shouldEncodeParseAndTransformSecretsAsPythonDoes() throws IOException {
        List<String[]> v = vectors("secret");
        assertEquals(4, v.size());
        for (String[] f : v) {
            int hh = Integer.parseInt(f[1]);
            byte[] key = HEX.parseHex(f[2]);
            DhchapSecret s = DhchapSecret.of(hh, key);
            assertEquals(f[3], s.encoded(), "encoded, hh=" + hh);
            DhchapSecret parsed = DhchapSecret.parse(f[3]);
            assertEquals(hh, parsed.hh());
            assertTrue(parsed.sameAs(s));
            assertEquals(f[4], HEX.formatHex(parsed.transformedKey(HOSTNQN)), "transformed, hh=" + hh);
        }
    }

    @Test
    void shouldComputeHostAndControllerResponsesAsPythonDoes() throws IOException {
        for (String kind : List.of("host", "ctrl")) {
            List<String[]> v = vectors(kind);
            assertEquals(3, v.size());
            for (String[] f : v) {
                DhchapHash h = DhchapHash.byId(Integer.parseInt(f[1]));
                byte[] k = HEX.parseHex(f[2]);
                byte[] c = HEX.parseHex(f[3]);
                int seq = (int) Long.parseLong(f[4]);
                int tid = Integer.parseInt(f[5]);
                byte[] r = kind.equals("host")
                        ? DhchapCrypto.hostResponse(h, k, c, seq, tid, HOSTNQN, SUBNQN)
                        : DhchapCrypto.controllerResponse(h, k, c, seq, tid, SUBNQN, HOSTNQN);
                assertArrayEquals(HEX.parseHex(f[6]), r, kind + " " + h);
            }
        }
    }

    @Test
    void shouldAugmentChallengeAsPythonDoes() throws IOException {
        for (String[] f : vectors("augment")) {
            DhchapHash h = DhchapHash.byId(Integer.parseInt(f[1]));
            assertArrayEquals(HEX.parseHex(f[4]), DhchapCrypto.augment(h, HEX.parseHex(f[2]), HEX.parseHex(f[3])));
        }
    }
}
