package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Attacks on the association of a host that must authenticate (DH-HMAC-CHAP), by a peer that knows the host's NQN,
 * HOSTID and controller id but not its secret: the host's association and I/O must survive each.
 */
@Timeout(60)
class AuthTakeoverTest {
    private static final long MS = 1_000_000L;
    private final DhchapSecret secret = DhchapSecret.generate(1, 32, RawAuth.RANDOM);
    private final DhchapSecret wrong = DhchapSecret.generate(1, 32, RawAuth.RANDOM);
    @TempDir
    Path dir;
    private TargetFixture f;
    private RawHost admin;
    private RawHost io;
    private int cntlid;

    @BeforeEach
    void start() {
        f = new TargetFixture(dir);
        f.target.hostSecrets(HostSecrets.of(Map.of(TargetFixture.HOSTNQN, new HostSecrets.Entry(secret, null))));
        admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
        assertAuthenticated(RawAuth.authenticate(admin, TargetFixture.HOSTNQN, f.subnqn, secret, 0));
        cntlid = TargetFixture.cntlid(admin);
        io = f.io(cntlid, 1, 8);
        assertAuthenticated(RawAuth.authenticate(io, TargetFixture.HOSTNQN, f.subnqn, secret, 1));
        assertEquals(0, io.writeBlocks(1, 0, 0x5A, 0).status());
    }

    @AfterEach
    void stop() {
        TargetFixture.close(io, admin);
        f.close();
    }

    private static void assertAuthenticated(DhchapHost d) {
        assertEquals(DhchapHost.State.AUTHENTICATED, d.state(), d.failureDetail());
    }

    /**
     * The victim reads on its I/O queue in a thread while {@code attack} runs, and after it until the target ended
     * every queue and association the attack opened and the victim's reads went on.
     */
    private void victimReadsThrough(Runnable attack) throws Exception {
        int victimQueues = f.target.queuesOf(TargetFixture.HOSTNQN);
        int controllers = f.target.controllerCount();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        AtomicReference<String> failure = new AtomicReference<>();
        Thread victim = new Thread(() -> {
            long deadline = System.nanoTime() + 30_000 * MS;
            while (!stop.get() && System.nanoTime() < deadline) {
                RawHost.Cqe c = io.readBlocks(0, 2, 0);
                if (c == null || !c.ok()) {
                    failure.set("read " + reads.get() + ": " + c);
                    return;
                }
                reads.incrementAndGet();
            }
        }, "victim");
        victim.start();
        try {
            attack.run();
            int before = reads.get();
            Await.until(() -> f.target.queuesOf(TargetFixture.HOSTNQN) == victimQueues
                            && f.target.controllerCount() == controllers, Duration.ofSeconds(10),
                    "the attack's queues and associations ended (failure linger 100 ms, housekeeping 10 ms)");
            int after = reads.get();
            Await.until(() -> reads.get() > after || failure.get() != null, Duration.ofSeconds(10),
                    "a victim read after the attack's queues ended");
            assertNull(failure.get(), "the victim's I/O failed");
            assertTrue(reads.get() > before, "the victim's I/O went on after the attack: " + reads.get());
        } finally {
            stop.set(true);
            victim.join(10_000);
        }
        assertNull(failure.get(), "the victim's I/O failed");
        assertFalse(f.target.controller(cntlid).isDestroyed(), "the victim's association stays");
    }

