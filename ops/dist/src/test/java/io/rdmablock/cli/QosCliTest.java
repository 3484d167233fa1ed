package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeQos;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code volume create --qos-*}, {@code volume qos NAME} and {@code volume get} against a real server (docs/qos.md). */
class QosCliTest {
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
    void shouldCreateWithLimitsChangeThemAndShowThem() {
        var r = run("volume", "create", "v", "--size", "2M", "--qos-iops", "5000", "--qos-write-bytes-per-sec",
                "100M", "--qos-burst-seconds", "2", "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(new VolumeQos(5000, 0, 0, 0, 0, 100L << 20, 2), Json.read(r.out(), Volume.class).qos());
        var get = run("volume", "get", "v");
        assertEquals(0, get.exitCode(), get.err());
        assertTrue(get.out().contains("iops=5000, writeBytesPerSec=100 MiB, burstSeconds=2"), get.out());
        var set = run("volume", "qos", "v", "--iops", "20000", "-o", "json");
        assertEquals(0, set.exitCode(), set.err());
        assertEquals(VolumeQos.ofIops(20000), Json.read(set.out(), Volume.class).qos(), "replaced, not merged");
        var none = run("volume", "qos", "v", "--none");
        assertEquals(0, none.exitCode(), none.err());
        assertTrue(none.out().contains("(none)"), none.out());
    }

    @Test
    void shouldRefuseBadLimitsBeforeSending() {
        var neg = run("volume", "qos", "v", "--iops", "-1");
        assertEquals(2, neg.exitCode(), neg.err());
        assertTrue(neg.err().contains("qos.iops"), neg.err());
        var burst = run("volume", "create", "w", "--size", "2M", "--qos-burst-seconds", "2");
        assertEquals(2, burst.exitCode(), burst.err());
        assertTrue(burst.err().contains("qos.burstSeconds"), burst.err());
        var nothing = run("volume", "qos", "v");
        assertEquals(2, nothing.exitCode(), nothing.err());
    }

    @Test
    void shouldShowTheHeldCommandsThePrimaryReported() {
        var r = run("volume", "create", "v", "--size", "2M", "--qos-iops", "100", "-o", "json");
        assertEquals(0, r.exitCode(), r.err());
        Volume v = Json.read(r.out(), Volume.class);
        var before = run("volume", "get", "v");
        assertTrue(before.out().matches("(?s).*qosHeld +0 *\\R.*"), before.out());
        new MgmtClient(URI.create(server.url()), TOKEN).heartbeat("n1", new io.rdmablock.mgmt.client.HeartbeatRequest(
                1L << 30, java.util.List.of(new io.rdmablock.mgmt.client.VolumeReport(v.id(), v.sizeBytes(),
                        io.rdmablock.mgmt.client.VolumeState.READY, java.util.List.of())
                        .withQosActivity(new io.rdmablock.mgmt.client.QosActivity(12, 2.5)))));
        var get = run("volume", "get", "v");
        assertEquals(0, get.exitCode(), get.err());
        assertTrue(get.out().contains("12 commands now, 2.500 s delayed in total"), get.out());
    }
}
