package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The etcd store against a real member with authentication enabled (users {@code root} and {@code rdmablock}, the
 * latter with a read-write role on {@value #PREFIX} only, made with jetcd's Auth client): with {@code --etcd-user}
 * and {@code --etcd-password-file} it reads and writes; a wrong password, no user, or a prefix outside the user's role
 * fail the open at once with a message naming the options. A management server leads as that user.
 */
class EtcdAuthStoreTest {
    static final String PREFIX = "/rdmablock-auth/";
    static final String PASSWORD = "s3cret-pw";
    @TempDir
    static Path dir;
    static EtcdCluster etcd;

    @BeforeAll
    static void startEtcdWithAuth() throws Exception {
        EtcdCluster.assumeAvailable();
        etcd = EtcdCluster.start(dir, 1);
        try (Client admin = EtcdMetadataStore.newClient(etcd.endpoints())) {
            var auth = admin.getAuthClient();
            auth.userAdd(bytes("root"), bytes("root-pw")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("rdmablock"), bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("rdmablock")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bytes("rdmablock"), bytes(PREFIX),
                    ByteSequence.from(EtcdMetadataStore.prefixEnd(PREFIX.getBytes(StandardCharsets.UTF_8))),
                    Permission.Type.READWRITE).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("rdmablock"), bytes("rdmablock")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static EtcdMetadataStore.Config config(String prefix, EtcdAccess access) {
        return new EtcdMetadataStore.Config(etcd.endpoints(), prefix, Duration.ofSeconds(5)).withAccess(access);
    }

    private static Path passwordFile(String name, String content) throws Exception {
        return Files.writeString(dir.resolve(name), content);
    }

    @Test
    void shouldReadAndWriteWithUserAndPasswordFile() throws Exception {
        Path pw = passwordFile("pw", PASSWORD + "\n");
        try (var store = new EtcdMetadataStore(config(PREFIX + "a/", new EtcdAccess(null, null, null, "rdmablock",
                pw)))) {
            store.putNode(new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 1, 1, null, null));
            assertEquals("127.0.0.1:4420", store.node("n1").orElseThrow().fabricAddress());
            assertEquals(1, store.nodes().size());
        }
    }

    /** The election and its lease work with a user whose role covers only the prefix (as docs/configuration.md says). */
    @Test
    void shouldLeadAManagementServerAsAUserWithARoleOnThePrefix() throws Exception {
        Path pw = passwordFile("pw-lead", PASSWORD);
        var store = new EtcdMetadataStore(config(PREFIX + "lead/", new EtcdAccess(null, null, null, "rdmablock", pw)));
        try (var server = MgmtServer.start(store, MgmtServer.Settings.of("127.0.0.1", 0, "tok"))) {
            Await.until(() -> server.leaderView().isLeader(), Duration.ofSeconds(30), "leader as etcd user rdmablock");
        }
    }

    @Test
    void shouldFailClearlyWithAWrongPassword() throws Exception {
        Path pw = passwordFile("wrong-pw", "not-the-password\n");
        long start = System.nanoTime();
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config(PREFIX + "b/",
                new EtcdAccess(null, null, null, "rdmablock", pw))).close());
        assertTrue(e.getMessage().contains("refused --etcd-user rdmablock with the password of --etcd-password-file "
                + pw), e.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "refused at once, not retried");
    }

    @Test
    void shouldFailClearlyWithoutAUser() {
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config(PREFIX + "c/",
                EtcdAccess.NONE)).close());
        assertTrue(e.getMessage().contains("give --etcd-user and --etcd-password-file"), e.getMessage());
    }

    @Test
    void shouldFailClearlyOutsideTheUsersRole() throws Exception {
        Path pw = passwordFile("pw-d", PASSWORD);
        var e = assertThrows(MetadataStoreException.class, () -> new EtcdMetadataStore(config("/elsewhere/",
                new EtcdAccess(null, null, null, "rdmablock", pw))).close());
        assertTrue(e.getMessage().contains("lacks a role on the prefix /elsewhere/"), e.getMessage());
    }

    @Test
    void shouldRefuseAnEmptyOrMissingPasswordFile() throws Exception {
        Path empty = passwordFile("empty", "\n");
        var e = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(config(PREFIX + "e/",
                new EtcdAccess(null, null, null, "rdmablock", empty))));
        assertEquals("invalid --etcd-password-file " + empty + ": empty first line", e.getMessage());
        Path missing = dir.resolve("no-such-file");
        var m = assertThrows(IllegalArgumentException.class, () -> new EtcdMetadataStore(config(PREFIX + "e/",
                new EtcdAccess(null, null, null, "rdmablock", missing))));
        assertTrue(m.getMessage().startsWith("invalid --etcd-password-file " + missing + ": cannot read it"),
                m.getMessage());
    }
}
