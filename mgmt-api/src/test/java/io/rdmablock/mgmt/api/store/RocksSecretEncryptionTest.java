package io.rdmablock.mgmt.api.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The embedded store seals the secrets as the etcd store does ({@link SecretCipher}, EtcdSecretEncryptionTest): the
 * database holds no secret in clear, reads give them back, values written in clear still read, a wrong key fails
 * naming the key file.
 */
class RocksSecretEncryptionTest {
    static final String NQN = "nqn.2014-08.org.example:host-1";
    static final String SECRET = "DHHC-1:00:ZGhjaGFwLXRlc3Qtc2VjcmV0LW9mLWhvc3Qtb25lLTMyYnl0ZXM=:";
    static final String NODE_KEY = Base64.getEncoder().encodeToString(new byte[32]);

    private static Path keyFile(Path dir, String name) throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Files.writeString(dir.resolve(name), Base64.getEncoder().encodeToString(key));
    }

    private static String raw(Path db, String key) throws Exception {
        try (var options = new Options(); var rocks = RocksDB.openReadOnly(options, db.toString())) {
            byte[] v = rocks.get(key.getBytes(StandardCharsets.UTF_8));
            return v == null ? null : new String(v, StandardCharsets.UTF_8);
        }
    }

    @Test
    void shouldSealSecretsInTheDatabase(@TempDir Path dir) throws Exception {
        Path db = dir.resolve("metadata");
        var cipher = SecretCipher.fromKeyFile(keyFile(dir, "k"));
        var host = new HostRecord(NQN, SECRET, null, 3);
        var node = new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 1, 1, NODE_KEY, null);
        try (var store = new RocksMetadataStore(db)) { // an older version: in clear
            assertTrue(store.replaceHost(NQN, 0, host));
        }
        assertTrue(raw(db, "host/" + NQN).contains(SECRET));
        try (var store = new RocksMetadataStore(db, cipher)) {
            var read = store.hostVersioned(NQN).orElseThrow();
            assertEquals(host, read.value(), "a value written in clear still reads");
            assertTrue(store.replaceHost(NQN, read.revision(), host));
            store.putNode(node);
            assertTrue(store.replaceNode("n1", node, node.drained()));
        }
        String rawHost = raw(db, "host/" + NQN);
        String rawNode = raw(db, "node/n1");
        assertFalse(rawHost.contains(SECRET), rawHost);
        assertFalse(rawNode.contains(NODE_KEY), rawNode);
        assertTrue(rawHost.contains(SecretCipher.PREFIX) && rawNode.contains(SecretCipher.PREFIX));
        try (var store = new RocksMetadataStore(db, cipher)) {
            assertEquals(host, store.hosts().getFirst().value());
            assertEquals(node.drained(), store.node("n1").orElseThrow());
        }
        Path other = keyFile(dir, "other");
        try (var store = new RocksMetadataStore(db, SecretCipher.fromKeyFile(other))) {
            var e = assertThrows(MetadataStoreException.class, () -> store.node("n1"));
            assertTrue(e.getMessage().contains("--secret-key-file " + other), e.getMessage());
        }
    }
}
