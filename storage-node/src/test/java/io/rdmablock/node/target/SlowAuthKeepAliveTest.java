package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.nvme.auth.DhchapSecret;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A host whose DH-HMAC-CHAP answer the node delays longer than the association's KATO + grace (here the address's DH
 * budget, as a slow machine would: under an emulator one ffdhe2048 exponentiation took seconds and the Linux host's
 * controller was destroyed by its keep-alive timer while it waited for Success1) keeps its association: the host is
 * waiting for the node, not silent.
 */
@Timeout(60)
class SlowAuthKeepAliveTest {
    private final DhchapSecret secret = DhchapSecret.generate(1, 32, RawAuth.RANDOM);
    @TempDir
    Path dir;
    private TargetFixture f;

    @AfterEach
    void stop() {
        if (f != null) {
            f.close();
        }
    }

    @Test
    void shouldKeepAnAssociationWaitingForItsDhComputationPastKeepAlive() {
        // 1 ffdhe2048 unit a second, burst 1: the Challenge's key pair spends it, the Reply's check waits ~1 s,
        // longer than KATO 300 ms + grace 200 ms
        io.rdmablock.node.NodeConfiguration cfg = io.rdmablock.node.NodeConfiguration.from(Map.of(
                io.rdmablock.node.NodeConfiguration.DHCHAP_ADDRESS_UNITS_PER_SECOND, "1",
                io.rdmablock.node.NodeConfiguration.DHCHAP_ADDRESS_BURST_UNITS, "1")::get);
        f = new TargetFixture(dir, TargetOptions.defaults().withKeepAliveGraceMs(200), 8L << 20, 512, Set.of("*"), cfg);
        f.target.hostSecrets(HostSecrets.of(Map.of(TargetFixture.HOSTNQN, new HostSecrets.Entry(secret, null))));
        try (RawHost admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 300)) {
            long t0 = System.nanoTime();
            DhchapHost d = RawAuth.authenticate(admin, TargetFixture.HOSTNQN, f.subnqn, secret, 0);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(DhchapHost.State.AUTHENTICATED, d.state(), d.failureDetail());
            assertEquals(true, ms >= 500, "the answer waited past KATO + grace (" + ms + " ms)");
            assertEquals(1, f.target.controllerCount(), "the association survived its wait");
            assertEquals(0, admin.exec(admin.keepAlive(0, 200)).status(), "and serves commands");
        }
    }
}
