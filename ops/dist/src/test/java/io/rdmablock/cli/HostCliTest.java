package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.Host;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rdmablock host set|list|get|remove} and {@code volume create --require-auth} against a real server. */
class HostCliTest {
    private static final String TOKEN = "cli-test-token";
    private static final String NQN = "nqn.2014-08.org.nvmexpress:uuid:0c110000-0000-4000-8000-000000000001";
    private static final SecureRandom RANDOM = new SecureRandom();
    @TempDir
    Path dir;
    private MgmtServer server;
    private String[] conn;

    @BeforeEach
    void startServer() {
        server = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, 60_000);
        new MgmtClient(URI.create(server.url()), TOKEN)
                .registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        conn = new String[] {"--mgmt-url", server.url(), "--token", TOKEN};
    }

    @AfterEach
    void stopServer() {
        server.close();
        HostCommand.environment = System.getenv();
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + conn.length];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(conn, 0, all, args.length, conn.length);
        return CliRun.of(all);
    }

    private static String secret() {
        return DhchapSecret.generate(1, 32, RANDOM).encoded();
    }

    @Test
    void shouldSetAHostFromAFileAndNeverPrintTheSecret() throws Exception {
        String s = secret();
        Path file = dir.resolve("host.key");
        Files.writeString(file, s + "\n");
        var r = run("host", "set", NQN, "--dhchap-secret-file", file.toString());
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().startsWith("HOSTNQN"), r.out());
        assertTrue(r.out().contains(NQN), r.out());
        assertFalse(r.out().contains("DHHC-1") || r.err().contains("DHHC-1"), r.out() + r.err());
        var get = run("host", "get", NQN, "-o", "json");
        assertEquals(0, get.exitCode(), get.err());
        Host h = Json.read(get.out().substring(get.out().indexOf('{'), get.out().lastIndexOf('}') + 1), Host.class);
        assertEquals("sha256", h.hash());
        assertFalse(h.bidirectional());
        var list = run("host", "list");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().contains(h.fingerprint()), list.out());
    }

    @Test
    void shouldSetABidirectionalHostFromOptionsAndTheEnvironment() {
        HostCommand.environment = Map.of(HostCommand.CTRL_SECRET_ENV, secret());
        var r = run("host", "set", NQN, "--dhchap-secret", secret(), "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("\"bidirectional\" : true"), r.out());
    }

    @Test
    void shouldExitTwoNamingTheOptionForABadSecretWithoutShowingIt() {
        String s = secret();
        String bad = s.substring(0, 20) + (s.charAt(20) == 'A' ? 'B' : 'A') + s.substring(21);
        var r = run("host", "set", NQN, "--dhchap-secret", bad);
        assertEquals(2, r.exitCode(), r.err());
        assertTrue(r.err().contains("--dhchap-secret"), r.err());
        assertFalse(r.err().contains(bad.substring(7, 40)), r.err());
        var none = run("host", "set", NQN);
        assertEquals(2, none.exitCode(), none.err());
        assertTrue(none.err().contains("a host secret is required"), none.err());
        var badNqn = run("host", "get", "host-1");
        assertEquals(2, badNqn.exitCode(), badNqn.err());
        assertTrue(badNqn.err().contains("HOSTNQN"), badNqn.err());
    }

    @Test
    void shouldRemoveAHostAndExitOneWhenItIsGone() {
        assertEquals(0, run("host", "set", NQN, "--dhchap-secret", secret()).exitCode());
        var r = run("host", "remove", NQN);
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("removed"), r.out());
        var gone = run("host", "get", NQN);
        assertEquals(1, gone.exitCode(), gone.err());
        assertTrue(gone.err().contains("host-not-found") || gone.err().contains("no host"), gone.err());
    }

    @Test
    void shouldCreateAVolumeRequiringAuthentication() {
        var r = run("volume", "create", "vol-a", "--size", "2M", "--require-auth", "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(Json.read(r.out(), Volume.class).requireAuth());
        var plain = run("volume", "create", "vol-b", "--size", "2M");
        assertTrue(plain.out().contains("requireAuth     false"), plain.out());
        var on = run("volume", "require-auth", "vol-b", "on");
        assertEquals(0, on.exitCode(), on.err());
        assertTrue(on.out().contains("requireAuth     true"), on.out());
        var bad = run("volume", "require-auth", "vol-b", "yes");
        assertEquals(2, bad.exitCode(), bad.err());
        assertTrue(bad.err().contains("on|off"), bad.err());
    }
}
