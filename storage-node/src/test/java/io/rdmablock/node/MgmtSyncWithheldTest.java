package io.rdmablock.node;

import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.HostSecret;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.nvme.auth.NodeLinkKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A heartbeat answer whose secrets the server withheld (docs/authentication.md, "Secrets only over TLS"): the node
 * records and logs the reason at WARN once (again when it changes), keeps the node key and host secrets it had, and
 * goes on applying the volumes.
 */
class MgmtSyncWithheldTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String HOST = "nqn.2026-11.io.example:mgmt-host";
    private static final String REASON = "the management server has no TLS (--tls-cert) and node n1 connects over "
            + "192.0.2.7, not loopback: ...";
    @TempDir
    Path dir;

    private static DesiredVolume volume(String id) {
        return DesiredVolume.builder(id, id).subnqn("nqn.2026-11.io.rdmablock:volume:" + id).build();
    }

    /** @return what {@code sync} logged while applying {@code answer} (slf4j-simple writes to System.err) */
    private static String apply(MgmtSync sync, HeartbeatResponse answer) {
        PrintStream err = System.err;
        var captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            sync.apply(answer);
        } finally {
            System.setErr(err);
        }
        String logged = captured.toString(StandardCharsets.UTF_8);
        err.print(logged);
        return logged;
    }

    @Test
    void shouldRecordAndLogTheReasonOnceKeepTheSecretsItHadAndApplyTheVolumes() {
        byte[] key = NodeLinkKeys.newKey(RANDOM);
        DhchapSecret secret = DhchapSecret.generate(1, 32, RANDOM);
        HeartbeatResponse full = HeartbeatResponse.of(false, List.of(volume("v1")), 0)
                .withHosts(List.of(new HostSecret(HOST, secret.encoded(), null, 1)))
                .withNodeKeys(Base64.getEncoder().encodeToString(key), List.of());
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.apply(full);
            assertNull(sync.secretsWithheld());
            assertTrue(node.target().hostSecrets().hasNodeKey());

            // as it arrives over the wire: the same answer without secrets, with the reason, and a new volume
            HeartbeatResponse withheld = Json.read(Json.write(HeartbeatResponse.of(false,
                    List.of(volume("v1"), volume("v2")), 0).withSecretsWithheld(REASON)), HeartbeatResponse.class);
            assertEquals(REASON, withheld.secretsWithheld());
            assertNull(withheld.nodeKey());
            String logged = apply(sync, withheld);
            assertTrue(logged.contains("WARN") && logged.contains(REASON), logged);
            assertEquals(REASON, sync.secretsWithheld());
            assertTrue(node.target().hostSecrets().hasNodeKey(), "the node key applied before is kept");
            assertNotNull(node.target().hostSecrets().lookup(HOST), "managed hosts are not dropped: not \"none\"");
            assertTrue(node.target().hostSecrets().lookup(HOST).hostSecret().sameAs(secret));
            assertTrue(node.store().find("v2").isPresent(), "the volumes are still applied");

            assertFalse(apply(sync, withheld).contains(REASON), "logged once while the reason stays");
            String other = REASON.replace("192.0.2.7", "192.0.2.8");
            assertTrue(apply(sync, withheld.withSecretsWithheld(other)).contains(other), "again when it changes");

            assertTrue(apply(sync, full).contains("again"), "the end is logged");
            assertNull(sync.secretsWithheld());
        }
    }

    @Test
    void shouldRunWithoutANodeKeyWhenItNeverGotOne() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            String logged = apply(sync, HeartbeatResponse.of(false, List.of(volume("v1")), 0)
                    .withSecretsWithheld(REASON));
            assertTrue(logged.contains("no node key") && logged.contains(REASON), logged);
            assertFalse(node.target().hostSecrets().hasNodeKey());
            assertNull(node.target().hostSecrets().lookup(Node.hostnqnOf("n2")), "no peer node can prove itself");
            assertNotNull(node.target().subsystemOfVolume("v1"), "the volume is exported all the same");
        }
    }

    @Test
    void shouldRefuseAHostWhoseSecretWasWithheldInsteadOfAdmittingItUnauthenticated() {
        String host = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001"; // NodeTestHost's
        DesiredVolume v = DesiredVolume.builder("v1", "v1").allowedHosts(List.of(host))
                .subnqn(io.rdmablock.node.target.Subsystem.nqnFor("v1")).build();
        DhchapSecret secret = DhchapSecret.generate(1, 32, RANDOM);
        HeartbeatResponse full = HeartbeatResponse.of(false, List.of(v), 0)
                .withHosts(List.of(new HostSecret(host, secret.encoded(), null, 1)));
        try (StorageNode node = new StorageNode(NodeConfig.local(dir)).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            HeartbeatResponse withheld = Json.read(Json.write(full.withSecretsWithheld(REASON)),
                    HeartbeatResponse.class);
            assertEquals(host, withheld.hosts().getFirst().hostNqn(), "the names stay");
            assertNull(withheld.hosts().getFirst().dhchapSecret(), "the secrets go");
            String logged = apply(sync, withheld);
            assertTrue(logged.contains("refused at Connect"), logged);
            assertTrue(node.target().hostSecrets().secretUnknown(host));
            AssertionError refused = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                    () -> io.rdmablock.node.target.NodeTestHost.writeAndRead(node.fabricAddress(),
                            io.rdmablock.node.target.Subsystem.nqnFor("v1"), 1, 0x5A));
            assertTrue(refused.getMessage().contains("16772"), refused.getMessage()); // Connect Invalid Host

            apply(sync, full); // handed out: the host must authenticate with its secret, nothing is unknown
            assertFalse(node.target().hostSecrets().secretUnknown(host));
            assertTrue(node.target().hostSecrets().lookup(host).hostSecret().sameAs(secret));
        }
    }
}
