package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotReport;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock snapshot create|list|get|delete} against a real management server; a thread plays the volume's
 * primary (heartbeats every 50 ms, takes the desired snapshots and deletes those marked delete).
 */
class SnapshotCliTest {
    private static final String TOKEN = "cli-test-token";
    private static final long MIB = 1L << 20;
    @TempDir
    Path dir;
    private MgmtServer server;
    private MgmtClient client;
    private Volume volume;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private Thread primary;

    @BeforeEach
    void start() {
        server = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, 60_000);
        client = new MgmtClient(URI.create(server.url()), TOKEN);
        client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        volume = client.createVolume(new CreateVolumeRequest("a", 4 * MIB, 4096, 1, 1, List.of("*")));
        beat(List.of());
        primary = new Thread(this::playPrimary, "fake-primary");
        primary.setDaemon(true);
        primary.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        running.set(false);
        primary.join(5_000);
        server.close();
    }

    private DesiredVolume beat(List<SnapshotReport> held) {
        var answer = client.heartbeat("n1", new HeartbeatRequest(1L << 30, List.of(new VolumeReport(volume.id(),
                4 * MIB, VolumeState.READY, List.of(), List.of(), null, null, held))));
        return answer.volumes().stream().filter(d -> d.id().equals(volume.id())).findFirst().orElseThrow();
    }

    private void playPrimary() {
        Map<Long, SnapshotReport> held = new TreeMap<>();
        while (running.get()) {
            DesiredVolume d = beat(new ArrayList<>(held.values()));
            for (DesiredSnapshot s : d.snapshots()) {
                if (s.delete()) {
                    held.remove(s.id());
                } else {
                    held.putIfAbsent(s.id(), new SnapshotReport(s.id(), s.name(), 1, 4 * MIB, 64 * 1024));
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + 4];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(new String[] {"--mgmt-url", server.url(), "--token", TOKEN}, 0, all, args.length, 4);
        return CliRun.of(all);
    }

    @Test
    void shouldCreateListGetAndDelete() {
        var created = run("snapshot", "create", "a", "s1", "-o", "json");
        assertEquals(0, created.exitCode(), created.out() + created.err());
        Snapshot s = Json.read(created.out(), Snapshot.class);
        assertEquals(SnapshotState.READY, s.state());
        assertEquals(64 * 1024, s.exclusiveBytes());

        var table = run("snapshot", "create", "a", "s2");
        assertEquals(0, table.exitCode(), table.err());
        assertTrue(table.out().contains("STATE") && table.out().contains("ready"), table.out());

        var list = run("snapshot", "list", "a");
        assertEquals(0, list.exitCode(), list.err());
        assertTrue(list.out().indexOf("s1") < list.out().indexOf("s2"), list.out());
        assertTrue(list.out().contains("64 KiB"), list.out());

        var get = run("snapshot", "get", "a", "s2", "-o", "json");
        assertEquals(0, get.exitCode(), get.err());
        assertEquals(2, Json.read(get.out(), Snapshot.class).id());

        var deleted = run("snapshot", "delete", "a", "s1");
        assertEquals(0, deleted.exitCode(), deleted.err());
        assertTrue(deleted.out().contains("deleted snapshot s1 of volume a"), deleted.out());
        assertEquals(List.of("s2"), client.listSnapshots("a").stream().map(Snapshot::name).toList());
    }

    @Test
    void shouldPrintTheProblemAndExitAsOtherCommands() {
        var missing = run("snapshot", "get", "a", "nope");
        assertEquals(ExitCodes.FAILED, missing.exitCode(), missing.out());
        assertTrue(missing.err().contains("Snapshot not found (404)") && missing.err().contains("nope"),
                missing.err());
        var noVolume = run("snapshot", "list", "zz");
        assertEquals(ExitCodes.FAILED, noVolume.exitCode(), noVolume.out());
        assertTrue(noVolume.err().contains("Volume not found"), noVolume.err());
        var bad = run("snapshot", "create", "a", "-bad");
        assertEquals(ExitCodes.BAD_INPUT, bad.exitCode(), bad.out() + bad.err());
        var badName = run("snapshot", "create", "a", "x".repeat(65));
        assertEquals(ExitCodes.BAD_INPUT, badName.exitCode(), badName.out());
        assertTrue(badName.err().contains("invalid NAME"), badName.err());
        assertEquals(0, run("snapshot", "create", "a", "s1").exitCode());
        var exists = run("snapshot", "create", "a", "s1");
        assertEquals(ExitCodes.FAILED, exists.exitCode(), exists.out());
        assertTrue(exists.err().contains("Snapshot exists (409)"), exists.err());
    }
}
