package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TargetConnectTest {
    @TempDir
    Path dir;
    TargetFixture f;

    @BeforeEach
    void setUp() {
        f = new TargetFixture(dir, TargetOptions.defaults().withMaxQueueEntries(32), 64L << 20, 512,
                Set.of(TargetFixture.HOSTNQN));
    }

    @AfterEach
    void tearDown() {
        f.close();
    }

    @Test
    void shouldAcceptAdminConnectAndReturnCntlid() {
        try (RawHost h = f.host(0, 32)) {
            RawHost.Cqe c = h.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            assertTrue(c.dw0() >= 1 && c.dw0() <= 0xFFEF, "cntlid " + c.dw0());
            assertEquals(1, c.cid());
            assertEquals(0, c.sqid());
            assertEquals(1, f.target.controllerCount());
        }
    }

    @Test
    void shouldAcceptIoQueueSqsize31WhenMaxEntriesIs32() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 32)) {
            int cntlid = admin.identify(Opcodes.CNS_CONTROLLER, 0).status() == 0
                    ? IdentifyControllerDescriptor.decode(admin.data()).cntlid() : -1;
            RawHost.Cqe c = io.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, cntlid);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            assertEquals(cntlid, c.dw0());
        }
    }

    @Test
    void shouldRejectSqsize32WhenMaxEntriesIs32WithInvalidParameterAtSqsizeOffset() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 32)) {
            int cntlid = TargetFixture.cntlid(admin);
            RawHost.Cqe c = io.fabricConnect(32, 0, f.subnqn, TargetFixture.HOSTNQN, cntlid);
            TargetFixture.assertInvalidParameter(c, false, ConnectDataDescriptor.SQSIZE_OFFSET);
        }
    }

    @Test
    void shouldRejectSqsize0WithInvalidParameterAtSqsizeOffset() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 32)) {
            RawHost.Cqe c = io.fabricConnect(0, 0, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin));
            TargetFixture.assertInvalidParameter(c, false, ConnectDataDescriptor.SQSIZE_OFFSET);
        }
    }

    /** Revoking a host in the allow-list ends its live association: it must not keep reading and writing. */
    @Test
    void shouldDisconnectAHostRemovedFromTheAllowList() {
        try (RawHost admin = f.admin(0); RawHost io = f.io(TargetFixture.cntlid(admin), 1, 8)) {
            f.store.setAllowedHosts(f.volume.id(), Set.of("nqn.2014-08.org.example:other"));
            RawHost.Cqe gone = io.await(5_000_000_000L);
            assertNotNull(gone, "I/O queue of the revoked host torn down");
            assertNotNull(gone.error());
            assertNotNull(admin.await(5_000_000_000L).error(), "admin queue of the revoked host torn down");
            assertEquals(Set.of(), f.target.connectedHosts(f.volume.id()));
        }
    }

    @Test
    void shouldKeepHostsStillOnTheAllowList() {
        try (RawHost admin = f.admin(0)) {
            f.store.setAllowedHosts(f.volume.id(), Set.of(TargetFixture.HOSTNQN, "nqn.2014-08.org.example:other"));
            assertEquals(Set.of(TargetFixture.HOSTNQN), f.target.connectedHosts(f.volume.id()));
            assertEquals(1, f.target.controllerCount());
        }
    }

    /** C8 (target side): a host's new association replaces its old one, which is torn down and drained first. */
    @Test
    void shouldReplacePreviousAssociationOfTheSameHost() throws InterruptedException {
        try (RawHost old = f.admin(0); RawHost oldIo = f.io(TargetFixture.cntlid(old), 1, 8); RawHost fresh = f.host(0, 32)) {
            RawHost.Cqe c = fresh.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            RawHost.Cqe gone = oldIo.await(5_000_000_000L);
            assertNotNull(gone, "old I/O queue torn down");
            assertNotNull(gone.error());
            assertNotNull(old.await(5_000_000_000L).error(), "old admin queue torn down");
            assertEquals(1, f.target.controllerCount());
            assertEquals(Set.of(TargetFixture.HOSTNQN), f.target.connectedHosts(f.volume.id()));
        }
    }

    @Test
    void shouldKeepAssociationsOfTheSameHostnqnWithDifferentHostIds() {
        try (RawHost a = f.admin(0); RawHost b = f.host(0, 32)) {
            MemorySegment c = b.connectCapsule(2, 31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
            b.data().asSlice(ConnectDataDescriptor.HOSTID_OFFSET, 16).fill((byte) 7);
            assertEquals(0, b.exec(c).status());
            assertEquals(2, f.target.controllerCount());
            assertEquals(0, a.exec(a.keepAlive(0, 5)).status(), "first association still serves");
        }
    }

    @Test
    void shouldAcceptConnectDataInCapsule() {
        try (RawHost h = f.host(0, 32)) {
            MemorySegment c = h.capsule(0);
            ConnectDataDescriptor.sqe(c, 3, 0, 31, 0);
            ConnectDataDescriptor.data(c.asSlice(64, ConnectDataDescriptor.DATA_LENGTH), null, 0xFFFF, f.subnqn,
                    TargetFixture.HOSTNQN);
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, ConnectDataDescriptor.DATA_LENGTH);
            RawHost.Cqe r = h.exec(c, 64 + ConnectDataDescriptor.DATA_LENGTH);
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
            assertEquals(3, r.cid());
        }
    }

    @Test
    void shouldRejectConnectWhoseQidDiffersFromThePrivateData() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 8)) {
            MemorySegment c = io.connectCapsule(4, 7, 0, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin), 0);
            c.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, ConnectDataDescriptor.QID_OFFSET, (short) 2);
            RawHost.Cqe r = io.exec(c);
            TargetFixture.assertInvalidParameter(r, false, ConnectDataDescriptor.QID_OFFSET);
        }
    }

    @Test
    void shouldRejectSecondConnectOnAQueueWithCommandSequenceError() {
        try (RawHost admin = f.admin(0)) {
            RawHost.Cqe r = admin.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR), r.status());
            assertEquals(1, f.target.controllerCount());
        }
    }

    @Test
    void shouldRejectConnectRequestWhoseHsqsizeExceedsMaxEntries() {
        byte[] pd = new CmPrivateData.Request(0, 1, 33, 32, 0).encode();
        CmException e = assertThrows(CmException.class,
                () -> RawHost.connect(f.provider, f.target.localAddress(), pd, 1, 33, 4096).close());
        CmPrivateData.Reject r = CmPrivateData.Reject.decode(e.privateData());
        assertNotNull(r, "reject private data");
        assertEquals(CmPrivateData.REJECT_INVALID_HSQSIZE, r.sts());
    }

    @Test
    void shouldAnswerCommandBeforeConnectWithCommandSequenceError() {
        try (RawHost h = f.host(0, 32)) {
            RawHost.Cqe c = h.exec(h.keepAlive(0, 9));
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR), c.status());
            assertEquals(9, c.cid());
            assertEquals(0, h.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF).status(),
                    "queue still usable");
        }
    }

    @Test
    void shouldRejectUnknownSubnqnWithInvalidParameterInData() {
        try (RawHost h = f.host(0, 32)) {
            RawHost.Cqe c = h.fabricConnect(31, 0, "nqn.2026-11.io.rdmablock:volume:nope", TargetFixture.HOSTNQN,
                    0xFFFF);
            TargetFixture.assertInvalidParameter(c, true, ConnectDataDescriptor.SUBNQN_OFFSET);
        }
    }

    @Test
    void shouldRejectHostNotOnAllowList() {
        try (RawHost h = f.host(0, 32)) {
            RawHost.Cqe c = h.fabricConnect(31, 0, f.subnqn, "nqn.2014-08.org.nvmexpress:uuid:someone-else", 0xFFFF);
            assertEquals(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST), c.status());
            assertEquals(0, f.target.controllerCount());
        }
    }

    @Test
    void shouldRejectIoConnectWithUnknownCntlid() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 8)) {
            RawHost.Cqe c = io.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin) + 100);
            TargetFixture.assertInvalidParameter(c, true, ConnectDataDescriptor.CNTLID_OFFSET);
        }
    }

    @Test
    void shouldIdentifyControllerAndNamespace() {
        try (RawHost admin = f.admin(0)) {
            assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
            IdentifyControllerDescriptor.Info ci = IdentifyControllerDescriptor.decode(admin.data());
            assertEquals(128 * 1024, ci.mdtsBytes());
            assertEquals(8192, ci.inCapsuleDataBytes());
            assertTrue(ci.volatileWriteCache());
            assertEquals(1, ci.namespaceCount());
            assertEquals(f.subnqn, ci.subnqn());
            assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
            IdentifyNamespaceDescriptor.Info ni = IdentifyNamespaceDescriptor.decode(admin.data());
            assertEquals((64L << 20) / 512, ni.sizeBlocks());
            assertEquals(512, ni.lbaSize());
            assertEquals(f.store.zeroesAfterTrim(), ni.zeroesAfterTrim());
            assertTrue(admin.guardsIntact());
        }
    }

    @Test
    void shouldRejectIdentifyNamespaceForUnknownNsid() {
        try (RawHost admin = f.admin(0)) {
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE),
                    admin.identify(Opcodes.CNS_NAMESPACE, 2).status());
        }
    }

    @Test
    void shouldDestroyControllerWhenKeepAliveExpires() throws InterruptedException {
        f.close();
        f = new TargetFixture(dir.resolve("ka"), TargetOptions.defaults().withKeepAliveGraceMs(200), 8L << 20, 512,
                Set.of("*"));
        try (RawHost admin = f.admin(1000)) {
            assertEquals(1, f.target.controllerCount());
            for (int i = 0; i < 6; i++) {
                Thread.sleep(250); // keep-alive traffic at KATO/4 for longer than KATO: the controller must survive
                assertEquals(0, admin.exec(admin.keepAlive(0, 100 + i)).status());
            }
            assertEquals(1, f.target.controllerCount(), "controller alive while keep-alives flow");
            Await.until(() -> f.target.controllerCount() == 0, Duration.ofSeconds(5),
                    "controller destroyed after KATO + grace");
            RawHost.Cqe c = admin.await(5_000_000_000L);
            assertNotNull(c, "the admin queue is torn down");
            assertNotNull(c.error(), "transport error after teardown");
        }
    }

    @Test
    void shouldCountIoQueueCommandsAsKeepAliveTraffic() throws InterruptedException {
        // TBKAS: a host busy on its I/O queues (or still connecting them) keeps the association without Keep Alive
        f.close();
        f = new TargetFixture(dir.resolve("tbkas"), TargetOptions.defaults().withKeepAliveGraceMs(200), 8L << 20, 512,
                Set.of("*"));
        try (RawHost admin = f.admin(1000)) {
            assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
            int ctratt = admin.data().get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED,
                    IdentifyControllerDescriptor.CTRATT);
            assertEquals(IdentifyControllerDescriptor.CTRATT_TBKAS, ctratt & IdentifyControllerDescriptor.CTRATT_TBKAS,
                    "CTRATT advertises TBKAS");
            int cntlid = TargetFixture.cntlid(admin);
            Thread.sleep(700); // more than half of KATO passes before the I/O queue connects: the scenario
            try (RawHost io = f.io(cntlid, 1, 8)) {
                for (int i = 0; i < 8; i++) {
                    Thread.sleep(250); // only I/O commands, for twice KATO + grace
                    assertEquals(0, io.exec(io.command(0, Opcodes.IO_FLUSH, 10 + i, 1)).status(), "flush " + i);
                }
                assertEquals(1, f.target.controllerCount(), "controller alive while its I/O queue carries commands");
                Await.until(() -> f.target.controllerCount() == 0, Duration.ofSeconds(5),
                        "silent association destroyed after KATO + grace");
            }
        }
    }


    @Test
    void shouldTearDownAQueueThatNeverSendsConnect() {
        // a host that stops (or a peer that is no host at all) right after the CM handshake must not hold the
        // queue's registered memory and poller slot forever: nothing else (no controller, no KATO) bounds it
        TargetOptions o = TargetOptions.defaults().withMaxQueueEntries(32)
                .withPending(new TargetOptions.PendingLimits(64, 16, 1_000));
        f.close();
        f = new TargetFixture(dir.resolve("b"), o, 64L << 20, 512, Set.of(TargetFixture.HOSTNQN));
        try (RawHost h = f.host(0, 32)) {
            RawHost.Cqe c = h.await(5_000_000_000L);
            assertNotNull(c, "the silent queue is torn down");
            assertNotNull(c.error(), "transport error after teardown");
        }
        try (RawHost admin = f.admin(0)) { // a host that sends Connect in time is served
            assertEquals(1, f.target.controllerCount());
        }
    }
}
