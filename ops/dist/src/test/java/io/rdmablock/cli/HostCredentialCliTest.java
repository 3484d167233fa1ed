package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.IssuedHostCredential;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rdmablock host credential create|list|revoke} against a real server. */
class HostCredentialCliTest {
    private static final String TOKEN = "cli-test-token";
    private static final String NQN = "nqn.2014-08.org.nvmexpress:uuid:0c110000-0000-4000-8000-000000000002";
    @TempDir
    Path dir;
    private MgmtServer server;
    private String[] conn;

    @BeforeEach
    void startServer() {
        server = MgmtServer.start(dir.resolve("mgmt"), null, MgmtServer.Settings.of("127.0.0.1", 0, TOKEN)
                .withNodeTimeoutMs(60_000).withSweepIntervalMs(3_600_000));
        var operator = new MgmtClient(URI.create(server.url()), TOKEN);
        operator.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        operator.createVolume(new CreateVolumeRequest("v", 1L << 20, 4096, 1, 1, List.of(NQN), false));
        conn = new String[] {"--mgmt-url", server.url(), "--token", TOKEN};
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + conn.length];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(conn, 0, all, args.length, conn.length);
        return CliRun.of(all);
    }

    @Test
    void shouldCreateListAndRevokeAHostCredential() {
        var created = run("host", "credential", "create", "--host-nqn", NQN, "-o", "json");
        assertEquals(0, created.exitCode(), created.err());
        IssuedHostCredential issued = Json.read(created.out(), IssuedHostCredential.class);
        assertTrue(issued.credential().startsWith("rbh1:" + issued.id() + ":"), created.out());
        var host = new MgmtClient(URI.create(server.url()), issued.credential());
        assertEquals("v", host.getVolume("v").name());
        var list = run("host", "credential", "list");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().startsWith("ID"), list.out());
        assertTrue(list.out().contains(issued.id()) && list.out().contains(NQN), list.out());
        assertFalse(list.out().contains(issued.credential()), list.out());
        var revoked = run("host", "credential", "revoke", issued.id());
        assertEquals(0, revoked.exitCode(), revoked.err());
        assertEquals(401, assertThrows(MgmtException.class, () -> host.getVolume("v")).status());
        var again = run("host", "credential", "revoke", issued.id());
        assertEquals(ExitCodes.FAILED, again.exitCode(), again.err());
        assertTrue(again.err().contains("no host credential with id " + issued.id()), again.err());
    }

    @Test
    void shouldWriteTheCredentialToAFileOwnerOnly() throws Exception {
        Path file = dir.resolve("host-credential");
        var created = run("host", "credential", "create", "--host-nqn", NQN, "--credential-file", file.toString());
        assertEquals(0, created.exitCode(), created.err());
        String credential = Files.readString(file).trim();
        assertTrue(credential.startsWith("rbh1:"), "written");
        assertFalse(created.out().contains(credential), created.out());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals("v", new MgmtClient(URI.create(server.url()), credential).getVolume("v").name());
    }

    @Test
    void shouldNameTheFieldOfABadNqnOrId() {
        var badNqn = run("host", "credential", "create", "--host-nqn", "not-an-nqn");
        assertEquals(2, badNqn.exitCode(), badNqn.err());
        assertTrue(badNqn.err().contains("--host-nqn") && badNqn.err().contains("max bytes=223"), badNqn.err());
        var badId = run("host", "credential", "revoke", "Bad/Id");
        assertEquals(2, badId.exitCode(), badId.err());
        assertTrue(badId.err().contains("ID") && badId.err().contains("1..63"), badId.err());
    }
}
