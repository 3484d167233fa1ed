package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The secondary's side of the peer lease (docs/failover.md, "Peer lease"; {@link Opcodes#ADMIN_PEER_LEASE}): what it
 * grants on the wire, what it refuses, that every grant end is recorded before the checks, and how the primary's two
 * leases combine into the one the I/O gate reads.
 */
class PeerLeaseGrantTest extends TargetTestBase {
    static final String PRIMARY = "nqn.2026-11.io.rdmablock:node:primary-1";
    static final long SEC = TimeUnit.SECONDS.toNanos(1);

    Subsystem s;
    final List<RawHost> hosts = new ArrayList<>();

    @BeforeEach
    void setUp() {
        s = f.target.subsystemOfVolume("vol1");
    }

    @AfterEach
    void tearDown() {
        TargetFixture.close(hosts.toArray(RawHost[]::new));
    }

    private RawHost admin(String hostnqn) {
        RawHost h = f.connect(0, 32, f.subnqn, hostnqn, 0xFFFF, 0);
        hosts.add(h);
        return h;
    }

    private static RawHost.Cqe lease(RawHost h, int cid, long epoch, long ms) {
        MemorySegment c = h.nullSglCommand(0, Opcodes.ADMIN_PEER_LEASE, cid, 1);
        SqeDescriptor.cdw(c, 10, (int) epoch);
        SqeDescriptor.cdw(c, 11, (int) (epoch >>> 32));
        SqeDescriptor.cdw(c, 12, (int) ms);
        return h.exec(c);
    }

    @Test
    void anInSyncSecondaryGrantsItsPrimaryOnTheWireAndRecordsTheEnd() {
        f.store.raiseEpoch("vol1", 3);
        s.secondaryOf(PRIMARY);
        s.grantLimit(System.nanoTime() + 60 * SEC);
        RawHost h = admin(PRIMARY);
        long before = System.nanoTime();
        RawHost.Cqe c = lease(h, 10, 3, 2_000);
        assertEquals(0, c.status(), () -> NvmeStatus.name(c.status()));
        assertTrue(c.dw0() > 1_900 && c.dw0() <= 2_000, () -> "granted ms: " + c.dw0());
        assertTrue(s.grantedUntilNanos() - (before + 2 * SEC) >= 0, "the grant's end is recorded");
        // a higher epoch than the accepted one is a newer primary: granted too
        assertTrue(lease(h, 11, 4, 2_000).dw0() > 0);
    }

    @Test
    void refusesAnOlderEpochAndRecordsTheAttemptAnyway() {
        f.store.raiseEpoch("vol1", 5);
        s.secondaryOf(PRIMARY);
        s.grantLimit(System.nanoTime() + 60 * SEC);
        RawHost h = admin(PRIMARY);
        long before = System.nanoTime();
        RawHost.Cqe c = lease(h, 10, 4, 2_000);
        assertEquals(0, c.status());
        assertEquals(0, c.dw0(), "epoch 4 < accepted 5: refused (0 ms)");
        // recorded before the check: a promotion reading the record after its raise covers every grant that passed
        assertTrue(s.grantedUntilNanos() - (before + 2 * SEC) >= 0);
    }

    @Test
    void grantsNothingWithoutALimitOrOutsideTheSecondaryRole() {
        f.store.raiseEpoch("vol1", 2);
        s.secondaryOf(PRIMARY);
        RawHost h = admin(PRIMARY);
        assertEquals(0, lease(h, 10, 2, 2_000).dw0(), "no grant limit (not in sync, or an older server)");
        long now = System.nanoTime();
        s.grantLimit(now + SEC / 2);
        RawHost.Cqe capped = lease(h, 11, 2, 2_000);
        assertTrue(capped.dw0() > 0 && capped.dw0() <= 500, () -> "capped by the limit: " + capped.dw0());
        s.grantLimit(Subsystem.NO_GRANTS);
        assertEquals(0, lease(h, 12, 2, 2_000).dw0());
        s.grantLimit(System.nanoTime() + 60 * SEC);
        s.plain();
        assertEquals(0, s.grantLease(2, 2 * SEC, System.nanoTime()), "a plain copy grants nothing");
    }

    @Test
    void refusesHostsThatAreNotNodesAndBadLengths() {
        f.store.raiseEpoch("vol1", 1);
        s.secondaryOf(PRIMARY);
        s.grantLimit(System.nanoTime() + 60 * SEC);
        RawHost host = admin(TargetFixture.HOSTNQN);
        int invalidOpcode = NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE);
        assertEquals(invalidOpcode & 0x7FF, lease(host, 10, 1, 2_000).status() & 0x7FF,
                "a host that is not a cluster node");
        RawHost node = admin(PRIMARY);
        int invalidField = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
        assertEquals(invalidField & 0x7FF, lease(node, 11, 1, 0).status() & 0x7FF);
        assertEquals(invalidField & 0x7FF, lease(node, 12, 1, 60_001).status() & 0x7FF);
    }

    @Test
    void thePrimaryServesUntilTheLaterOfItsTwoLeases() {
        long now = System.nanoTime();
        assertEquals(Long.MAX_VALUE, s.leaseDeadlineNanos(), "no lease: a single copy");
        s.peerLeaseDeadline(now + 5 * SEC);
        assertEquals(Long.MAX_VALUE, s.leaseDeadlineNanos(), "a peer lease does not bound a copy without a lease");
        s.leaseDeadline(now + SEC);
        assertEquals(now + 5 * SEC, s.leaseDeadlineNanos());
        s.peerLeaseDeadline(Subsystem.NO_PEER_LEASE);
        assertEquals(now + SEC, s.leaseDeadlineNanos());
        s.peerLeaseDeadline(now - SEC);
        assertEquals(now + SEC, s.leaseDeadlineNanos(), "a lapsed peer lease does not shorten the other");
        s.leaseDeadline(now - 2 * SEC);
        assertTrue(s.leaseLapsed(now), "both lapsed");
    }
}
