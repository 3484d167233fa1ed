package io.rdmablock.cli;

import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.VerifyDifference;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code volume get --watch} and {@code volume verify} against a real management server; the test plays the nodes. */
class VolumeResyncCliTest {
    private static final String TOKEN = "cli-test-token";
    private static final long MIB = 1L << 20;
    @TempDir
    Path dir;
    private MgmtServer server;
    private MgmtClient client;
    private Volume volume;

    @BeforeEach
    void start() {
        server = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, 60_000);
        client = new MgmtClient(URI.create(server.url()), TOKEN);
        client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
        client.registerNode(new RegisterNodeRequest("n2", "127.0.0.1:4421", "", 2L << 30, 2L << 30));
        volume = client.createVolume(new CreateVolumeRequest("a", 4 * MIB, 4096, 2, 1, List.of("*")));
        assertEquals("n2", volume.nodeId());
        beat("n1", List.of(), null);
        beat("n2", List.of(), null);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private void beat(String node, List<ResyncProgress> resyncs, VerifyReport verify) {
        client.heartbeat(node, new HeartbeatRequest(1L << 30, List.of(new VolumeReport(volume.id(), 4 * MIB,
                VolumeState.READY, List.of(), resyncs, verify))));
    }

    private CliRun run(String... args) {
        String[] all = new String[args.length + 4];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(new String[] {"--mgmt-url", server.url(), "--token", TOKEN}, 0, all, args.length, 4);
        return CliRun.of(all);
    }

    private void syncingN1() {
        client.markCopyStale("a", "n1", 1, "n2");
        client.markCopySyncing("a", "n1", 2, "n2");
        beat("n2", List.of(new ResyncProgress("n1", true, MIB, 4 * MIB, MIB)), null);
    }

