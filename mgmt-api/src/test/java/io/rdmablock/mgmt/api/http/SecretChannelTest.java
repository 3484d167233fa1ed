package io.rdmablock.mgmt.api.http;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rule of {@link SecretChannel}: secrets over TLS, loopback, or with the operator's lab flag only. */
class SecretChannelTest {
    private static InetAddress ip(String literal) {
        return InetAddress.ofLiteral(literal);
    }

    @Test
    void shouldWithholdOverPlainHttpFromANonLoopbackAddressNamingTheNodeTheAddressAndTheWaysOut() {
        for (String remote : new String[] {"192.0.2.7", "10.77.3.11", "198.18.0.2", "2001:db8::5", "::ffff:10.0.0.1",
                "128.0.0.1", "126.255.255.255", "::2", "0.0.0.0"}) {
            String reason = SecretChannel.reason(false, ip(remote), false, "n1");
            assertNotNull(reason, remote);
            assertTrue(reason.contains("node n1") && reason.contains(ip(remote).getHostAddress())
                    && reason.contains("--tls-cert") && reason.contains("--allow-plaintext-secrets")
                    && reason.contains("no TLS"), reason);
        }
        String unknown = SecretChannel.reason(false, null, false, "n2");
        assertTrue(unknown != null && unknown.contains("an unknown address"), unknown);
    }

    @Test
    void shouldHandThemOutOverLoopback() {
        for (String remote : new String[] {"127.0.0.1", "127.8.9.10", "127.255.255.254", "::1", "::ffff:127.0.0.1"}) {
            assertNull(SecretChannel.reason(false, ip(remote), false, "n1"), remote);
        }
    }

    @Test
    void shouldHandThemOutOverTlsOrWithTheLabFlagFromAnyAddress() {
        for (InetAddress remote : new InetAddress[] {ip("192.0.2.7"), ip("2001:db8::5"), null}) {
            assertNull(SecretChannel.reason(true, remote, false, "n1"));
            assertNull(SecretChannel.reason(false, remote, true, "n1"));
        }
    }

    @Test
    void shouldReadOnlyIpLiteralsWithoutANameLookup() {
        assertEquals(ip("192.0.2.7"), SecretChannel.address(io.vertx.core.net.SocketAddress.inetSocketAddress(1,
                "192.0.2.7")));
        assertNull(SecretChannel.address(io.vertx.core.net.SocketAddress.domainSocketAddress("/tmp/x.sock")));
        assertNull(SecretChannel.address(null));
    }
}
