package io.rdmablock.mgmt.api.store;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The secrets a store keeps (hosts' DH-HMAC-CHAP secrets, node keys) encrypted at rest on a real etcd
 * ({@link SecretCipher} under a {@code --secret-key-file}): the raw etcd value holds no secret, the store reads it back
 * equal, a value written in clear by an older version still reads and is sealed at its next write, a wrong key or no
 * key fails naming the key file or the option, never garbage; bad key files are refused naming the option.
 */
class EtcdSecretEncryptionTest {
    static final String NQN = "nqn.2014-08.org.example:host-1";
    static final String SECRET = "DHHC-1:00:ZGhjaGFwLXRlc3Qtc2VjcmV0LW9mLWhvc3Qtb25lLTMyYnl0ZXM=:";
    static final String CTRL = "DHHC-1:01:Y29udHJvbGxlci1zZWNyZXQtb2YtaG9zdC1vbmUtMzJieXQ=:";
    static final String NODE_KEY = Base64.getEncoder().encodeToString("node-key-of-n1-is-32-bytes-long!".getBytes(
            StandardCharsets.US_ASCII));
    @TempDir
    static Path dir;
    static EtcdCluster etcd;
    static Path keyFile;
    static Path otherKeyFile;

    @BeforeAll
    static void startEtcd() throws Exception {
        EtcdCluster.assumeAvailable();
        etcd = EtcdCluster.start(dir, 1);
        keyFile = newKeyFile("secret.key");
        otherKeyFile = newKeyFile("other.key");
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    /** As documented: {@code head -c 32 /dev/urandom | base64 > FILE}. */
    private static Path newKeyFile(String name) throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Files.writeString(dir.resolve(name), Base64.getEncoder().encodeToString(key) + "\n");
    }

    private static EtcdMetadataStore open(String prefix, Path key) {
        var config = new EtcdMetadataStore.Config(etcd.endpoints(), prefix, Duration.ofSeconds(5));
        return new EtcdMetadataStore(key == null ? config : config.withSecrets(SecretCipher.fromKeyFile(key)));
    }

    private static String raw(Client client, String key) throws Exception {
        var kvs = client.getKVClient().get(ByteSequence.from(key, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS)
                .getKvs();
        return kvs.isEmpty() ? null : kvs.getFirst().getValue().toString(StandardCharsets.UTF_8);
    }

    private static String prefix() {
        return "/rdmablock-test/" + UUID.randomUUID() + "/";
    }

    @Test
    void shouldStoreSecretsEncryptedAndReadThemBack() throws Exception {
        String prefix = prefix();
        var host = new HostRecord(NQN, SECRET, CTRL, 7);
        var node = new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 1, 1, NODE_KEY, null);
        try (var store = open(prefix, keyFile); Client plain = EtcdMetadataStore.newClient(etcd.endpoints())) {
            assertTrue(store.replaceHost(NQN, 0, host));
            store.putNode(node);
            String rawHost = raw(plain, prefix + "hosts/" + NQN);
            String rawNode = raw(plain, prefix + "nodes/n1");
            for (String clear : new String[] {SECRET, CTRL, "ZGhjaGFwLXRlc3Qtc2VjcmV0", "Y29udHJvbGxlci1zZWNyZXQ"}) {
                assertFalse(rawHost.contains(clear), "the raw host value holds no secret: " + rawHost);
            }
            assertFalse(rawNode.contains(NODE_KEY), rawNode);
            assertTrue(rawHost.contains("\"dhchapSecret\":\"" + SecretCipher.PREFIX), rawHost);
            assertTrue(rawNode.contains(SecretCipher.PREFIX), rawNode);
            assertTrue(rawHost.contains(NQN), "only the secrets are sealed: " + rawHost);
            assertEquals(host, store.hostVersioned(NQN).orElseThrow().value());
            assertEquals(host, store.hosts().getFirst().value());
            assertEquals(node, store.node("n1").orElseThrow());
            // a compare-and-set by value compares the opened records, whatever the nonces
            var next = node.withDraining(true);
            assertTrue(store.replaceNode("n1", node, next));
            assertEquals(next, store.node("n1").orElseThrow());
        }
        try (var again = open(prefix, keyFile)) { // another server with the same key file
            assertEquals(host, again.hostVersioned(NQN).orElseThrow().value());
        }
    }

    @Test
    void shouldReadValuesWrittenInClearAndSealThemAtTheNextWrite() throws Exception {
        String prefix = prefix();
        var host = new HostRecord(NQN, SECRET, null, 7);
        try (var old = open(prefix, null); Client plain = EtcdMetadataStore.newClient(etcd.endpoints())) {
            assertTrue(old.replaceHost(NQN, 0, host)); // an older version, or no key file: in clear
            assertTrue(raw(plain, prefix + "hosts/" + NQN).contains(SECRET));
            try (var store = open(prefix, keyFile)) {
                var read = store.hostVersioned(NQN).orElseThrow();
                assertEquals(host, read.value());
                var next = new HostRecord(NQN, SECRET, CTRL, 8);
                assertTrue(store.replaceHost(NQN, read.revision(), next));
                String rawHost = raw(plain, prefix + "hosts/" + NQN);
                assertFalse(rawHost.contains(SECRET) || rawHost.contains(CTRL), rawHost);
                assertEquals(next, store.hostVersioned(NQN).orElseThrow().value());
            }
        }
    }

    @Test
    void shouldFailClearlyWithAWrongKeyOrNoKey() {
        String prefix = prefix();
        try (var store = open(prefix, keyFile)) {
            assertTrue(store.replaceHost(NQN, 0, new HostRecord(NQN, SECRET, null, 7)));
        }
        try (var wrong = open(prefix, otherKeyFile)) {
            var e = assertThrows(MetadataStoreException.class, () -> wrong.hostVersioned(NQN));
            assertTrue(e.getMessage().contains("cannot decrypt host/" + NQN + "/dhchapSecret with the key of "
                    + "--secret-key-file " + otherKeyFile + ": wrong key"), e.getMessage());
            assertFalse(e.getMessage().contains(SECRET));
            assertThrows(MetadataStoreException.class, wrong::hosts);
        }
        try (var none = open(prefix, null)) {
            var e = assertThrows(MetadataStoreException.class, () -> none.hostVersioned(NQN));
            assertTrue(e.getMessage().contains("it is encrypted") && e.getMessage().contains("no --secret-key-file"),
                    e.getMessage());
        }
    }

    @Test
    void shouldRefuseBadKeyFilesNamingTheOption() throws Exception {
        Path missing = dir.resolve("missing.key");
        var m = assertThrows(IllegalArgumentException.class, () -> SecretCipher.fromKeyFile(missing));
        assertTrue(m.getMessage().startsWith("invalid --secret-key-file " + missing + ": cannot read it"),
                m.getMessage());
        Path garbage = Files.writeString(dir.resolve("garbage.key"), "not base64 at all!\n");
        var g = assertThrows(IllegalArgumentException.class, () -> SecretCipher.fromKeyFile(garbage));
        assertTrue(g.getMessage().startsWith("invalid --secret-key-file " + garbage + ": not base64"), g.getMessage());
        Path shortKey = Files.writeString(dir.resolve("short.key"), Base64.getEncoder().encodeToString(new byte[16]));
        var s = assertThrows(IllegalArgumentException.class, () -> SecretCipher.fromKeyFile(shortKey));
        assertTrue(s.getMessage().startsWith("invalid --secret-key-file " + shortKey + ": 16 bytes after base64 "
                + "decoding, must be 32"), s.getMessage());
    }

    @Test
    void shouldBindEachValueToItsRecordAndField() {
        var cipher = SecretCipher.fromKeyFile(keyFile);
        String sealed = cipher.seal("host/a/dhchapSecret", SECRET);
        assertEquals(SECRET, cipher.open("host/a/dhchapSecret", sealed));
        assertThrows(MetadataStoreException.class, () -> cipher.open("host/b/dhchapSecret", sealed));
        assertThrows(MetadataStoreException.class, () -> cipher.open("host/a/dhchapCtrlSecret", sealed));
        assertFalse(sealed.equals(cipher.seal("host/a/dhchapSecret", SECRET)), "a fresh nonce per value");
        assertEquals(SECRET, SecretCipher.NONE.seal("host/a/dhchapSecret", SECRET), "no key: in clear as before");
    }
}
