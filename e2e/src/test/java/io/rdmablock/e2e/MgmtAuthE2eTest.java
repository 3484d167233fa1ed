package io.rdmablock.e2e;

import io.rdmablock.initiator.DeviceOptions;
import io.rdmablock.initiator.NvmeBlockDevice;
import io.rdmablock.initiator.NvmeStatusException;
import io.rdmablock.mgmt.api.MgmtServer;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.NodeConfig;
import io.rdmablock.node.StorageNode;
import io.rdmablock.node.target.HostSecrets;
import io.rdmablock.node.target.TargetOptions;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Managed DH-HMAC-CHAP secrets end to end on the soft provider (docs/authentication.md, "Managed secrets"): an
 * in-process management server and storage node (heartbeat every 100 ms), the host's secret set over REST, a volume
 * created with requireAuth, and the initiator library: the right secret connects and does verified I/O; no secret,
 * a wrong secret and a host without a secret are refused; after the secret is changed over REST a new connection
 * with the old one fails and with the new one succeeds. Every wait is bounded (count and time). Not tagged
 * rdma-e2e, like {@link AuthE2eTest}: its cost is the DH arithmetic, not the device.
 */
@Timeout(120)
class MgmtAuthE2eTest {
    private static final String TOKEN = "mgmt-auth-e2e-token";
    private static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0e2e0000-0000-4000-8000-00000000a17f";
    private static final String OTHER = "nqn.2014-08.org.nvmexpress:uuid:0e2e0000-0000-4000-8000-00000000b0b0";
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Bound of one wait. */
    private static final Duration WAIT = Duration.ofSeconds(20);
    @TempDir
    Path dir;
    private MgmtServer mgmt;
    private MgmtClient client;
    private StorageNode node;

    @BeforeEach
    void start() {
        mgmt = MgmtServer.start(dir.resolve("mgmt"), "127.0.0.1", 0, TOKEN, 60_000);
        client = new MgmtClient(URI.create(mgmt.url()), TOKEN);
        node = new StorageNode(new NodeConfig(dir.resolve("node"), new InetSocketAddress(NodeFixtures.host(), 0), "soft",
                URI.create(mgmt.url()), TOKEN, "node-mgmt-auth", null, null, 100, List.of(),
                TargetOptions.defaults())).start();
        await("the node registered", () -> client.listNodes().stream()
                .anyMatch(n -> n.nodeId().equals("node-mgmt-auth")));
    }

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
        if (mgmt != null) {
            mgmt.close();
        }
    }

    private static void await(String what, BooleanSupplier done) {
        Await.until(done, WAIT, what);
    }

    /** Waits until the node applies {@code secret} for {@link #HOSTNQN} (from its heartbeat answers). */
    private void awaitNodeHas(DhchapSecret secret) {
        await("the node has the host's current secret", () -> {
            HostSecrets.Entry e = node.target().hostSecrets().lookup(HOSTNQN);
            return e != null && e.hostSecret().sameAs(secret);
        });
    }

    private NvmeBlockDevice open(String hostnqn, DhchapSecret secret) {
        DeviceOptions opts = secret == null ? DeviceOptions.defaults() : DeviceOptions.defaults().dhchap(secret, null);
        return NvmeBlockDevice.open(node.fabricAddress(), NodeFixtures.subnqn("secure"), hostnqn,
                opts.providerMode("soft").ioQueues(2));
    }

    private static void writeAndReadBack(NvmeBlockDevice d, int seed) {
        MemorySegment w = d.allocateBuffer(4096);
        for (int i = 0; i < 4096; i++) {
            w.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        d.writeSync(8192, w, false);
        MemorySegment r = d.allocateBuffer(4096);
        d.readSync(8192, r);
        assertArrayEquals(w.toArray(ValueLayout.JAVA_BYTE), r.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void shouldAuthenticateWithTheManagedSecretAndFollowAChangeOfIt() {
        DhchapSecret first = DhchapSecret.generate(1, 32, RANDOM);
        client.setHost(HOSTNQN, new SetHostRequest(first.encoded(), null));
        var created = client.createVolume(new CreateVolumeRequest("secure", 8L << 20, 512, 1, 1, List.of("*"), true));
        assertTrue(created.requireAuth());
        await("the volume is ready", () -> client.getVolume("secure").state() == VolumeState.READY);
        awaitNodeHas(first);

        try (NvmeBlockDevice d = open(HOSTNQN, first)) {
            writeAndReadBack(d, 7);
        }
        NvmeStatusException none = assertThrows(NvmeStatusException.class, () -> open(HOSTNQN, null));
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, none.sc());
        NvmeStatusException wrong = assertThrows(NvmeStatusException.class, () -> open(HOSTNQN,
                DhchapSecret.generate(1, 32, RANDOM)));
        assertEquals(1, wrong.sct());
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, wrong.sc());
        assertTrue(wrong.dnr());
        NvmeStatusException unknown = assertThrows(NvmeStatusException.class, () -> open(OTHER, null));
        assertEquals(NvmeStatus.SCT_COMMAND_SPECIFIC, unknown.sct());
        assertEquals(NvmeStatus.SC_CONNECT_INVALID_HOST, unknown.sc());

        DhchapSecret second = DhchapSecret.generate(3, 64, RANDOM);
        client.setHost(HOSTNQN, new SetHostRequest(second.encoded(), null));
        awaitNodeHas(second);
        NvmeStatusException old = assertThrows(NvmeStatusException.class, () -> open(HOSTNQN, first));
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, old.sc());
        try (NvmeBlockDevice d = open(HOSTNQN, second)) {
            writeAndReadBack(d, 11);
        }
    }

    @Test
    void shouldRefuseAHostWhoseSecretWasRemovedFromAVolumeRequiringAuth() {
        DhchapSecret secret = DhchapSecret.generate(1, 32, RANDOM);
        client.setHost(HOSTNQN, new SetHostRequest(secret.encoded(), null));
        client.createVolume(new CreateVolumeRequest("secure", 8L << 20, 512, 1, 1, List.of("*"), true));
        await("the volume is ready", () -> client.getVolume("secure").state() == VolumeState.READY);
        awaitNodeHas(secret);
        client.removeHost(HOSTNQN);
        await("the node dropped the host", () -> node.target().hostSecrets().lookup(HOSTNQN) == null);
        NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> open(HOSTNQN, secret));
        assertEquals(NvmeStatus.SC_CONNECT_INVALID_HOST, e.sc());
    }
}
