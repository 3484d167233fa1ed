package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.NodeAgent;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared MgmtClient and NodeAgent against a real MgmtServer on RocksDB: the two sides agree on the wire. */
class ClientServerTest {
    private static final long MIB = 1L << 20;

    /** A fake node that "creates" volumes instantly and reports them ready. */
    private static final class InstantNode implements NodeAgent.Handler {
        final Map<String, VolumeReport> held = new ConcurrentHashMap<>();

        @Override
        public HeartbeatRequest report() {
            return new HeartbeatRequest(1L << 30, List.copyOf(held.values()));
        }

        @Override
        public void apply(HeartbeatResponse desired) {
            for (var d : desired.volumes()) {
                if (d.state() == VolumeState.DELETING) {
                    held.remove(d.id());
                } else {
                    held.put(d.id(), new VolumeReport(d.id(), d.sizeBytes(), VolumeState.READY, List.of()));
                }
            }
        }
    }

    @Test
    void shouldRunVolumeLifecycleThroughClientAndAgent(@TempDir Path dir) {
        try (var server = MgmtServer.start(dir, "127.0.0.1", 0, "tok", 5_000)) {
            var client = new MgmtClient(URI.create(server.url()), "tok");
            assertTrue(client.health());
            var node = new InstantNode();
            var registration = new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30);
            // the agent's own client: it switches to the node's credential, which cannot call operator routes
            var nodeClient = new MgmtClient(URI.create(server.url()), "tok");
            try (var agent = new NodeAgent(nodeClient, () -> registration, node, 1000)) {
                assertTrue(agent.tick());
                assertTrue(agent.usingCredential(), "the first registration issued the node's credential");
                assertEquals(NodeState.UP, client.listNodes().getFirst().state());

                var v = client.createVolume(CreateVolumeRequest.of("vol-1", 8 * MIB));
                assertEquals(VolumeState.CREATING, v.state());
                agent.tick(); // node learns and "creates" it
                agent.tick(); // node reports it ready
                assertEquals(VolumeState.READY, client.getVolume("vol-1").state());

                client.resizeVolume("vol-1", 16 * MIB);
                agent.tick();
                agent.tick();
                var grown = client.getVolume("vol-1");
                assertEquals(16 * MIB, grown.sizeBytes());
                assertEquals(VolumeState.READY, grown.state());

                var shrink = assertThrows(MgmtException.class, () -> client.resizeVolume("vol-1", 8 * MIB));
                assertEquals(ProblemTypes.SHRINK_NOT_ALLOWED, shrink.type());

                assertEquals(VolumeState.DELETING, client.deleteVolume("vol-1", false).state());
                agent.tick();
                agent.tick();
                var gone = assertThrows(MgmtException.class, () -> client.getVolume("vol-1"));
                assertEquals(404, gone.status());
                assertTrue(node.held.isEmpty());
            }
        }
    }

    @Test
    void shouldKeepVolumesAcrossServerRestart(@TempDir Path dir) {
        String id;
        try (var server = MgmtServer.start(dir, "127.0.0.1", 0, "tok", 5_000)) {
            var client = new MgmtClient(URI.create(server.url()), "tok");
            client.registerNode(new RegisterNodeRequest("n1", "127.0.0.1:4420", "", 1L << 30, 1L << 30));
            id = client.createVolume(CreateVolumeRequest.of("keep", 4 * MIB)).id();
        }
        try (var server = MgmtServer.start(dir, "127.0.0.1", 0, "tok", 5_000)) {
            var client = new MgmtClient(URI.create(server.url()), "tok");
            assertEquals(id, client.getVolume("keep").id());
            assertEquals(NodeState.DOWN, client.listNodes().getFirst().state(), "down until it heartbeats");
        }
    }
}
