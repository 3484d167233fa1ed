package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.AdminCommands;
import io.rdmablock.nvmf.host.FakeTarget;
import io.rdmablock.nvmf.host.NvmetRules;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The initiator against {@link FakeTarget} in its strict, Linux-nvmet-like mode ({@link NvmetRules}): every command
 * the host sends must pass nvmet-rdma's checks (the target counts refusals), and the host must use what nvmet states
 * (random hex serial, MN "Linux", NN 1024, 4096-byte inline data, MDTS, CAP.MQES, granted queues, active nsids).
 */
@Timeout(60)
class FakeTargetNvmetTest {
    static final String SUBNQN = "nqn.2014-08.org.example:nvmet-subsys";
    VerbsProvider provider;
    FakeTarget target;
    InetSocketAddress address;
    final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, SUBNQN, 64L << 20, 64L << 20, 512, 256 << 10, true).nvmetLike();
        address = target.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (AutoCloseable c : toClose.reversed()) {
            c.close();
        }
        target.close();
        provider.close();
    }

    NvmeBlockDevice open(DeviceOptions o) {
        NvmeBlockDevice d = NvmeBlockDevice.open(address, SUBNQN, "nqn.2014-08.org.example:host1",
                o.provider(provider).connectTimeoutMs(3000));
        toClose.add(d);
        return d;
    }

    void assertNoRefusal() {
        assertEquals(0, target.refusals.get(), "nvmet would refuse: " + target.lastRefusal);
    }

    /** Writes and reads back in-capsule (<= 4096), keyed and bounced sizes, then flushes and zeroes. */
    static void exercise(NvmeBlockDevice d) {
        try (Arena a = Arena.ofShared()) {
            for (int len : new int[]{512, 4096, 8192, 256 << 10, 1 << 20}) {
                MemorySegment w = FakeTargetDeviceTest.pattern(d.allocateBuffer(len), len);
                d.writeSync(0, w, false);
                MemorySegment r = d.allocateBuffer(len);
                d.readSync(0, r);
                assertEquals(-1, w.mismatch(r), "registered, len=" + len);
                MemorySegment plain = FakeTargetDeviceTest.pattern(a.allocate(len, 8), len + 7);
                d.writeSync(2L << 20, plain, true);
                MemorySegment back = a.allocate(len, 8);
                d.readSync(2L << 20, back);
                assertEquals(-1, plain.mismatch(back), "bounced, len=" + len);
                d.freeBuffer(w);
                d.freeBuffer(r);
            }
        }
        d.flushSync();
        d.writeZeroes(0, 4096).join();
    }

    @Test
    void shouldOpenReadWriteAndFlushWithoutAnythingNvmetRefuses() {
        NvmeBlockDevice d = open(DeviceOptions.defaults());
        assertEquals(AdminCommands.CC_ENABLE, target.cc, "CC as a Linux host writes it");
        assertEquals(NvmetRules.INLINE_DATA_BYTES, d.inCapsuleBytes(), "IOCCSZ (64 + 4096) / 16");
        assertEquals(256 << 10, d.maxTransferBytes(), "MDTS");
        assertEquals(64L << 20, d.capacityBytes());
        exercise(d);
        assertNoRefusal();
    }

    @Test
    void shouldUseTheOnlyActiveNamespaceWhenItIsNotNsidOne() {
        target.activeNsids = new int[]{5};
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(1));
        exercise(d); // the target answers Invalid Namespace to any other nsid
        assertNoRefusal();
    }

    @Test
    void shouldTakeNsidOneAmongSeveralUnlessTheOptionNamesAnother() {
        target.activeNsids = new int[]{1, 7};
        try (NvmeBlockDevice d = NvmeBlockDevice.open(address, SUBNQN, null,
                DeviceOptions.defaults().ioQueues(1).provider(provider).nsid(7))) {
            exercise(d);
        }
        target.activeNsids = new int[]{7};
        BlockIoException e = assertThrows(BlockIoException.class, () -> open(DeviceOptions.defaults().nsid(1)));
        assertTrue(e.getMessage().contains("nsid 1 is not active"), e.getMessage());
    }

    @Test
    void shouldRespectMqesMaxcmdAndTheGrantedQueueCount() {
        target.cap = NvmetRules.CAP & ~0xFFFFL | 63; // MQES 63: queues of 64 entries (the admin queue needs 32)
        target.grantedQueues = 2;
        NvmeBlockDevice d = open(DeviceOptions.defaults().ioQueues(4).queueEntries(128));
        assertEquals(2, d.queues().length);
        assertEquals(64, d.queues()[0].mem.entries());
        List<java.util.concurrent.CompletableFuture<Void>> fs = new ArrayList<>();
        MemorySegment w = FakeTargetDeviceTest.pattern(d.allocateBuffer(4096), 3);
        for (int i = 0; i < 200; i++) {
            fs.add(d.write(i * 4096L, w, false)); // more than the queues hold: the rest wait on the host
        }
        fs.forEach(java.util.concurrent.CompletableFuture::join);
        assertNoRefusal();
    }

    @Test
    void shouldReconnectToTheSameRandomSerialAndKeepWorking() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().keepAliveTimeoutMs(1000).reconnectDelayMs(200));
        MemorySegment w = FakeTargetDeviceTest.pattern(d.allocateBuffer(8192), 11);
        d.writeSync(0, w, false);
        target.cutLink();
        target.restore();
        d.write(8192, w, false).get(20, TimeUnit.SECONDS);
        MemorySegment r = d.allocateBuffer(8192);
        d.readSync(8192, r);
        assertEquals(-1, w.mismatch(r));
        assertNoRefusal();
    }

    @Test
    void shouldLoseTheDeviceWhenAnotherSerialAnswersAfterAReconnect() throws Exception {
        NvmeBlockDevice d = open(DeviceOptions.defaults().keepAliveTimeoutMs(1000).reconnectDelayMs(200));
        target.cutLink();
        target.serial = NvmetRules.randomSerial();
        target.restore();
        Await.until(() -> d.state() == AssociationState.LOST, Duration.ofSeconds(20),
                "the association LOST after another serial answered");
        assertTrue(d.lossReason().contains("serial changed"), d.lossReason());
    }

    @Test
    void shouldFailOpenNamingTheFatalStatusWhenTheControllerRefusesCc() {
        target.fatalOnEnable = true;
        BlockIoException e = assertThrows(BlockIoException.class, () -> open(DeviceOptions.defaults()));
        assertTrue(e.getMessage().contains("controller fatal status"), e.getMessage());
    }
}
