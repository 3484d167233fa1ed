package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeLink;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.nvme.auth.NodeLinkKeys;
import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Node keys (docs/authentication.md, "Node identities"): made, kept, rotated, and handed out in heartbeats. */
class NodeKeysTest {
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final InMemoryMetadataStore store = new InMemoryMetadataStore();
    private final ClusterService cluster = new ClusterService(store, now::get, 5_000);

    private void register(String nodeId, String address) {
        cluster.nodes().registerNode(new RegisterNodeRequest(nodeId, address, "", 1L << 30, 1L << 30));
    }

    private String key(String nodeId) {
        return store.node(nodeId).orElseThrow().nodeKey();
    }

    private HeartbeatResponse beat(String nodeId) {
        return cluster.heartbeat(nodeId, new HeartbeatRequest(1L << 30, List.of()));
    }

    private static VolumeRecord volume(String name, String primary, String secondary) {
        return new VolumeRecord("id-" + name, name, 1 << 20, 4096, 2, List.of(), primary, VolumeState.READY,
                List.of(), 1234, false, 1, 1, List.of(
                new CopyRecord(primary, CopyRole.PRIMARY, CopyState.IN_SYNC, false),
                new CopyRecord(secondary, CopyRole.SECONDARY, CopyState.STALE, false)), false,
                VolumeRecord.HOSTS_VERSION);
    }

    @Test
    void shouldMakeAKeyAtTheFirstRegistrationAndKeepItAcrossReRegistration() {
        register("n1", "127.0.0.1:4420");
        String first = key("n1");
        assertNotNull(first);
        assertEquals(NodeLinkKeys.KEY_BYTES, Base64.getDecoder().decode(first).length);
        register("n1", "127.0.0.1:4420");
        register("n1", "127.0.0.2:4430"); // another address
        assertEquals(first, key("n1"));
        register("n2", "127.0.0.1:4421");
        assertNotEquals(first, key("n2"), "each node its own key");
    }

    @Test
    void shouldGiveARecordOfBeforeNodeKeysAKeyAtItsNextHeartbeatOrRegistration() {
        store.putNode(new NodeRecord("old1", "127.0.0.1:4420", "", 1L << 30, false, 5, 1, null, null));
        store.putNode(new NodeRecord("old2", "127.0.0.1:4421", "", 1L << 30, false, 5, 2, null, null));
        HeartbeatResponse r = beat("old1");
        assertNotNull(key("old1"));
        assertEquals(key("old1"), r.nodeKey());
        assertEquals(key("old1"), beat("old1").nodeKey(), "made once, then kept");
        register("old2", "127.0.0.1:4421");
        assertNotNull(key("old2"));
        assertEquals(2, store.node("old2").orElseThrow().ordinal(), "the rest of the record kept");
        store.putNode(new NodeRecord("old3", "127.0.0.1:4422", "", 1L << 30, false, 5, 3, null, null));
        var withToken = cluster.heartbeat("old3", new HeartbeatRequest(1L << 30, List.of()), false, null);
        assertNotNull(key("old3"), "made at a heartbeat with the cluster token too");
        assertEquals(null, withToken.nodeKey(), "but answered only to the node's own credential");
    }

    @Test
    void shouldRotateTheKeyAndAnswerOnlyItsFingerprint() {
        register("n1", "127.0.0.1:4420");
        String before = key("n1");
        String fingerprint = cluster.nodes().rotateKey("n1");
        String after = key("n1");
        assertNotEquals(before, after);
        assertTrue(fingerprint.matches("[0-9a-f]{16}"), fingerprint);
        assertEquals(NodeKeys.fingerprint(after), fingerprint);
        assertFalse(after.contains(fingerprint) || fingerprint.contains(after));
        assertEquals(after, beat("n1").nodeKey(), "the node learns it at its next heartbeat");
        var missing = org.junit.jupiter.api.Assertions.assertThrows(ApiException.class,
                () -> cluster.nodes().rotateKey("n9"));
        assertEquals(404, missing.problem().status());
    }

    @Test
    void shouldAnswerTheOwnKeyAndExactlyTheLinksOfNodesSharingAVolume() {
        for (String n : List.of("n1", "n2", "n3", "n4", "n5")) {
            register(n, "127.0.0.1:4420");
        }
        store.putVolume(volume("a", "n1", "n2"));
        store.putVolume(volume("b", "n3", "n1")); // n1 secondary here
        store.putVolume(volume("c", "n4", "n5")); // nothing to do with n1
        HeartbeatResponse r = beat("n1");
        assertEquals(key("n1"), r.nodeKey());
        assertEquals(List.of("n2", "n3"), r.links().stream().map(NodeLink::nodeId).toList());
        String hostNqn = Node.hostnqnOf("n1");
        for (NodeLink link : r.links()) {
            byte[] peerKey = Base64.getDecoder().decode(key(link.nodeId()));
            assertEquals(NodeLinkKeys.hostSecret(peerKey, hostNqn).encoded(), link.dhchapSecret());
            assertEquals(NodeLinkKeys.ctrlSecret(peerKey, hostNqn).encoded(), link.dhchapCtrlSecret());
        }
        assertEquals(List.of("n1"), beat("n2").links().stream().map(NodeLink::nodeId).toList());
        assertEquals(List.of("n5"), beat("n4").links().stream().map(NodeLink::nodeId).toList());
        String oldSecret = r.links().getFirst().dhchapSecret();
        cluster.nodes().rotateKey("n2");
        assertNotEquals(oldSecret, beat("n1").links().getFirst().dhchapSecret(), "n2's new key, new link secrets");
        assertFalse(r.toString().contains(r.nodeKey()), "toString never shows the key");
        assertFalse(store.node("n1").orElseThrow().toString().contains(key("n1")));
    }
}
