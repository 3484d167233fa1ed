package io.rdmablock.node;

import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.target.NodeTestHost;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StorageNodeTest {
    /** The hostnqn {@link NodeTestHost} connects with. */
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

    @TempDir
    Path dir;

    @Test
    void shouldServeCreatedVolumeAndExportMetrics() throws Exception {
        NodeConfig cfg = NodeConfig.local(dir).withCreateVolumes(List.of("vol-a:16M:512:*"))
                .withMetricsListen(new InetSocketAddress("127.0.0.1", 0));
        try (StorageNode node = new StorageNode(cfg).start()) {
            assertTrue(node.fabricAddress().getPort() > 0);
            assertNotNull(node.target().subsystemOfVolume("vol-a"));
            byte[] written = NodeTestHost.writeAndRead(node.fabricAddress(), Subsystem.nqnFor("vol-a"), 3, 0x42);
            assertEquals(0x42, written[0]);
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + node.metricsPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("rdmablock_target_commands_total{opcode=\"write\"} 1"), r.body());
            assertTrue(r.body().contains("rdmablock_target_command_duration_seconds_bucket{opcode=\"read\""));
            assertTrue(r.body().contains("rdmablock_target_queues"));
        }
    }

    /**
     * {@code --create-volume name:size:lba} admits no host (Linux nvmet's default); {@code :NQN[,NQN]} (NQNs keep
     * their colons) admits those, applied to the existing volume at the next start.
     */
    @Test
    void shouldAdmitNoHostUnlessTheCreateVolumeSpecNamesThem() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("vol-n:8M:512")))
                .start()) {
            assertEquals(java.util.Set.of(), node.target().subsystemOfVolume("vol-n").volume().allowedHosts());
            AssertionError refused = assertThrows(AssertionError.class,
                    () -> NodeTestHost.writeAndRead(node.fabricAddress(), Subsystem.nqnFor("vol-n"), 1, 0x11));
            assertTrue(refused.getMessage().contains("16772") || refused.getMessage().contains("expected: <0>"),
                    refused.getMessage()); // Connect Invalid Host
        }
        String other = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000aa";
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001"; // NodeTestHost's
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("vol-n:8M:512:"
                + other + "," + host))).start()) {
            assertEquals(java.util.Set.of(other, host),
                    node.target().subsystemOfVolume("vol-n").volume().allowedHosts());
            assertEquals(0x11, NodeTestHost.writeAndRead(node.fabricAddress(), Subsystem.nqnFor("vol-n"), 1,
                    0x11)[0]);
        }
    }

    /** C10 (graceful): data written without FUA survives a clean stop (drain + flush) and restart. */
    @Test
    void shouldKeepDataAcrossGracefulRestart() {
        NodeConfig cfg = NodeConfig.local(dir).withCreateVolumes(List.of("vol-b:8M:512:*"));
        try (StorageNode node = new StorageNode(cfg).start()) {
            NodeTestHost.writeAndRead(node.fabricAddress(), Subsystem.nqnFor("vol-b"), 5, 0x77);
        }
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            byte[] got = NodeTestHost.read(node.fabricAddress(), Subsystem.nqnFor("vol-b"), 5);
            assertEquals(0x77, got[0]);
            assertEquals(0x77, got[got.length - 1]);
        }
    }

    /** A restarted node serves its stored volumes before (here: without) reaching the management server. */
    @Test
    void shouldServeStoredVolumesAtRestartBeforeMgmtAnswers() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            node.createVolume("vol-c", 8L << 20, 512, java.util.Set.of(HOSTNQN));
            NodeTestHost.writeAndRead(node.fabricAddress(), Subsystem.nqnFor("vol-c"), 2, 0x5a);
        }
        int deadPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort();
        }
        NodeConfig cfg = NodeConfig.local(dir).withMgmt(URI.create("http://127.0.0.1:" + deadPort), "t", "node-1");
        try (StorageNode node = new StorageNode(cfg).start()) {
            assertFalse(node.agent().registered());
            assertEquals(java.util.Set.of(HOSTNQN),
                    node.target().subsystemOfVolume("vol-c").volume().allowedHosts());
            byte[] got = NodeTestHost.read(node.fabricAddress(), Subsystem.nqnFor("vol-c"), 2);
            assertEquals(0x5a, got[0]);
        }
    }

    /** A volume whose data file vanished keeps the other volumes served and can still be deleted by mgmt. */
    @Test
    void shouldStartWithAVolumeFileMissingAndDeleteItOnRequest() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            node.createVolume("gone", 8L << 20, 4096, java.util.Set.of("*"));
            node.createVolume("kept", 8L << 20, 4096, java.util.Set.of("*"));
        }
        java.nio.file.Files.delete(dir.resolve("volumes/gone.vol"));
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            assertNotNull(node.target().subsystemOfVolume("kept"), "the other volume is served");
            assertTrue(node.store().isUnavailable("gone"));
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(HeartbeatResponse.of(false, List.of(DesiredVolume.builder("gone", "gone").sizeBytes(8L << 20)
                    .allowedHosts(List.of()).subnqn("nqn.2026-11.io.rdmablock:volume:gone").state(VolumeState.DELETING).provisioned(true).build()), 0));
            assertFalse(node.store().isUnavailable("gone"), "deleted on the management server's request");
        }
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            assertFalse(node.store().isUnavailable("gone"), "row removed durably");
            assertEquals(List.of("kept"), node.store().list().stream().map(v -> v.id()).toList());
        }
    }

    /** Space a trimmed range handed back is still the volume's to take again: not free for new volumes. */
    @Test
    void shouldNotOfferSpaceATrimmedThinVolumeCanTakeAgain() {
        long size = 64L << 20;
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start();
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined();
             io.rdmablock.node.store.BlockQueue q = node.store().newQueue(1)) {
            io.rdmablock.node.store.StoreVolume v = node.createVolume("thin", size, 4096, java.util.Set.of("*"));
            java.lang.foreign.MemorySegment buf = arena.allocate(1 << 20, 4096).fill((byte) 3);
            for (long off = 0; off < size; off += 1 << 20) {
                q.submitWrite(v, off, buf, false, 1);
                assertEquals(0, awaitOne(q));
            }
            q.submitFlush(v, 2);
            assertEquals(0, awaitOne(q));
            org.junit.jupiter.api.Assumptions.assumeTrue(node.store().zeroesAfterTrim(), "trim punches holes here");
            q.submitTrim(v, 0, size, 3);
            assertEquals(0, awaitOne(q));
            long fsFree = node.store().freeBytes();
            long offered = node.freeBytes();
            // the file system got 64 MiB back, but the volume may fill them again: offering them would overcommit
            assertTrue(offered < fsFree - size / 2, "offered=" + offered + ", fsFree=" + fsFree);
        }
    }

    private static int awaitOne(io.rdmablock.node.store.BlockQueue q) {
        long[] ud = new long[1];
        int[] res = new int[1];
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            q.awaitCompletion(100_000_000L);
            if (q.reap(ud, res, 1) == 1) {
                return res[0];
            }
        }
        throw new AssertionError("store command did not complete in 10 s");
    }

    @Test
    void shouldApplyDesiredStateCreateGrowDelete() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            String nqn = "nqn.2026-11.io.rdmablock:volume:data1";
            sync.apply(HeartbeatResponse.of(false, List.of(DesiredVolume.builder("v1", "data1").sizeBytes(8L << 20)
                    .allowedHosts(List.of()).subnqn(nqn).state(VolumeState.CREATING).provisioned(false).build()), 0));
            assertEquals(8L << 20, node.store().get("v1").sizeBytes());
            assertEquals(nqn, node.target().subsystemOfVolume("v1").subnqn());
            sync.apply(HeartbeatResponse.of(false, List.of(DesiredVolume.builder("v1", "data1").sizeBytes(16L << 20)
                    .allowedHosts(List.of("nqn.host:a")).subnqn(nqn).state(VolumeState.READY).provisioned(true).build()), 0));
            assertEquals(16L << 20, node.store().get("v1").sizeBytes());
            HeartbeatRequest report = sync.report();
            assertEquals(1, report.volumes().size());
            assertEquals(16L << 20, report.volumes().get(0).sizeBytes());
            assertEquals(VolumeState.READY, report.volumes().get(0).state());
            sync.apply(HeartbeatResponse.of(false, List.of(DesiredVolume.builder("v1", "data1").sizeBytes(16L << 20)
                    .allowedHosts(List.of()).subnqn(nqn).state(VolumeState.DELETING).provisioned(true).build()), 0));
            assertTrue(node.store().find("v1").isEmpty());
            assertEquals(null, node.target().subsystemOfVolume("v1"));
        }
    }

    @Test
    void shouldNotRecreateEmptyAVolumeItOnceHeldWhoseDataIsGone() {
        // the data directory was wiped or replaced: the management server says the volume was provisioned here
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            String nqn = "nqn.2026-11.io.rdmablock:volume:lost1";
            for (VolumeState state : new VolumeState[]{VolumeState.READY, VolumeState.CREATING}) { // CREATING: resize
                sync.apply(HeartbeatResponse.of(false, List.of(DesiredVolume.builder("v9", "lost1").sizeBytes(8L << 20)
                    .allowedHosts(List.of()).subnqn(nqn).state(state).provisioned(true).build()), 0));
                assertTrue(node.store().find("v9").isEmpty(), "not created empty (" + state + ")");
                assertEquals(null, node.target().subsystemOfVolume("v9"), "not exported (" + state + ")");
                assertEquals(0, sync.report().volumes().size(), "not reported (" + state + ")");
            }
        }
    }

    @Test
    void shouldAcceptTheOptionsOpsClusterPasses() {
        NodeCommand cmd = new NodeCommand();
        new picocli.CommandLine(cmd).parseArgs("--data-dir", dir.resolve("node1").toString(), "--listen",
                "127.0.0.1:4420", "--provider", "soft", "--mgmt-url", "http://127.0.0.1:8080", "--token-file",
                dir.resolve("token").toString(), "--token", "t", "--capacity", "10G", "--node-id", "n1",
                "--metrics-listen", "127.0.0.1:9420");
        assertEquals("soft", cmd.provider);
        assertEquals("10G", cmd.capacity);
        NodeCommand several = new NodeCommand();
        new picocli.CommandLine(several).parseArgs("--data-dir", dir.resolve("node1").toString(),
                "--mgmt-url", "http://127.0.0.1:8080,http://127.0.0.1:8081");
        assertEquals("http://127.0.0.1:8080,http://127.0.0.1:8081", several.mgmtUrl);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            NodeCommand bad = new NodeCommand();
            new picocli.CommandLine(bad).parseArgs("--data-dir", dir.resolve("node1").toString(),
                    "--mgmt-url", "http://127.0.0.1:8080,:8081", "--token", "t");
            bad.call();
        });
        assertTrue(e.getMessage().startsWith("invalid --mgmt-url: element 2 \":8081\""), e.getMessage());
    }

    @Test
    void shouldCheckTheResyncFloorAgainstItsCeiling() {
        NodeCommand cmd = new NodeCommand();
        new picocli.CommandLine(cmd).parseArgs("--resync-mib-s", "8");
        assertEquals(4, cmd.resyncFloor(), "default floor");
        cmd = new NodeCommand();
        new picocli.CommandLine(cmd).parseArgs("--resync-mib-s", "2");
        assertEquals(2, cmd.resyncFloor(), "default floor lowered to the ceiling");
        cmd = new NodeCommand();
        new picocli.CommandLine(cmd).parseArgs("--resync-mib-s", "8", "--resync-min-mib-s", "9");
        NodeCommand over = cmd;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, over::resyncFloor);
        assertTrue(e.getMessage().contains("--resync-min-mib-s") && e.getMessage().contains("max=--resync-mib-s=8"),
                e.getMessage());
        cmd = new NodeCommand();
        new picocli.CommandLine(cmd).parseArgs("--resync-min-mib-s", "0");
        NodeCommand zero = cmd;
        e = assertThrows(IllegalArgumentException.class, zero::resyncFloor);
        assertTrue(e.getMessage().contains("min=1"), e.getMessage());
    }

    @Test
    void shouldParseSizesAndAddresses() {
        assertEquals(1L << 30, StorageNode.parseSize("1G"));
        assertEquals(512L << 20, StorageNode.parseSize("512MiB"));
        assertEquals(4096, StorageNode.parseSize("4096"));
        assertThrows(IllegalArgumentException.class, () -> StorageNode.parseSize("12X"));
        assertEquals(4420, NodeCommand.parseAddress("--listen", "0.0.0.0:4420").getPort());
        assertTrue(NodeCommand.parseAddress("--listen", "[::1]:1").getAddress().isLoopbackAddress());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeCommand.parseAddress("--listen", "host:70000"));
        assertTrue(e.getMessage().contains("max=65535"), e.getMessage());
        assertFalse(Opcodes.ioName(Opcodes.IO_READ).isEmpty());
    }
}
