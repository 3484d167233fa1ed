package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attack: idle discovery connections, KATO 0, each from its own host NQN (an unauthenticated peer picks any),
 * on a node whose cntlid range is the 1024 the management plane gives it. Before the fix a discovery controller with
 * KATO 0 never expired and cntlids were node-global, so 1024 of them took every cntlid and no host could connect to
 * a volume any more (the 1025th Connect threw "no free cntlid" and its queue was torn down without an answer).
 * Expected: discovery controllers are capped ({@link ConnectLimits#maxDiscoveryControllers()}, 1024) and the
 * excess answered Connect Controller Busy, a discovery controller's KATO 0 becomes 120 s, and a new host still
 * connects to the volume subsystem and does I/O.
 */
class DiscoveryFloodTest {
    private static final int FLOOD = 1_100;

    /** Connect Controller Busy, DNR (SCT 1, SC 81h). */
    private static final int CONTROLLER_BUSY = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC,
            NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, true);

    @TempDir
    Path dir;
    private TargetFixture f;
    private final List<RawHost> hosts = new ArrayList<>();

    @AfterEach
    void tearDown() {
        long t0 = System.nanoTime();
        hosts.forEach(RawHost::close);
        System.out.printf("discovery flood: %d connections closed in %d ms%n", hosts.size(),
                (System.nanoTime() - t0) / 1_000_000);
        if (f != null) {
            f.close();
        }
    }

    @Test
    @Timeout(180)
    void shouldConnectAVolumeHostNextTo1100IdleDiscoveryConnections() {
        f = new TargetFixture(dir, TargetOptions.defaults(), 64L << 20, 512, Set.of("*"));
        f.target.cntlidRange(1, 1024); // the range of node ordinal 0 (docs/failover.md)
        InetSocketAddress addr = f.target.localAddress();
        int ok = 0;
        int busy = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < FLOOD; i++) {
            RawHost h = RawHost.connect(f.provider, addr, 0, 2, 4096);
            RawHost.Cqe c = h.fabricConnect(1, 0, DiscoveryLogDescriptor.DISCOVERY_NQN,
                    "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-" + String.format("%012d", i), 0xFFFF);
            if (c.ok()) {
                ok++;
                hosts.add(h);
            } else {
                assertEquals(CONTROLLER_BUSY, c.status(), "discovery Connect " + i + ": "
                        + NvmeStatus.describe(c.status()) + ", error " + c.error());
                busy++;
                h.close(); // as a host does when its Connect fails
            }
        }
        long floodMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf("discovery flood: %d discovery Connects in %d ms: %d controllers, %d answered Controller "
                + "Busy; node registered queue memory %d KiB%n", FLOOD, floodMs, ok, busy,
                f.target.registeredQueueBytes() / 1024);
        assertEquals(ConnectLimits.DEFAULTS.maxDiscoveryControllers(), ok);
        assertEquals(FLOOD - ok, busy);
        // an idle discovery controller expires: KATO 0 became 120 s (Get Features 0Fh)
        RawHost first = hosts.getFirst();
        MemorySegment get = first.nullSglCommand(0, Opcodes.ADMIN_GET_FEATURES, 9, 0);
        SqeDescriptor.cdw(get, 10, Opcodes.FID_KEEP_ALIVE_TIMER);
        RawHost.Cqe kato = first.exec(get);
        assertEquals(0, kato.status(), NvmeStatus.describe(kato.status()));
        assertEquals(ConnectLimits.DISCOVERY_KATO_MS, kato.dw0(), "discovery KATO 0 -> 120 s");
        // a new host still connects to the volume and does I/O
        long c0 = System.nanoTime();
        try (RawHost admin = f.admin(0); RawHost io = f.io(TargetFixture.cntlid(admin), 1, 8)) {
            assertEquals(0, io.readBlocks(0, 3, 0).status());
            System.out.printf("discovery flood: a volume host connected and read in %d ms%n",
                    (System.nanoTime() - c0) / 1_000_000);
        }
        assertTrue(f.target.controllerCount() >= ok);
    }

    @Test
    @Timeout(30)
    void shouldExpireAnIdleDiscoveryControllerWithKato0() throws Exception {
        f = new TargetFixture(dir, TargetOptions.defaults(), 64L << 20, 512, Set.of("*"));
        ConnectLimits d = ConnectLimits.DEFAULTS;
        // maxKatoMs 1 s lowers the 120 s a discovery KATO 0 becomes, so the test need not wait 2 minutes
        f.target.connectLimits(new ConnectLimits(d.maxControllers(), d.maxDiscoveryControllers(),
                d.maxControllersPerHost(), d.maxQueuesPerHost(), d.maxRegisteredBytes(), 1_000, 1_000));
        try (RawHost h = RawHost.connect(f.provider, f.target.localAddress(), 0, 2, 4096)) {
            assertEquals(0, h.fabricConnect(1, 0, DiscoveryLogDescriptor.DISCOVERY_NQN, TargetFixture.HOSTNQN,
                    0xFFFF).status());
            assertEquals(1, f.target.controllerCount());
            long t0 = System.nanoTime();
            Await.until(() -> f.target.controllerCount() == 0, Duration.ofSeconds(10),
                    "the idle discovery controller destroyed (KATO 0 as maxKatoMs 1000 + grace 1000)");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("discovery KATO 0 (maxKatoMs 1000, grace 1000): idle controller destroyed after %d ms%n",
                    ms);
        }
    }
}
