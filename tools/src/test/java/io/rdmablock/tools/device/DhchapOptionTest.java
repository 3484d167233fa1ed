package io.rdmablock.tools.device;

import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.Test;

import java.security.SecureRandom;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DhchapOptionTest {
    @Test
    void shouldParseTheOptionAndNameItWhenInvalid() {
        DhchapSecret s = DhchapSecret.generate(2, 48, new SecureRandom());
        assertTrue(ConnectOptions.secret("--dhchap-secret", s.encoded(), "RDMABLOCK_TEST_UNSET_VAR").sameAs(s));
        assertNull(ConnectOptions.secret("--dhchap-secret", null, "RDMABLOCK_TEST_UNSET_VAR"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectOptions.secret("--dhchap-secret", "DHHC-1:01:AAAA:", "RDMABLOCK_TEST_UNSET_VAR"));
        assertTrue(e.getMessage().startsWith("invalid --dhchap-secret: invalid DH-HMAC-CHAP secret"), e.getMessage());
    }
}
