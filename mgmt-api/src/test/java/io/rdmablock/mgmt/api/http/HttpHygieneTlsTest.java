package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtUnavailableException;
import io.rdmablock.mgmt.client.TlsTrust;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HTTPS for the management plane: a client trusting the CA connects, one without it fails naming the problem. */
class HttpHygieneTlsTest {
    @TempDir
    static Path dir;

    /** A throwaway CA and a server certificate for 127.0.0.1/localhost, made with openssl as ops/cluster up --tls does. */
    @BeforeAll
    static void certificates() throws Exception {
        Assumptions.assumeTrue(run(List.of("openssl", "version")), "openssl is not installed");
        Files.writeString(dir.resolve("server.ext"),
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
        for (var cmd : List.of(
                List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
                        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                        "-keyout", "ca.key", "-out", "ca.pem"),
                List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        "/CN=other CA", "-keyout", "other.key", "-out", "other.pem"),
                List.of("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                        "-keyout", "server.key", "-out", "server.csr"),
                List.of("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                        "-CAcreateserial", "-days", "2", "-extfile", "server.ext", "-out", "server.pem"))) {
            assertTrue(run(cmd), String.join(" ", cmd));
        }
    }

    private static boolean run(List<String> cmd) throws Exception {
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException notInstalled) {
            return false;
        }
    }

    @Test
    void shouldServeHttpsToAClientTrustingTheCaAndRefuseOneThatDoesNot() throws Exception {
        var http = MgmtHttpOptions.of("admin").withReadToken("reader")
                .withTls(dir.resolve("server.pem"), dir.resolve("server.key"));
        try (var server = MgmtServer.start(new InMemoryMetadataStore(), "127.0.0.1", 0, http, 5_000,
                ClusterService.DEFAULT_LEASE_MS, MgmtVerticle.DEFAULT_SWEEP_INTERVAL_MS)) {
            assertTrue(server.url().startsWith("https://127.0.0.1:"), server.url());
            URI url = URI.create(server.url());
            var trusted = new MgmtClient(url, "reader", Duration.ofSeconds(60),
                    TlsTrust.sslContext(dir.resolve("ca.pem")));
            assertEquals(List.of(), trusted.listVolumes());

            var untrusted = new MgmtClient(url, "reader", Duration.ofSeconds(60),
                    TlsTrust.sslContext(dir.resolve("other.pem")));
            var e = assertThrows(MgmtUnavailableException.class, untrusted::listVolumes);
            assertTrue(e.getMessage().contains("not signed by a trusted CA") && e.getMessage().contains("--ca-cert"),
                    e.getMessage());

            var jdkDefaults = new MgmtClient(url, "reader", Duration.ofSeconds(60));
            var d = assertThrows(MgmtUnavailableException.class, jdkDefaults::listVolumes);
            assertTrue(d.getMessage().contains("certificate"), d.getMessage());

            var byName = new MgmtClient(URI.create(server.url().replace("127.0.0.1", "localhost")), "reader",
                    Duration.ofSeconds(60), TlsTrust.sslContext(dir.resolve("ca.pem")));
            assertEquals(List.of(), byName.listNodes());
        }
    }

    @Test
    void shouldNameAnUnusableCaFile() throws Exception {
        Path junk = Files.writeString(dir.resolve("junk.pem"), "not a certificate\n");
        var e = assertThrows(IllegalArgumentException.class, () -> TlsTrust.sslContext(junk));
        assertTrue(e.getMessage().contains("junk.pem"), e.getMessage());
        var missing = assertThrows(IllegalArgumentException.class, () -> TlsTrust.sslContext(dir.resolve("nope.pem")));
        assertTrue(missing.getMessage().contains("nope.pem"), missing.getMessage());
    }
}