    @Test
    void shouldShowPerCopyProgressAndStopWatchingAtTheTimeout() {
        syncingN1();
        var r = run("volume", "get", "a", "--watch", "--watch-timeout-s", "1", "--poll-ms", "200");
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("[#####---------------] 25% 1 MiB/4 MiB eta 3s"), r.out());
        assertTrue(r.out().contains("--watch-timeout-s 1 reached"), r.out());
        var plain = run("volume", "get", "a");
        assertEquals(0, plain.exitCode(), plain.err());
        assertTrue(plain.out().contains("PROGRESS"), plain.out());
    }

    @Test
    void shouldWatchUntilNoCopyIsSyncing() throws Exception {
        syncingN1();
        var done = CompletableFuture.runAsync(() -> {
            try {
                // a wait by design: the copy finishes while the watch runs, after it printed the syncing state;
                // the watch runs on the test thread and its output is seen only when it ends
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            client.markCopyInSync("a", "n1", 2, "n2");
        });
        var r = run("volume", "get", "a", "--watch", "--watch-timeout-s", "20", "--poll-ms", "100");
        done.get(10, TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("25%"), r.out());
        String last = r.out().substring(r.out().lastIndexOf("FIELD"));
        assertTrue(last.contains("n1    secondary  in_sync"), last);
    }

    @Test
    void shouldNameTheWatchOptionAndItsBounds() {
        var r = run("volume", "get", "a", "--watch", "--watch-timeout", "0");
        assertEquals(2, r.exitCode(), r.out());
        assertTrue(r.err().contains("--watch-timeout") && r.err().contains("min=1"), r.err());
        var v = run("volume", "verify", "a", "--timeout-s", "0");
        assertEquals(2, v.exitCode(), v.out());
        assertTrue(v.err().contains("--timeout-s") && v.err().contains("min=1"), v.err());
        var old = run("volume", "verify", "a", "--timeout", "0"); // the old spelling still works
        assertEquals(2, old.exitCode(), old.out());
        assertTrue(old.err().contains("--timeout-s") && old.err().contains("min=1"), old.err());
    }

    /** Plays the primary: waits (bounded) for the run, then reports it with {@code state} and {@code differences}. */
    private CompletableFuture<Void> primaryAnswers(VerifyState state, List<VerifyDifference> differences) {
        return CompletableFuture.runAsync(() -> {
            String id = Await.value(() -> client.heartbeat("n2", new HeartbeatRequest(1L << 30, List.of(
                    new VolumeReport(volume.id(), 4 * MIB, VolumeState.READY, List.of())))).volumes().getFirst()
                    .verifyId(), Objects::nonNull, Duration.ofSeconds(5), "a verify run in n2's heartbeat answer");
            beat("n2", List.of(), new VerifyReport(id, state, List.of("n2", "n1"), 4 * MIB, 4 * MIB,
                    differences, differences.size(), state == VerifyState.FAILED ? "n1 unreachable" : null));
        });
    }

    @Test
    void shouldExitZeroWhenTheCopiesAreIdentical() throws Exception {
        var primary = primaryAnswers(VerifyState.DONE, List.of());
        var r = run("volume", "verify", "a", "--timeout-s", "20", "--poll-ms", "100");
        primary.get(10, TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("identical: n2, n1"), r.out());
    }

    @Test
    void shouldExitFourAndPrintTheRegionsWhenCopiesDiffer() throws Exception {
        var primary = primaryAnswers(VerifyState.DONE, List.of(new VerifyDifference(65536, 65536, List.of("n1"))));
        var r = run("volume", "verify", "a", "--timeout-s", "20", "--poll-ms", "100");
        primary.get(10, TimeUnit.SECONDS);
        assertEquals(ExitCodes.DIFFER, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("copies differ in 1 region(s)"), r.out());
        assertTrue(r.out().contains("65536   65536   n1"), r.out());
    }

    @Test
    void shouldExitOneWhenTheRunFailsAndFiveWhenItTimesOut() throws Exception {
        var primary = primaryAnswers(VerifyState.FAILED, List.of());
        var failed = run("volume", "verify", "a", "--timeout-s", "20", "--poll-ms", "100");
        primary.get(10, TimeUnit.SECONDS);
        assertEquals(ExitCodes.FAILED, failed.exitCode(), failed.out() + failed.err());
        assertTrue(failed.out().contains("failed: n1 unreachable"), failed.out());
        var timedOut = run("volume", "verify", "a", "--timeout", "1", "--poll-ms", "100"); // old spelling
        assertEquals(ExitCodes.TIMED_OUT, timedOut.exitCode(), timedOut.out() + timedOut.err());
        assertTrue(timedOut.err().contains("--timeout-s 1 reached"), timedOut.err());
    }

    /** The primary's heartbeat holding snapshot {@code snapId} (0: none): the answer for the volume. */
    private io.rdmablock.mgmt.client.DesiredVolume primaryBeat(long snapId) {
        List<io.rdmablock.mgmt.client.SnapshotReport> held = snapId == 0 ? List.of()
                : List.of(new io.rdmablock.mgmt.client.SnapshotReport(snapId, "s1", 1, 4 * MIB, 0));
        return client.heartbeat("n2", new HeartbeatRequest(1L << 30, List.of(new VolumeReport(volume.id(), 4 * MIB,
                VolumeState.READY, List.of(), List.of(), null, null, held)))).volumes().getFirst();
    }

    @Test
    void shouldVerifyTheCopiesOfASnapshot() throws Exception {
        var created = CompletableFuture.supplyAsync(() -> client.createSnapshot("a", "s1"));
        long snapId = Await.value(() -> primaryBeat(0).snapshots(), x -> !x.isEmpty(), Duration.ofSeconds(5),
                "the snapshot asked of the primary").getFirst().id();
        primaryBeat(snapId); // taken: the record becomes ready
        assertEquals(io.rdmablock.mgmt.client.SnapshotState.READY, created.get(15, TimeUnit.SECONDS).state());
        Long[] asked = new Long[1];
        var primary = CompletableFuture.runAsync(() -> {
            var dv = Await.value(() -> primaryBeat(snapId), x -> x.verifyId() != null, Duration.ofSeconds(5),
                    "a verify run in n2's heartbeat answer");
            asked[0] = dv.verifySnapshotId();
            client.heartbeat("n2", new HeartbeatRequest(1L << 30, List.of(new VolumeReport(volume.id(), 4 * MIB,
                    VolumeState.READY, List.of(), List.of(), new VerifyReport(dv.verifyId(), VerifyState.DONE,
                    List.of("n2", "n1"), 4 * MIB, 4 * MIB, List.of(), 0, null), null,
                    List.of(new io.rdmablock.mgmt.client.SnapshotReport(snapId, "s1", 1, 4 * MIB, 0))))));
        });
        var r = run("volume", "verify", "a", "--snapshot", "s1", "--timeout-s", "20", "--poll-ms", "100");
        primary.get(10, TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertEquals(snapId, asked[0], "the run's snapshot id carried to the primary");
        assertTrue(r.out().contains("of a snapshot s1") && r.out().contains("identical: n2, n1"), r.out());
        var unknown = run("volume", "verify", "a", "--snapshot", "nope");
        assertEquals(ExitCodes.FAILED, unknown.exitCode(), unknown.out() + unknown.err());
        assertTrue(unknown.err().contains("nope"), unknown.err());
        var bad = run("volume", "verify", "a", "--snapshot", "bad!");
        assertEquals(ExitCodes.BAD_INPUT, bad.exitCode(), bad.out() + bad.err());
        assertTrue(bad.err().contains("--snapshot"), bad.err());
    }

    @Test
    void shouldRejectARebuildDelayOutOfBounds() {
        var r = CliRun.of("mgmt", "--rebuild-after-ms", "999", "--data-dir", dir.resolve("m2").toString());
        assertEquals(ExitCodes.BAD_INPUT, r.exitCode());
        assertTrue(r.err().contains("invalid --rebuild-after-ms: --rebuild-after-ms=999, min=1000, max=604800000"),
                r.err());
    }
}
