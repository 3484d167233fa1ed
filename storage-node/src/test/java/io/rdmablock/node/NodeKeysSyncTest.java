package io.rdmablock.node;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeLink;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.replication.PeerLink;
import io.rdmablock.nvme.auth.NodeLinkKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A heartbeat answer's node key and link secrets reach the target and the replication links (docs/authentication.md,
 * "Node identities"): the secondary admits exactly the nodes of the volume's other copies, checks them with secrets
 * derived from its key, bounds the epoch by the managed one, and the links toward peers carry the given secrets.
 */
class NodeKeysSyncTest {
    private static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    @Test
    void shouldApplyTheNodeKeyThePeersAndTheLinkSecrets() {
        SecureRandom random = new SecureRandom();
        byte[] mine = NodeLinkKeys.newKey(random);
        byte[] peerKey = NodeLinkKeys.newKey(random);
        String me = Node.hostnqnOf("n2");
        List<DesiredCopy> copies = List.of(
                new DesiredCopy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, "", Node.hostnqnOf("n1")),
                new DesiredCopy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, "", me),
                new DesiredCopy("n3", CopyRole.SECONDARY, CopyState.IN_SYNC, "", Node.hostnqnOf("n3")));
        DesiredVolume dv = new DesiredVolume("v1", "data1", 8 * MIB, 4096, List.of(), Subsystem.nqnFor("data1"),
                VolumeState.READY, false, 7, CopyRole.SECONDARY, 1, copies, null, null, false);
        NodeLink toN1 = new NodeLink("n1", NodeLinkKeys.hostSecret(peerKey, me).encoded(),
                NodeLinkKeys.ctrlSecret(peerKey, me).encoded());
        HeartbeatResponse answer = HeartbeatResponse.of(false, List.of(dv), 600)
                .withNodeKeys(Base64.getEncoder().encodeToString(mine), List.of(toN1));
        try (StorageNode node = new StorageNode(NodeConfig.local(dir.resolve("node"))).start();
             Replication replication = new Replication("n2", null, new MgmtClient(java.net.URI.create(
                     "http://127.0.0.1:9"), "t"), dir.resolve("replica"), 200_000_000L)) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes, replication);
            assertNull(node.target().hostSecrets().lookup(Node.hostnqnOf("n1")), "no key yet: no peer can prove itself");
            sync.apply(answer, System.nanoTime());

            Subsystem s = node.target().subsystemOfVolume("v1");
            assertEquals(Subsystem.Mode.SECONDARY, s.mode());
            assertEquals(Set.of(Node.hostnqnOf("n1"), Node.hostnqnOf("n3")), s.peers(), "the other copies' nodes");
            assertEquals(7 + io.rdmablock.node.target.TargetTuning.DEFAULT_EPOCH_WINDOW, s.epochCeiling(), "the managed epoch bounds forwarded ones");
            assertFalse(s.allowsHost("nqn.2026-11.io.rdmablock:node:intruder") && s.peers().contains(
                    "nqn.2026-11.io.rdmablock:node:intruder"), "no prefix admission");
            assertArrayEquals(NodeLinkKeys.hostSecret(mine, Node.hostnqnOf("n1")).transformedKey("x"),
                    node.target().hostSecrets().lookup(Node.hostnqnOf("n1")).hostSecret().transformedKey("x"),
                    "n1 is checked with the secret derived from this node's key");
            PeerLink.Secrets link = replication.linkSecrets("n1");
            assertTrue(link.host().sameAs(NodeLinkKeys.hostSecret(peerKey, me)), "link secret toward n1");
            assertTrue(link.ctrl().sameAs(NodeLinkKeys.ctrlSecret(peerKey, me)), "n1 must prove its own back");
            assertEquals(PeerLink.Secrets.NONE, replication.linkSecrets("n3"), "no link given toward n3");
        }
    }
}
