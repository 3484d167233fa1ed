package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmablockCliTest {
    private static final String TOKEN = "cli-test-token";
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
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + conn.length];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(conn, 0, all, args.length, conn.length);
        return CliRun.of(all);
    }

    @Test
    void shouldCreateVolumeAndPrintTable() {
        var r = run("volume", "create", "vol-1", "--size", "64M");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().startsWith("FIELD"), r.out());
        assertTrue(r.out().contains("name            vol-1"), r.out());
        assertTrue(r.out().contains("64 MiB (67108864 bytes)"), r.out());
        assertTrue(r.out().contains("nqn.2026-11.io.rdmablock:volume:vol-1"), r.out());
    }

    @Test
    void shouldPrintJsonThatParsesAsTheModel() {
        run("volume", "create", "vol-1", "--size", "2M", "--lba-size", "512");
        var r = run("volume", "get", "vol-1", "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        Volume v = Json.read(r.out(), Volume.class);
        assertEquals(2L << 20, v.sizeBytes());
        assertEquals(512, v.lbaSize());
        var list = run("volume", "list", "--output", "json");
        assertEquals(1, Json.read(list.out(), Volume[].class).length);
    }

    @Test
    void shouldListVolumesAsTable() {
        run("volume", "create", "b", "--size", "1M");
        run("volume", "create", "a", "--size", "1M");
        var r = run("volume", "list");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().split("\n");
        assertEquals(3, lines.length, r.out());
        assertTrue(lines[0].startsWith("NAME  SIZE   LBA   STATE"), lines[0]);
        assertTrue(lines[1].startsWith("a "), lines[1]);
        assertTrue(lines[2].startsWith("b "), lines[2]);
    }

    @Test
    void shouldResizeAndDelete() {
        run("volume", "create", "a", "--size", "1M");
        var grown = run("volume", "resize", "a", "--size", "2M", "-o", "json");
        assertEquals(0, grown.exitCode(), grown.err());
        assertEquals(2L << 20, Json.read(grown.out(), Volume.class).sizeBytes());
        var deleted = run("volume", "delete", "a");
        assertEquals(0, deleted.exitCode(), deleted.err());
        assertTrue(deleted.out().contains("deleting"), deleted.out());
    }

    @Test
    void shouldExitTwoNamingFieldForBadSize() {
        var r = run("volume", "create", "a", "--size", "1000");
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode());
        assertEquals("rdmablock: invalid --size: --size=1000, must be a multiple of 1048576, min=1048576, "
                + "max=70368744177664\n", r.err());
        assertEquals("", r.out());
    }

    @Test
    void shouldExitTwoForBadNameLbaSizeAndHost() {
        var name = run("volume", "create", "Bad!", "--size", "1M");
        assertEquals(ExitCodes.BAD_INPUT, name.exitCode());
        assertTrue(name.err().startsWith("rdmablock: invalid NAME: NAME=\"Bad!\", must match"), name.err());
        var lba = run("volume", "create", "a", "--size", "1M", "--lba-size", "1024");
        assertEquals(ExitCodes.BAD_INPUT, lba.exitCode());
        assertEquals("rdmablock: invalid --lba-size: --lba-size=1024, must be one of [512, 4096]\n", lba.err());
        var host = run("volume", "create", "a", "--size", "1M", "--allow-host", "host1");
        assertEquals(ExitCodes.BAD_INPUT, host.exitCode());
        assertTrue(host.err().startsWith("rdmablock: invalid allowedHosts[0]:"), host.err());
    }

    @Test
    void shouldSayWhoAVolumeAdmitsAndReplaceIt() {
        String nqn = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
        var none = run("volume", "create", "a", "--size", "1M", "-o", "json");
        assertEquals(0, none.exitCode(), none.err());
        assertEquals(List.of(), Json.read(none.out(), Volume.class).allowedHosts());
        assertTrue(none.err().contains("note: volume a admits no host yet"), none.err());
        var any = run("volume", "create", "b", "--size", "1M", "--allow-any-host", "-o", "json");
        assertEquals(List.of("*"), Json.read(any.out(), Volume.class).allowedHosts());
        assertTrue(any.err().contains("warning: volume b admits any host"), any.err());
        var both = run("volume", "create", "c", "--size", "1M", "--allow-any-host", "--allow-host", nqn);
        assertEquals(ExitCodes.BAD_INPUT, both.exitCode());
        assertTrue(both.err().startsWith("rdmablock: invalid --allow-host:"), both.err());
        var set = run("volume", "set-hosts", "a", "--allow-host", nqn, "-o", "json");
        assertEquals(0, set.exitCode(), set.err());
        assertEquals(List.of(nqn), Json.read(set.out(), Volume.class).allowedHosts());
        var nothing = run("volume", "set-hosts", "a");
        assertEquals(ExitCodes.BAD_INPUT, nothing.exitCode());
        assertTrue(nothing.err().contains("--allow-any-host or --none"), nothing.err());
        var off = run("volume", "set-hosts", "a", "--none", "-o", "json");
        assertEquals(List.of(), Json.read(off.out(), Volume.class).allowedHosts(), off.err());
    }

    private void registerMoreNodes() {
        var client = new MgmtClient(URI.create(server.url()), TOKEN);
        client.registerNode(new RegisterNodeRequest("n2", "127.0.0.1:4421", "", 2L << 30, 2L << 30));
        client.registerNode(new RegisterNodeRequest("n3", "127.0.0.1:4422", "", 4L << 30, 4L << 30));
    }

    @Test
    void shouldCreateReplicatedVolumeAndShowItsCopies() {
        registerMoreNodes();
        var created = run("volume", "create", "r", "--size", "4M", "--replicas", "3", "--min-in-sync", "3");
        assertEquals(0, created.exitCode(), created.err());
        var r = run("volume", "get", "r");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("replicas        3"), r.out());
        assertTrue(r.out().contains("minInSync       3"), r.out());
        assertTrue(r.out().contains("inSync          3/3"), r.out());
        assertTrue(r.out().contains("epoch           1"), r.out());
        assertTrue(r.out().contains("NODE  ROLE       STATE    FABRIC"), r.out());
        assertTrue(r.out().contains("n3    primary    in_sync  127.0.0.1:4422"), r.out());
        assertTrue(r.out().contains("n2    secondary  in_sync  127.0.0.1:4421"), r.out());
        assertTrue(r.out().contains("n1    secondary  in_sync  127.0.0.1:4420"), r.out());
    }

    @Test
    void shouldListReplicasInSyncCountAndEpoch() {
        registerMoreNodes();
        run("volume", "create", "r", "--size", "1M", "--replicas", "2");
        var r = run("volume", "list");
        assertEquals(0, r.exitCode(), r.err());
        String[] lines = r.out().split("\n");
        assertTrue(lines[0].startsWith("NAME  SIZE   LBA   STATE     REPLICAS  IN-SYNC  EPOCH  NODE"), lines[0]);
        assertTrue(lines[1].matches("r +1 MiB +4096 +creating +2 +2/2 +1 +n3 .*"), lines[1]);
    }

    @Test
    void shouldPrintTheRestShapeOfCopiesAsJson() {
        registerMoreNodes();
        run("volume", "create", "r", "--size", "1M", "--replicas", "2");
        var r = run("volume", "get", "r", "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        Volume v = Json.read(r.out(), Volume.class);
        assertEquals(2, v.copies().size());
        assertEquals(1, v.minInSync());
        assertTrue(r.out().contains("\"role\" : \"primary\""), r.out());
        assertTrue(r.out().contains("\"state\" : \"in_sync\""), r.out());
        assertTrue(r.out().contains("\"epoch\" : 1"), r.out());
    }

    @Test
    void shouldExitTwoNamingReplicaBounds() {
        var replicas = run("volume", "create", "a", "--size", "1M", "--replicas", "6");
        assertEquals(ExitCodes.BAD_INPUT, replicas.exitCode());
        assertEquals("rdmablock: invalid --replicas: --replicas=6, min=1, max=5\n", replicas.err());
        var zero = run("volume", "create", "a", "--size", "1M", "--replicas", "0");
        assertEquals("rdmablock: invalid --replicas: --replicas=0, min=1, max=5\n", zero.err());
        var m = run("volume", "create", "a", "--size", "1M", "--replicas", "2", "--min-in-sync", "3");
        assertEquals(ExitCodes.BAD_INPUT, m.exitCode());
        assertEquals("rdmablock: invalid --min-in-sync: --min-in-sync=3, min=1, max=replicas=2\n", m.err());
        assertEquals("", m.out());
    }

    @Test
    void shouldExitOneWhenTooFewNodesAreUp() {
        var r = run("volume", "create", "a", "--size", "1M", "--replicas", "3");
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("replicas=3"), r.err());
        assertTrue(r.err().contains("available=1"), r.err());
    }

    @Test
    void shouldExitTwoForUsageErrors() {
        var missing = run("volume", "create", "a");
        assertEquals(ExitCodes.BAD_INPUT, missing.exitCode());
        assertTrue(missing.err().contains("Missing required option: '--size=SIZE'"), missing.err());
        assertTrue(missing.err().contains("Try 'rdmablock volume create --help'"), missing.err());
        var notInt = run("volume", "create", "a", "--size", "1M", "--lba-size", "big");
        assertEquals(ExitCodes.BAD_INPUT, notInt.exitCode());
        assertTrue(notInt.err().contains("--lba-size"), notInt.err());
    }

    @Test
    void shouldExitTwoWhenServerRejectsShrink() {
        run("volume", "create", "a", "--size", "2M");
        var r = run("volume", "resize", "a", "--size", "1M");
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode());
        assertTrue(r.err().startsWith("rdmablock: Shrink not allowed (400): invalid sizeBytes"), r.err());
    }

    @Test
    void shouldExitOneForServerErrors() {
        var notFound = run("volume", "get", "nope");
        assertEquals(ExitCodes.FAILED, notFound.exitCode());
        assertTrue(notFound.err().startsWith("rdmablock: Volume not found (404): no volume named nope"),
                notFound.err());
        run("volume", "create", "a", "--size", "1M");
        var exists = run("volume", "create", "a", "--size", "1M");
        assertEquals(ExitCodes.FAILED, exists.exitCode());
        assertTrue(exists.err().contains("(409)"), exists.err());
        var noRoom = run("volume", "create", "big", "--size", "2G");
        assertEquals(ExitCodes.FAILED, noRoom.exitCode());
        assertTrue(noRoom.err().contains("No capacity (409)"), noRoom.err());
    }

    @Test
    void shouldExitOneForWrongTokenAndTwoForMissingTokenFile() {
        var wrong = CliRun.of("volume", "create", "a", "--size", "1M", "--mgmt-url", server.url(), "--token", "nope");
        assertEquals(ExitCodes.FAILED, wrong.exitCode());
        assertTrue(wrong.err().contains("Unauthorized (401)"), wrong.err());
        var file = CliRun.of("volume", "list", "--mgmt-url", server.url(), "--token-file",
                dir.resolve("absent").toString());
        assertEquals(ExitCodes.BAD_INPUT, file.exitCode());
        assertTrue(file.err().startsWith("rdmablock: invalid --token-file: cannot read"), file.err());
    }

    @Test
    void shouldPrintServerErrorsAsJsonWithOutputJson() {
        var r = run("volume", "get", "nope", "-o", "json");
        assertEquals(ExitCodes.FAILED, r.exitCode());
        var error = Json.read(r.err(), java.util.Map.class);
        assertEquals(1, error.get("exitCode"), r.err());
        assertTrue(error.get("error").toString().startsWith("Volume not found (404)"), r.err());
        assertEquals(404, ((java.util.Map<?, ?>) error.get("problem")).get("status"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void shouldPrintBadInputAsJsonWithOutputJson() {
        var local = run("volume", "create", "a", "--size", "1.5M", "--output=json");
        assertEquals(ExitCodes.BAD_INPUT, local.exitCode());
        assertTrue(Json.read(local.err(), java.util.Map.class).get("error").toString().contains("--size"), local.err());
        var usage = run("volume", "create", "a", "--lba-size", "x", "-o", "json");
        assertEquals(ExitCodes.BAD_INPUT, usage.exitCode());
        assertEquals(2, Json.read(usage.err(), java.util.Map.class).get("exitCode"), usage.err());
        var plain = run("volume", "get", "nope");
        assertTrue(plain.err().startsWith("rdmablock: "), plain.err());
    }

    @Test
    void shouldGenerateACompletionScriptCoveringSubcommands() {
        var r = CliRun.of("completion");
        assertEquals(ExitCodes.OK, r.exitCode(), r.err());
        assertTrue(r.out().contains("complete -F _complete_rdmablock"), r.out());
        assertTrue(r.out().contains("volume") && r.out().contains("resize") && r.out().contains("--token-file"),
                r.out());
    }

    @Test
    void shouldExitThreeWhenServerIsUnreachable() throws Exception {
        int port;
        try (var socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        var r = CliRun.of("volume", "list", "--mgmt-url", "http://127.0.0.1:" + port);
        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertTrue(r.err().startsWith("rdmablock: management server unavailable"), r.err());
        var bad = CliRun.of("volume", "list", "--mgmt-url", "ftp://x");
        assertEquals(ExitCodes.BAD_INPUT, bad.exitCode());
        assertTrue(bad.err().startsWith("rdmablock: invalid --mgmt-url"), bad.err());
        var badList = CliRun.of("volume", "list", "--mgmt-url", "http://127.0.0.1:" + port + ",127.0.0.1:9");
        assertEquals(ExitCodes.BAD_INPUT, badList.exitCode());
        assertTrue(badList.err().startsWith("rdmablock: invalid --mgmt-url: element 2 \"127.0.0.1:9\""),
                badList.err());
        var list = CliRun.of("volume", "list", "--mgmt-url", "http://127.0.0.1:" + port + ",http://127.0.0.1:1");
        assertEquals(ExitCodes.UNAVAILABLE, list.exitCode());
        assertTrue(list.err().contains("127.0.0.1:" + port) && list.err().contains("127.0.0.1:1/"), list.err());
    }

    @Test
    void shouldUseSecondManagementUrlWhenFirstIsDown() throws Exception {
        int port;
        try (var socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        var r = CliRun.of("volume", "list", "--mgmt-url", "http://127.0.0.1:" + port + "," + server.url(),
                "--token", TOKEN);
        assertEquals(0, r.exitCode(), r.err());
    }

    @Test
    void shouldListAndDrainNodes() {
        var list = run("node", "list");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().startsWith("NODE  STATE  FABRIC"), list.out());
        assertTrue(list.out().contains("n1    up     127.0.0.1:4420  1 GiB"), list.out());
        var drain = run("node", "drain", "n1");
        assertEquals(0, drain.exitCode(), drain.err());
        assertTrue(drain.out().contains("draining"), drain.out());
        var missing = run("node", "drain", "n9");
        assertEquals(ExitCodes.FAILED, missing.exitCode());
        var undrain = run("node", "undrain", "n1");
        assertEquals(0, undrain.exitCode(), undrain.err());
        assertTrue(undrain.out().contains("n1    up"), undrain.out());
    }

    @Test
    void shouldRotateANodeKeyPrintingItsFingerprint() {
        var r = run("node", "rotate-key", "n1");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().matches("node n1 has a new node key, fingerprint [0-9a-f]{16}\\R"), r.out());
        var json = run("node", "rotate-key", "n1", "-o", "json");
        assertEquals(0, json.exitCode(), json.err());
        assertTrue(json.out().contains("\"keyFingerprint\""), json.out());
        assertEquals(ExitCodes.FAILED, run("node", "rotate-key", "n9").exitCode());
    }

    @Test
    void shouldRefuseToRemoveANodeHoldingAVolumeAndRemoveItOnceEmpty() {
        assertEquals(0, run("volume", "create", "held", "--size", "1M").exitCode());
        var refused = run("node", "remove", "n1");
        assertEquals(ExitCodes.FAILED, refused.exitCode());
        assertTrue(refused.err().contains("(409)") && refused.err().contains("held"), refused.err());
        assertEquals(0, run("volume", "delete", "held", "--force").exitCode());
    }

    @Test
    void shouldRunMgmtServerWithGeneratedToken() throws Exception {
        var cmd = new MgmtCommand();
        var cli = new picocli.CommandLine(cmd);
        Path data = dir.resolve("mgmt2");
        var r = CliRun.of(cli, "--listen", "127.0.0.1:0", "--data-dir", data.toString(), "--no-wait");
        try {
            assertEquals(0, r.exitCode(), r.err());
            String token = Files.readString(data.resolve("token")).trim();
            assertEquals(64, token.length());
            assertTrue(r.out().contains("management API: http://127.0.0.1:" + cmd.server.port()), r.out());
            assertTrue(r.out().contains("token: " + token), r.out());
            var client = new MgmtClient(URI.create(cmd.server.url()), token);
            assertTrue(client.health());
            client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
            String readToken = Files.readString(data.resolve("read-token")).trim();
            assertEquals(64, readToken.length());
            assertTrue(r.out().contains("read token: " + readToken), r.out());
            String url = cmd.server.url();
            var list = CliRun.of("node", "list", "--mgmt-url", url, "--token", readToken);
            assertEquals(0, list.exitCode(), list.err());
            assertTrue(list.out().contains("n1"), list.out());
            var create = CliRun.of("volume", "create", "a", "--size", "1M", "--mgmt-url", url, "--token", readToken);
            assertEquals(1, create.exitCode(), create.err());
            assertTrue(create.err().contains("403") || create.err().contains("Forbidden"), create.err());
            var none = CliRun.of("volume", "get", "a", "--mgmt-url", url);
            assertEquals(1, none.exitCode(), none.err());
            assertTrue(none.err().contains("401") || none.err().contains("Unauthorized"), none.err());
        } finally {
            if (cmd.server != null) {
                cmd.server.close();
            }
        }
    }

    @Test
    void shouldNotPrintATokenItWasGiven() throws Exception {
        Path tokenFile = dir.resolve("given-token");
        Files.writeString(tokenFile, "secret-given-token\n");
        var cmd = new MgmtCommand();
        var r = CliRun.of(new picocli.CommandLine(cmd), "--listen", "127.0.0.1:0", "--data-dir",
                dir.resolve("mgmt4").toString(), "--token-file", tokenFile.toString(), "--no-wait");
        try {
            assertEquals(0, r.exitCode(), r.err());
            assertFalse(r.out().contains("secret-given-token"), r.out());
            assertTrue(r.out().contains("token source: --token-file " + tokenFile), r.out());
        } finally {
            if (cmd.server != null) {
                cmd.server.close();
            }
        }
    }

    @Test
    void shouldRefuseToPromoteWhileThePrimaryHoldsItsLease() {
        new MgmtClient(URI.create(server.url()), TOKEN)
                .registerNode(new RegisterNodeRequest("n2", "127.0.0.1:4421", "", 1L << 29, 1L << 29));
        run("volume", "create", "r", "--size", "1M", "--replicas", "2");
        // the primary's node seen just now (a registration counts as a heartbeat): on a loaded box more than the
        // 2 s lease can pass between the set-up's registration and the promote, which then succeeds
        new MgmtClient(URI.create(server.url()), TOKEN)
                .registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        var r = run("volume", "promote", "r", "--node", "n2");
        assertEquals(1, r.exitCode(), r.err());
        assertTrue(r.err().contains("primary-alive") || r.err().contains("within the lease"), r.err());
        var missing = run("volume", "promote", "r");
        assertEquals(ExitCodes.BAD_INPUT, missing.exitCode());
        assertTrue(missing.err().contains("--node"), missing.err());
        var primary = run("volume", "promote", "r", "--node", "n1", "--accept-data-loss");
        assertEquals(1, primary.exitCode(), primary.err());
        assertTrue(primary.err().contains("already holds the primary"), primary.err());
    }

    @Test
    void shouldRejectALeaseOutOfBounds() {
        var r = CliRun.of("mgmt", "--lease-ms", "50", "--data-dir", dir.resolve("m4").toString());
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode());
        assertTrue(r.err().startsWith("rdmablock: invalid --lease-ms: --lease-ms=50, min=100, max=600000"), r.err());
    }

    @Test
    void shouldRejectBadListenAddress() {
        var r = CliRun.of("mgmt", "--listen", "nohost", "--data-dir", dir.resolve("m3").toString());
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode());
        assertTrue(r.err().startsWith("rdmablock: invalid --listen: --listen=\"nohost\""), r.err());
    }

    @Test
    void shouldWireEveryModuleCommand() {
        var help = CliRun.of("--help");
        assertEquals(0, help.exitCode());
        assertTrue(help.out().contains("mgmt"), help.out());
        assertTrue(help.out().contains("volume"), help.out());
        for (String name : new String[] {"node", "import", "export", "bench", "nbd", "replay", "stack-bench"}) {
            assertTrue(RdmablockCli.commandLine().getSubcommands().containsKey(name), name);
            assertTrue(help.out().contains(name), name + ": " + help.out());
        }
        assertEquals(io.rdmablock.node.NodeCommand.class,
                RdmablockCli.commandLine().getSubcommands().get("node").getCommand().getClass());
        var noDataDir = CliRun.of("node", "--listen", "127.0.0.1:1");
        assertEquals(ExitCodes.BAD_INPUT, noDataDir.exitCode(), noDataDir.err());
        assertTrue(noDataDir.err().startsWith("rdmablock: ") && noDataDir.err().contains("--data-dir"), noDataDir.err());
    }
}
