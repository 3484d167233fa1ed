package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code node background NODE}, {@code node get} and {@code node list} against a real server (docs/qos.md). */
class NodeBackgroundCliTest {
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
    void shouldSetShowAndResetTheBackgroundBudget() {
        var get = run("node", "get", "n1");
        assertEquals(0, get.exitCode(), get.err());
        assertTrue(get.out().contains("start-up; now ?"), get.out());
        var set = run("node", "background", "n1", "--max-mib-s", "100", "--min-mib-s", "10", "-o", "json");
        assertEquals(0, set.exitCode(), set.err());
        assertEquals(new NodeBackground(100, 10), Json.read(set.out().substring(set.out().indexOf('{'),
                set.out().lastIndexOf('}') + 1), Node.class).background());
        var list = run("node", "list");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().contains("BACKGROUND") && list.out().contains("set 10..100 MiB/s"), list.out());
        var json = run("node", "get", "n1", "-o", "json");
        assertEquals(0, json.exitCode(), json.err());
        assertEquals(new NodeBackground(100, 10), Json.read(json.out(), Node.class).background(), "one object");
        var onlyMax = run("node", "background", "n1", "--max-mib-s", "2");
        assertEquals(0, onlyMax.exitCode(), onlyMax.err());
        assertTrue(onlyMax.out().contains("set 2..2 MiB/s"), "floor default min(4, max): " + onlyMax.out());
        var reset = run("node", "background", "n1", "--reset");
        assertEquals(0, reset.exitCode(), reset.err());
        assertTrue(reset.out().contains("start-up"), reset.out());
        assertNull(new MgmtClient(URI.create(server.url()), TOKEN).getNode("n1").background());
    }

    @Test
    void shouldRefuseBadBoundsBeforeSendingNamingTheOption() {
        String[][] bad = {
                {"--max-mib-s", "0"}, {"--max-mib-s", "100001"}, {"--max-mib-s", "-5"},
        };
        for (String[] b : bad) {
            var r = run("node", "background", "n1", b[0], b[1]);
            assertEquals(2, r.exitCode(), r.err());
            assertTrue(r.err().contains("--max-mib-s") && r.err().contains("max=100000"), r.err());
        }
        var minAbove = run("node", "background", "n1", "--max-mib-s", "10", "--min-mib-s", "20");
        assertEquals(2, minAbove.exitCode(), minAbove.err());
        assertTrue(minAbove.err().contains("--min-mib-s") && minAbove.err().contains("max=10"), minAbove.err());
        var nothing = run("node", "background", "n1");
        assertEquals(2, nothing.exitCode(), nothing.err());
        assertTrue(nothing.err().contains("--max-mib-s"), nothing.err());
        var both = run("node", "background", "n1", "--reset", "--max-mib-s", "10");
        assertEquals(2, both.exitCode(), both.err());
        var unknown = run("node", "background", "nope", "--max-mib-s", "10");
        assertTrue(unknown.exitCode() != 0 && unknown.err().contains("nope"), unknown.err());
        assertNull(new MgmtClient(URI.create(server.url()), TOKEN).getNode("n1").background(), "nothing sent");
    }
}