    @Test
    void shouldKeepTheHostsAssociationWhenAPeerConnectsWithItsNqnAndHostIdButNoSecret() throws Exception {
        victimReadsThrough(() -> {
            try (RawHost attacker = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0)) {
                // connected (AUTHREQ.ATR), never authenticates
                assertTrue(attacker.propertyGet(2, Opcodes.PROP_CAP).status() != 0);
            }
        });
    }

    @Test
    void shouldKeepTheHostsAssociationWhenAPeerConnectsWithItsNqnAndHostIdAndAWrongSecret() throws Exception {
        victimReadsThrough(() -> {
            try (RawHost attacker = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0)) {
                DhchapHost d = RawAuth.authenticate(attacker, TargetFixture.HOSTNQN, f.subnqn, wrong, 7);
                assertEquals(DhchapHost.State.FAILED, d.state());
                // the node ends the attacker's association (100 ms linger) while the attacker still holds it
                Await.until(() -> f.target.controllerCount() == 1, Duration.ofSeconds(10),
                        "the attacker's association ended by the node");
            }
        });
    }

    @Test
    void shouldFenceTheOldAssociationOnlyOnceTheNewAdminQueueAuthenticated() throws Exception {
        try (RawHost admin2 = f.host(0, 32)) {
            RawHost.Cqe connected = admin2.fabricConnect(31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(0, connected.status());
            int cntlid2 = connected.dw0() & 0xFFFF;
            // no sleep: the fence would run while the Connect is processed, so its response is the point after
            // which a premature fence shows (and the next Connect's answer below is a second one)
            assertFalse(f.target.controller(cntlid).isDestroyed(), "not fenced before the new queue authenticated");
            try (RawHost early = f.host(1, 8)) {
                TargetFixture.assertInvalidParameter(early.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN,
                        cntlid2), true, ConnectDataDescriptor.CNTLID_OFFSET);
            }
            assertAuthenticated(RawAuth.authenticate(admin2, TargetFixture.HOSTNQN, f.subnqn, secret, 0));
            TargetController old = f.target.controller(cntlid);
            assertTrue(old == null || old.isDestroyed(), "the old association is fenced once the new one authenticated");
            try (RawHost io2 = f.io(cntlid2, 1, 8)) {
                assertAuthenticated(RawAuth.authenticate(io2, TargetFixture.HOSTNQN, f.subnqn, secret, 1));
                assertEquals(0, io2.readBlocks(0, 2, 0).status());
            }
        }
    }

    @Test
    void shouldLetThePeerWithoutTheSecretHoldNeitherAQidNorATransactionIdTheHostNeeds() throws Exception {
        // the squatter knows NQN, HOSTID and cntlid: it connects qid 2 first and opens a transaction with T_ID 40
        try (RawHost squatter = f.io(cntlid, 2, 8)) {
            assertEquals(0, RawAuth.send(squatter, 10, RawAuth.negotiate(TargetFixture.HOSTNQN, f.subnqn, wrong, 40,
                    DhGroup.FFDHE2048)).status());
            assertEquals(0, RawAuth.receive(squatter, 11).status());
            assertEquals(DhchapMessages.ID_CHALLENGE, DhchapMessages.id(RawAuth.received(squatter)));
            try (RawHost host2 = f.io(cntlid, 2, 8)) {
                assertAuthenticated(RawAuth.authenticate(host2, TargetFixture.HOSTNQN, f.subnqn, secret, 40));
                assertEquals(0, host2.readBlocks(0, 2, 0).status(), "the host's qid 2 serves I/O");
                // the T_ID is the host's now: a transaction replaying it is refused even with the right secret
                try (RawHost q3 = f.io(cntlid, 3, 8)) {
                    DhchapHost d = new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, secret, null, 40, RawAuth.RANDOM);
                    byte[] last = RawAuth.transaction(q3, d);
                    assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(last), "replayed T_ID 40");
                    assertEquals(DhchapMessages.INCORRECT_PAYLOAD, last[7]);
                }
            }
        }
    }

    @Test
    void shouldRefuseAnIoConnectWithAnotherHostIdWithInvalidParameters() {
        try (RawHost h = f.host(2, 8)) {
            var c = h.connectCapsule(1, 7, 0, f.subnqn, TargetFixture.HOSTNQN, cntlid, 0);
            h.data().asSlice(ConnectDataDescriptor.HOSTID_OFFSET, 16).fill((byte) 7);
            TargetFixture.assertInvalidParameter(h.exec(c), true, ConnectDataDescriptor.HOSTID_OFFSET);
        }
    }

    @Test
    void shouldEndOnlyTheIoQueueOnAWrongSecretOrFailure2() throws Exception {
        victimReadsThrough(() -> {
            try (RawHost q2 = f.io(cntlid, 2, 8); RawHost q3 = f.io(cntlid, 3, 8)) {
                DhchapHost d = RawAuth.authenticate(q2, TargetFixture.HOSTNQN, f.subnqn, wrong, 22);
                assertEquals(DhchapHost.State.FAILED, d.state());
                assertEquals(0, RawAuth.send(q3, 10, RawAuth.failure2(33)).status());
                // the node ends both I/O queues (100 ms linger) while the host still holds them
                Await.until(() -> f.target.queuesOf(TargetFixture.HOSTNQN) == 2, Duration.ofSeconds(10),
                        "q2 and q3 ended by the node, the victim's admin and I/O queue left");
            }
        });
        try (RawHost q4 = f.io(cntlid, 4, 8)) { // the association still takes new I/O queues
            assertAuthenticated(RawAuth.authenticate(q4, TargetFixture.HOSTNQN, f.subnqn, secret, 4));
            assertEquals(0, q4.readBlocks(0, 2, 0).status());
        }
    }
}
