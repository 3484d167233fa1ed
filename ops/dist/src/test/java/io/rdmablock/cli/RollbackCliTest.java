package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.RollbackReport;
import io.rdmablock.mgmt.client.SnapshotReport;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code rdmablock volume rollback NAME --to SNAP [--force]} against a real management server; a thread plays the
 * volume's only node (heartbeats every 50 ms: takes the desired snapshots, reports a host connected while
 * {@link #hosts} holds one and the volume admits hosts, and reports the rollback it is asked done).
 */
class RollbackCliTest {
    private static final String TOKEN = "cli-test-token";
    private static final long MIB = 1L << 20;
    @TempDir
    Path dir;
    private MgmtServer server;
    private MgmtClient client;
    private Volume volume;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<String> hosts = new CopyOnWriteArrayList<>();
    private final List<String> applied = new CopyOnWriteArrayList<>();
    private Thread node;

    @BeforeEach
    void start() {
        server = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, 60_000);
        client = new MgmtClient(URI.create(server.url()), TOKEN);
        client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        volume = client.createVolume(new CreateVolumeRequest("a", 4 * MIB, 4096, 1, 1, List.of("*")));
        node = new Thread(this::playNode, "fake-node");
        node.setDaemon(true);
        node.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        running.set(false);
        node.join(5_000);
        server.close();
    }

    private void playNode() {
        Map<Long, SnapshotReport> held = new TreeMap<>();
        DesiredVolume d = null;
        while (running.get()) {
            boolean admits = d == null || !d.allowedHosts().isEmpty();
            RollbackReport word = null;
            if (d != null && d.rollback() != null) {
                if (!applied.contains(d.rollback().requestId())) {
                    applied.add(d.rollback().requestId());
                }
                word = new RollbackReport(d.rollback().requestId(), RollbackReport.State.DONE, null);
            }
            var report = new VolumeReport(volume.id(), 4 * MIB, VolumeState.READY,
                    admits ? List.copyOf(hosts) : List.of(), List.of(), null, null, new ArrayList<>(held.values()),
                    word);
            var answer = client.heartbeat("n1", new HeartbeatRequest(1L << 30, List.of(report)));
            d = answer.volumes().stream().filter(x -> x.id().equals(volume.id())).findFirst().orElseThrow();
            for (DesiredSnapshot s : d.snapshots()) {
                if (!s.delete()) {
                    held.putIfAbsent(s.id(), new SnapshotReport(s.id(), s.name(), 1, 4 * MIB, 0));
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
    void shouldRollBackRefuseWhileAHostIsConnectedAndForce() throws Exception {
        assertEquals(0, run("snapshot", "create", "a", "s1").exitCode());

        var done = run("volume", "rollback", "a", "--to", "s1");
        assertEquals(0, done.exitCode(), done.out() + done.err());
        assertTrue(done.out().contains("rolled back volume a to snapshot s1 on every copy"), done.out());
        assertEquals(1, applied.size());

        hosts.add("nqn.2026-11.io.example:h1");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (client.getVolume("a").connectedHosts().isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "the host was never reported");
            Thread.sleep(20);
        }
        var refused = run("volume", "rollback", "a", "--to", "s1");
        assertEquals(ExitCodes.FAILED, refused.exitCode(), refused.out());
        assertTrue(refused.err().contains("Volume in use (409)") && refused.err().contains("--force")
                || refused.err().contains("force"), refused.err());
        assertEquals(1, applied.size(), "nothing asked of the node on a refusal");

        var forced = run("volume", "rollback", "a", "--to", "s1", "--force", "-o", "json");
        assertEquals(0, forced.exitCode(), forced.out() + forced.err());
        assertNull(Json.read(forced.out(), Volume.class).rollback(), forced.out());
        assertEquals(2, applied.size());
    }

    @Test
    void shouldRefuseBadInputAndUnknownSnapshots() {
        var missingTo = run("volume", "rollback", "a");
        assertEquals(ExitCodes.BAD_INPUT, missingTo.exitCode(), missingTo.out() + missingTo.err());
        var badName = run("volume", "rollback", "a", "--to", "-x");
        assertEquals(ExitCodes.BAD_INPUT, badName.exitCode(), badName.out() + badName.err());
        var unknown = run("volume", "rollback", "a", "--to", "nope");
        assertEquals(ExitCodes.FAILED, unknown.exitCode(), unknown.out());
        assertTrue(unknown.err().contains("Snapshot not found (404)"), unknown.err());
    }
}
