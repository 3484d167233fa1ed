package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.rdmablock.mgmt.client.TlsTrust;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The heartbeat route and {@link SecretChannel} over real connections: a server listening on every address answers
 * a node's own credential with its secrets over loopback, withholds them (saying why) when the node comes over a
 * non-loopback address of this machine in plain HTTP, and hands them out there over TLS or with the lab flag.
 * The non-loopback cases need such an address (skipped without one), TLS needs openssl.
 */
class SecretChannelRoutesTest {
    private static final String ADMIN = "admin";
    private static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    @TempDir
    Path dir;

    /** @return an up, non-loopback IPv4 address of this machine, or null */
    static InetAddress localNonLoopback() throws Exception {
        for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!i.isUp() || i.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(i.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return a;
                }
            }
        }
        return null;
    }

    /** A node registered with the cluster token, a managed host; @return the node's credential */
    private static String setUp(URI url, SSLContext ssl) {
        var admin = new MgmtClient(url, ADMIN, Duration.ofSeconds(60), ssl);
        admin.setHost(HOST_NQN, new SetHostRequest(DhchapSecret.generate(1, 32, new SecureRandom()).encoded(), null));
        String credential = admin.registerNodeForCredential(new RegisterNodeRequest("n1", "127.0.0.1:4420", "",
                1L << 30, 1L << 30)).credential();
        assertNotNull(credential);
        return credential;
    }

    private static HeartbeatResponse beat(URI url, String credential, SSLContext ssl) {
        return new MgmtClient(url, credential, Duration.ofSeconds(60), ssl).heartbeat("n1",
                new HeartbeatRequest(1L << 30, List.of()));
    }

    private static URI at(MgmtServer server, String scheme, InetAddress address) {
        return URI.create(scheme + "://" + address.getHostAddress() + ":" + server.port());
    }

    private static void assertHandedOut(HeartbeatResponse r) {
        assertNull(r.secretsWithheld());
        assertNotNull(r.nodeKey());
        assertEquals(List.of(HOST_NQN), r.hosts().stream().map(h -> h.hostNqn()).toList());
    }

    @Test
    void shouldHandSecretsOutOverLoopbackAndWithholdThemOverAnotherAddressInPlainHttp() throws Exception {
        try (var server = MgmtServer.start(new InMemoryMetadataStore(), "0.0.0.0", 0, MgmtHttpOptions.of(ADMIN),
                60_000, ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
            URI loopback = URI.create("http://127.0.0.1:" + server.port());
            String credential = setUp(loopback, null);
            assertHandedOut(beat(loopback, credential, null));

            InetAddress other = localNonLoopback();
            Assumptions.assumeTrue(other != null, "no non-loopback address on this machine");
            HeartbeatResponse r = beat(at(server, "http", other), credential, null);
            assertNotNull(r.secretsWithheld(), "withheld over plain HTTP from " + other);
            assertTrue(r.secretsWithheld().contains(other.getHostAddress()) && r.secretsWithheld().contains("n1")
                    && r.secretsWithheld().contains("--tls-cert"), r.secretsWithheld());
            assertNull(r.nodeKey());
            assertEquals(List.of(HOST_NQN), r.hosts().stream().map(h -> h.hostNqn()).toList(), "names only");
            assertTrue(r.hosts().stream().allMatch(h -> h.dhchapSecret() == null && h.dhchapCtrlSecret() == null),
                    "no secret");
            assertEquals(List.of(), r.links());

            assertHandedOut(beat(loopback, credential, null)); // and back over loopback
        }
    }

    @Test
    void shouldHandSecretsOutOverAnotherAddressWithTheLabFlag() throws Exception {
        InetAddress other = localNonLoopback();
        Assumptions.assumeTrue(other != null, "no non-loopback address on this machine");
        try (var server = MgmtServer.start(new InMemoryMetadataStore(), "0.0.0.0", 0,
                MgmtHttpOptions.of(ADMIN).withPlaintextSecrets(true), 60_000, ClusterService.DEFAULT_LEASE_MS,
                MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
            String credential = setUp(URI.create("http://127.0.0.1:" + server.port()), null);
            assertHandedOut(beat(at(server, "http", other), credential, null));
        }
    }

    @Test
    void shouldHandSecretsOutOverTlsFromAnyAddress() throws Exception {
        InetAddress other = localNonLoopback();
        Assumptions.assumeTrue(other != null, "no non-loopback address on this machine");
        Assumptions.assumeTrue(run(List.of("openssl", "version")), "openssl is not installed");
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,IP:" + other.getHostAddress()
                + "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
        for (var cmd : List.of(
                List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
                        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                        "-keyout", "ca.key", "-out", "ca.pem"),
                List.of("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=mgmt",
                        "-keyout", "server.key", "-out", "server.csr"),
                List.of("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                        "-CAcreateserial", "-days", "2", "-extfile", "server.ext", "-out", "server.pem"))) {
            assertTrue(run(cmd), String.join(" ", cmd));
        }
        SSLContext ssl = TlsTrust.sslContext(dir.resolve("ca.pem"));
        var http = MgmtHttpOptions.of(ADMIN).withTls(dir.resolve("server.pem"), dir.resolve("server.key"));
        try (var server = MgmtServer.start(new InMemoryMetadataStore(), "0.0.0.0", 0, http, 60_000,
                ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
            String credential = setUp(URI.create("https://127.0.0.1:" + server.port()), ssl);
            HeartbeatResponse r = beat(at(server, "https", other), credential, ssl);
            assertHandedOut(r);
            assertFalse(r.toString().contains(r.nodeKey()));
        }
    }

    private boolean run(List<String> cmd) throws Exception {
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException notInstalled) {
            return false;
        }
    }
}
