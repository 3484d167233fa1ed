package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The etcd store over TLS against a real member started with {@code --client-cert-auth --trusted-ca-file
 * --cert-file --key-file} (certificates made with openssl at test time, {@link TlsEtcd}): with the CA and a client
 * certificate it reads and writes and a management server leads on it; without a client certificate, with one of
 * another CA, or over plain http the open fails at once with a message naming the options. Bad option files fail
 * before any connection, naming the option.
 */
class EtcdTlsStoreTest {
    @TempDir
    static Path dir;
    static TlsEtcd etcd;

    @BeforeAll
    static void startEtcd() throws Exception {
        TlsEtcd.assumeAvailable();
        etcd = TlsEtcd.start(Files.createDirectories(dir.resolve("tls")));
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private static EtcdMetadataStore.Config config(EtcdAccess access) {
        return new EtcdMetadataStore.Config(List.of(etcd.endpoint()), "/rdmablock-test/" + UUID.randomUUID() + "/",
                Duration.ofSeconds(5)).withAccess(access);
    }

    @Test
    void shouldReadAndWriteWithTheCaAndAClientCertificate() {
        var access = new EtcdAccess(etcd.caCert, etcd.clientCert, etcd.clientKey, null, null);
        try (var store = new EtcdMetadataStore(config(access))) {
            store.putNode(new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 1, 1, null, null));
            assertEquals("127.0.0.1:4420", store.node("n1").orElseThrow().fabricAddress());
            assertTrue(store.replaceHost("nqn.2014-08.org.example:h1", 0,
                    new HostRecord("nqn.2014-08.org.example:h1", "DHHC-1:00:c2VjcmV0:", null, 5)));
            assertEquals(1, store.hosts().size());
        }
    }

    @Test
    void shouldLeadAManagementServerOverTls() {
        var access = new EtcdAccess(etcd.caCert, etcd.clientCert, etcd.clientKey, null, null);
        var store = new EtcdMetadataStore(config(access));
        try (var server = MgmtServer.start(store, MgmtServer.Settings.of("127.0.0.1", 0, "tok"))) {
            Await.until(() -> server.leaderView().isLeader(), Duration.ofSeconds(30), "leader over TLS etcd");
        }
    }

    @Test
    void shouldFailClearlyWithoutAClientCertificate() {
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config(
                new EtcdAccess(etcd.caCert, null, null, null, null))).close());
        assertTrue(e.getMessage().contains("TLS with etcd") && e.getMessage().contains("--etcd-cert"),
                e.getMessage());
    }

    @Test
    void shouldFailClearlyWithAClientCertificateOfAnotherCa() {
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config(
                new EtcdAccess(etcd.caCert, etcd.strangerCert, etcd.strangerKey, null, null))).close());
        assertTrue(e.getMessage().contains("TLS with etcd") && e.getMessage().contains("--etcd-cert "
                + etcd.strangerCert), e.getMessage());
    }

    @Test
    void shouldFailClearlyWhenTheServerIsNotTrusted() {
        // the stranger CA did not sign the member's certificate
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config(
                new EtcdAccess(etcd.strangerCert.resolveSibling("stranger-ca.crt"), etcd.clientCert, etcd.clientKey,
                        null, null))).close());
        assertTrue(e.getMessage().contains("TLS with etcd") && e.getMessage().contains("--etcd-ca-cert"),
                e.getMessage());
    }

    @Test
    void shouldRefuseBadOptionsNamingThem() throws Exception {
        List<URI> https = List.of(etcd.endpoint());
        var noKey = assertThrows(IllegalArgumentException.class,
                () -> new EtcdAccess(etcd.caCert, etcd.clientCert, null, null, null));
        assertTrue(noKey.getMessage().contains("--etcd-cert and --etcd-key go together"), noKey.getMessage());
        var noCa = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(
                new EtcdMetadataStore.Config(https, "/p/", Duration.ofSeconds(1))));
        assertTrue(noCa.getMessage().contains("need --etcd-ca-cert"), noCa.getMessage());
        var plain = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(
                new EtcdMetadataStore.Config(List.of(URI.create("http://127.0.0.1:2379")), "/p/",
                        Duration.ofSeconds(1)).withAccess(new EtcdAccess(etcd.caCert, null, null, null, null))));
        assertTrue(plain.getMessage().contains("--etcd-ca-cert given but the endpoints"), plain.getMessage());
        Path missing = dir.resolve("missing.crt");
        var absent = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(config(
                new EtcdAccess(missing, null, null, null, null))));
        assertTrue(absent.getMessage().startsWith("invalid --etcd-ca-cert " + missing + ": cannot read it"),
                absent.getMessage());
        Path notPem = Files.writeString(dir.resolve("not.pem"), "hello");
        var garbage = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(config(
                new EtcdAccess(etcd.caCert, etcd.clientCert, notPem, null, null))));
        assertTrue(garbage.getMessage().startsWith("invalid --etcd-key " + notPem + ": not PEM"),
                garbage.getMessage());
        var userOnly = assertThrows(IllegalArgumentException.class,
                () -> new EtcdAccess(null, null, null, "root", null));
        assertTrue(userOnly.getMessage().contains("--etcd-user and --etcd-password-file go together"),
                userOnly.getMessage());
    }
}
