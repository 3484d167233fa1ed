package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtConfiguration;
import io.rdmablock.mgmt.api.store.SecretCipher;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock mgmt}'s etcd TLS and authentication options and {@code --secret-key-file}: misuse is refused
 * naming the options before anything starts; the key file (option or its system property) encrypts the stored
 * secrets and the start says so. The connections themselves: mgmt-api's EtcdTlsStoreTest and EtcdAuthStoreTest.
 */
class MgmtEtcdSecurityCliTest {
    @TempDir
    Path dir;

    private Path keyFile() throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Files.writeString(dir.resolve("secret.key"), Base64.getEncoder().encodeToString(key) + "\n");
    }

    @Test
    void shouldRefuseEtcdOptionsWithoutEndpointsOrHalfGiven() throws Exception {
        Path pem = Files.writeString(dir.resolve("x.pem"), "-----BEGIN CERTIFICATE-----\n");
        var noEndpoints = CliRun.of("mgmt", "--data-dir", dir.resolve("a").toString(), "--no-wait",
                "--etcd-ca-cert", pem.toString());
        assertEquals(ExitCodes.BAD_INPUT, noEndpoints.exitCode(), noEndpoints.err());
        assertTrue(noEndpoints.err().contains("need --etcd-endpoints"), noEndpoints.err());
        var certOnly = CliRun.of("mgmt", "--data-dir", dir.resolve("b").toString(), "--no-wait",
                "--etcd-endpoints", "https://127.0.0.1:1", "--etcd-ca-cert", pem.toString(), "--etcd-cert",
                pem.toString());
        assertEquals(ExitCodes.BAD_INPUT, certOnly.exitCode(), certOnly.err());
        assertTrue(certOnly.err().contains("--etcd-cert and --etcd-key go together"), certOnly.err());
        var httpsNoCa = CliRun.of("mgmt", "--data-dir", dir.resolve("c").toString(), "--no-wait",
                "--etcd-endpoints", "https://127.0.0.1:1");
        assertEquals(ExitCodes.BAD_INPUT, httpsNoCa.exitCode(), httpsNoCa.err());
        assertTrue(httpsNoCa.err().contains("need --etcd-ca-cert"), httpsNoCa.err());
        var userOnly = CliRun.of("mgmt", "--data-dir", dir.resolve("d").toString(), "--no-wait",
                "--etcd-endpoints", "http://127.0.0.1:1", "--etcd-user", "root");
        assertEquals(ExitCodes.BAD_INPUT, userOnly.exitCode(), userOnly.err());
        assertTrue(userOnly.err().contains("--etcd-user and --etcd-password-file go together"), userOnly.err());
    }

    @Test
    void shouldRefuseABadKeyFileNamingIt() throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.key"), "c2hvcnQ=");
        var r = CliRun.of("mgmt", "--data-dir", dir.resolve("m").toString(), "--no-wait", "--secret-key-file",
                bad.toString());
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode(), r.err());
        assertTrue(r.err().contains("invalid --secret-key-file " + bad + ": 5 bytes"), r.err());
    }

    @Test
    void shouldEncryptSecretsWithTheKeyFileOfTheSystemProperty() throws Exception {
        Path key = keyFile();
        Path data = dir.resolve("m");
        var cmd = new MgmtCommand();
        System.setProperty(MgmtConfiguration.SECRET_KEY_FILE, key.toString());
        String secret = io.rdmablock.nvme.auth.DhchapSecret.generate(0, 32, new SecureRandom()).encoded();
        CliRun r;
        try {
            r = CliRun.of(new picocli.CommandLine(cmd), "--data-dir", data.toString(), "--no-wait");
        } finally {
            System.clearProperty(MgmtConfiguration.SECRET_KEY_FILE);
        }
        try {
            assertEquals(0, r.exitCode(), r.err());
            assertTrue(r.out().contains("secrets at rest: encrypted (AES-256-GCM, --secret-key-file " + key + ")"),
                    r.out());
            var host = new io.rdmablock.mgmt.client.MgmtClient(java.net.URI.create(cmd.server.url()),
                    Files.readString(data.resolve("token")).trim());
            host.setHost("nqn.2014-08.org.example:h1", new io.rdmablock.mgmt.client.SetHostRequest(secret, null));
        } finally {
            cmd.server.close();
        }
        try (var options = new Options(); var db = RocksDB.openReadOnly(options, data.resolve("metadata").toString())) {
            String raw = new String(db.get("host/nqn.2014-08.org.example:h1".getBytes(StandardCharsets.UTF_8)),
                    StandardCharsets.UTF_8);
            assertFalse(raw.contains(secret.substring(10, 40)), raw);
            assertTrue(raw.contains(SecretCipher.PREFIX), raw);
        }
    }
}
