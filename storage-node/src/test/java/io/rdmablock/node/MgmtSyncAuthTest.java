package io.rdmablock.node;

import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.HostSecret;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.target.HostSecrets;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MgmtSync applies the management server's DH-HMAC-CHAP hosts and each volume's requireAuth to the target. */
class MgmtSyncAuthTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String FILE_HOST = "nqn.2026-11.io.example:file-host";
    private static final String MGMT_HOST = "nqn.2026-11.io.example:mgmt-host";
    @TempDir
    Path dir;

    private static DesiredVolume volume(String id, boolean requireAuth) {
        return DesiredVolume.builder(id, id).subnqn("nqn.2026-11.io.rdmablock:volume:" + id)
                .requireAuth(requireAuth).build();
    }

    private static HeartbeatResponse answer(List<HostSecret> hosts, DesiredVolume... volumes) {
        return HeartbeatResponse.of(false, List.of(volumes), 0).withHosts(hosts);
    }

    @Test
    void shouldMergeTheServersHostsWithTheFileAndFollowChanges() {
        DhchapSecret file = DhchapSecret.generate(1, 32, RANDOM);
        DhchapSecret first = DhchapSecret.generate(1, 32, RANDOM);
        DhchapSecret ctrl = DhchapSecret.generate(3, 64, RANDOM);
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).withHostSecrets(HostSecrets.of(Map.of(
                FILE_HOST, new HostSecrets.Entry(file, null)))).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(answer(List.of(new HostSecret(MGMT_HOST, first.encoded(), ctrl.encoded(), 5))));
            HostSecrets applied = node.target().hostSecrets();
            assertEquals(2, applied.size());
            assertTrue(applied.lookup(FILE_HOST).hostSecret().sameAs(file));
            assertTrue(applied.lookup(MGMT_HOST).hostSecret().sameAs(first));
            assertTrue(applied.lookup(MGMT_HOST).ctrlSecret().sameAs(ctrl));

            DhchapSecret second = DhchapSecret.generate(2, 48, RANDOM);
            sync.apply(answer(List.of(new HostSecret(MGMT_HOST, second.encoded(), null, 6))));
            assertTrue(node.target().hostSecrets().lookup(MGMT_HOST).hostSecret().sameAs(second));
            assertNull(node.target().hostSecrets().lookup(MGMT_HOST).ctrlSecret());

            sync.apply(answer(List.of())); // removed on the server: only the file's remain
            assertNull(node.target().hostSecrets().lookup(MGMT_HOST));
            assertTrue(node.target().hostSecrets().lookup(FILE_HOST).hostSecret().sameAs(file));
        }
    }

    @Test
    void shouldLetTheFileWinOverTheServerForTheSameHost() {
        DhchapSecret file = DhchapSecret.generate(1, 32, RANDOM);
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).withHostSecrets(HostSecrets.of(Map.of(
                FILE_HOST, new HostSecrets.Entry(file, null)))).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(answer(List.of(new HostSecret(FILE_HOST, DhchapSecret.generate(1, 32, RANDOM).encoded(),
                    null, 3))));
            assertEquals(1, node.target().hostSecrets().size());
            assertTrue(node.target().hostSecrets().lookup(FILE_HOST).hostSecret().sameAs(file));
        }
    }

    @Test
    void shouldSetRequireAuthOnNewAndExistingSubsystems() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(answer(List.of(), volume("a", true), volume("b", false)));
            assertTrue(node.target().subsystemOfVolume("a").requiresAuth());
            assertFalse(node.target().subsystemOfVolume("b").requiresAuth());
            sync.apply(answer(List.of(), volume("a", false), volume("b", true)));
            assertFalse(node.target().subsystemOfVolume("a").requiresAuth());
            assertTrue(node.target().subsystemOfVolume("b").requiresAuth());
        }
    }

    @Test
    void shouldReadAnAnswerWithoutHostsOrRequireAuthAsNoHostsAndNoAuthRequired() {
        HeartbeatResponse old = Json.read("""
                {"draining":false,"leaseMs":0,"volumes":[{"id":"a","name":"a","sizeBytes":8388608,"lbaSize":4096,
                "allowedHosts":[],"subnqn":"nqn.2026-11.io.rdmablock:volume:a","state":"ready","role":"primary",
                "epoch":1,"minInSync":1}]}""",
                HeartbeatResponse.class);
        assertTrue(old.hosts().isEmpty());
        assertFalse(old.volumes().getFirst().requireAuth());
        DhchapSecret file = DhchapSecret.generate(1, 32, RANDOM);
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).withHostSecrets(HostSecrets.of(Map.of(
                FILE_HOST, new HostSecrets.Entry(file, null)))).start()) {
            new MgmtSync(node.store(), node.target(), node::freeBytes).apply(old);
            assertEquals(1, node.target().hostSecrets().size(), "the file's secrets stay");
            assertFalse(node.target().subsystemOfVolume("a").requiresAuth());
        }
    }

    @Test
    void shouldNeverShowASecretInTheAnswersText() {
        String s = DhchapSecret.generate(1, 32, RANDOM).encoded();
        String text = answer(List.of(new HostSecret(MGMT_HOST, s, s, 1))).toString();
        assertFalse(text.contains("DHHC-1"), text);
    }
}
