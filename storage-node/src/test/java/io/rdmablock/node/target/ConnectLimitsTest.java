package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The per-host and per-node caps of {@link ConnectLimits}, each reached by one host over loopback and answered
 * Connect Controller Busy (DNR), and the KATO bounds (0 and above the cap).
 */
class ConnectLimitsTest extends TargetTestBase {
    /** Connect Controller Busy, DNR (SCT 1, SC 81h). */
    private static final int CONTROLLER_BUSY = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC,
            NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, true);
    private static final ConnectLimits D = ConnectLimits.DEFAULTS;

    private void limits(int maxControllersPerHost, int maxQueuesPerHost, long maxRegisteredBytes) {
        f.target.connectLimits(new ConnectLimits(D.maxControllers(), D.maxDiscoveryControllers(),
                maxControllersPerHost, maxQueuesPerHost, maxRegisteredBytes, D.defaultKatoMs(), D.maxKatoMs()));
    }

    @Test
    @Timeout(30)
    void shouldRefuseAHostsThirdControllerAtMaxControllersPerHost2() {
        limits(2, D.maxQueuesPerHost(), D.maxRegisteredBytes());
        // discovery associations are never replaced, so one host can hold several
        try (RawHost a = discovery(); RawHost b = discovery(); RawHost c = f.host(0, 2)) {
            RawHost.Cqe third = c.fabricConnect(1, 0, DiscoveryLogDescriptor.DISCOVERY_NQN, TargetFixture.HOSTNQN,
                    0xFFFF);
            assertEquals(CONTROLLER_BUSY, third.status(), NvmeStatus.describe(third.status()));
            assertEquals(2, f.target.controllerCount());
            assertEquals(1, f.metrics.connectRefusals("maxControllersPerHost"));
        }
    }

    @Test
    @Timeout(30)
    void shouldRefuseAHostsThirdQueueAtMaxQueuesPerHost2AndCountAClosedOneNoMore() throws Exception {
        limits(D.maxControllersPerHost(), 2, D.maxRegisteredBytes());
        connect(TargetFixture.HOSTNQN, 0); // admin + I/O queue 1
        int cntlid = TargetFixture.cntlid(admin);
        try (RawHost q2 = f.host(2, 8)) {
            RawHost.Cqe c = q2.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, cntlid);
            assertEquals(CONTROLLER_BUSY, c.status(), NvmeStatus.describe(c.status()));
        }
        assertEquals(2, f.target.queuesOf(TargetFixture.HOSTNQN));
        assertEquals(1, f.metrics.connectRefusals("maxQueuesPerHost"));
        io.close();
        io = null;
        Await.until(() -> f.target.queuesOf(TargetFixture.HOSTNQN) == 1, Duration.ofSeconds(5),
                "a closed queue no longer counts");
        f.io(cntlid, 2, 8).close(); // room again
    }

    @Test
    @Timeout(30)
    void shouldRefuseAQueueBeyondMaxRegisteredBytes() {
        limits(D.maxControllersPerHost(), D.maxQueuesPerHost(), 2L << 20); // 2 MiB
        admin = f.admin(0); // 32 entries x (12 KiB RECV slot + 4 KiB data): about 0.5 MiB
        try (RawHost big = f.host(1, 32)) { // 32 x (12 KiB + 128 KiB): about 4.4 MiB
            RawHost.Cqe c = big.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin));
            assertEquals(CONTROLLER_BUSY, c.status(), NvmeStatus.describe(c.status()));
        }
        assertThrows(AssertionError.class, () -> f.io(TargetFixture.cntlid(admin), 1, 32).close());
        assertEquals(2, f.metrics.connectRefusals("maxRegisteredBytes"));
    }

    @Test
    @Timeout(30)
    void shouldBoundKato() {
        admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
        assertEquals(D.defaultKatoMs(), kato(admin), "KATO 0 on a volume subsystem");
        assertEquals(0, setKato(admin, -1).status()); // 0xFFFFFFFF ms
        assertEquals(D.maxKatoMs(), kato(admin), "Set Features KATO beyond the cap");
        assertEquals(0, setKato(admin, 5_000).status());
        assertEquals(5_000, kato(admin));
        try (RawHost d = f.host(0, 2)) {
            assertEquals(0, d.fabricConnect(1, Integer.MAX_VALUE, DiscoveryLogDescriptor.DISCOVERY_NQN,
                    TargetFixture.HOSTNQN, 0xFFFF).status());
            assertEquals(D.maxKatoMs(), kato(d), "Connect KATO beyond the cap");
        }
    }

    private RawHost discovery() {
        RawHost h = f.host(0, 2);
        assertEquals(0, h.fabricConnect(1, 0, DiscoveryLogDescriptor.DISCOVERY_NQN, TargetFixture.HOSTNQN, 0xFFFF)
                .status());
        return h;
    }

    private static int kato(RawHost h) {
        MemorySegment c = h.nullSglCommand(0, Opcodes.ADMIN_GET_FEATURES, 11, 0);
        SqeDescriptor.cdw(c, 10, Opcodes.FID_KEEP_ALIVE_TIMER);
        RawHost.Cqe r = h.exec(c);
        assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
        return r.dw0();
    }

    private static RawHost.Cqe setKato(RawHost h, int ms) {
        MemorySegment c = h.nullSglCommand(0, Opcodes.ADMIN_SET_FEATURES, 12, 0);
        SqeDescriptor.cdw(c, 10, Opcodes.FID_KEEP_ALIVE_TIMER);
        SqeDescriptor.cdw(c, 11, ms);
        return h.exec(c);
    }
}
