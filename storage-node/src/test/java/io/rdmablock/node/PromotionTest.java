package io.rdmablock.node;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.failover.AnaState;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The node side of a promotion through {@link MgmtSync} and {@link Replication} (docs/failover.md): the heartbeat
 * answer that makes this secondary the primary returns at once (activation runs on its own thread), the subsystem
 * stays a secondary while activating and becomes primary only after one full lease; the lease deadline follows each
 * heartbeat; a demotion during the activation cancels it.
 */
class PromotionTest {
    private static final long MIB = 1L << 20;
    private static final long LEASE_MS = 600;

    @TempDir
    Path dir;

    private static DesiredVolume volume(long epoch, CopyRole myRole) {
        List<DesiredCopy> copies = myRole == CopyRole.PRIMARY
                ? List.of(new DesiredCopy("n2", CopyRole.PRIMARY, CopyState.IN_SYNC, "", Node.hostnqnOf("n2")),
                        new DesiredCopy("n1", CopyRole.SECONDARY, CopyState.STALE, "", Node.hostnqnOf("n1")))
                : List.of(new DesiredCopy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, "", Node.hostnqnOf("n1")),
                        new DesiredCopy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, "", Node.hostnqnOf("n2")));
        return new DesiredVolume("v1", "data1", 8 * MIB, 4096, List.of(), Subsystem.nqnFor("data1"),
                VolumeState.READY, false, epoch, myRole, 1, copies, null, null, false);
    }

    private static HeartbeatResponse answer(DesiredVolume dv) {
        return HeartbeatResponse.of(false, List.of(dv), LEASE_MS);
    }

    private static void await(BooleanSupplier done, long boundMs, String what) {
        Await.until(done, Duration.ofMillis(boundMs), what);
    }

    private Replication replication() {
        return new Replication("n2", null, new MgmtClient(java.net.URI.create("http://127.0.0.1:9"), "t"), dir.resolve("replica"),
                200_000_000L);
    }

    @Test
    void shouldActivateOffTheAgentThreadAndServeOnlyAfterOneFullLease() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir.resolve("node"))).start();
             Replication replication = replication()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes, replication);
            sync.apply(answer(volume(1, CopyRole.SECONDARY)), System.nanoTime());
            Subsystem s = node.target().subsystemOfVolume("v1");
            assertEquals(Subsystem.Mode.SECONDARY, s.mode());
            assertEquals(Long.MAX_VALUE, s.leaseDeadlineNanos(), "no lease on a secondary");

            long learnt = System.nanoTime();
            sync.apply(answer(volume(2, CopyRole.PRIMARY)), learnt);
            long applied = System.nanoTime();
            assertTrue(applied - learnt < LEASE_MS * 1_000_000L / 2, "the agent thread does not wait out the lease: "
                    + (applied - learnt) / 1_000_000 + " ms");
            assertEquals(Subsystem.Mode.SECONDARY, s.mode(), "not serving while activating");
            assertTrue(replication.activating("v1"));
            assertEquals(2, node.store().epoch("v1"), "the new epoch is persisted first");
            assertEquals(learnt + (LEASE_MS - MgmtSync.LEASE_MARGIN_MS) * 1_000_000L, s.leaseDeadlineNanos(),
                    "lease deadline = send time + lease - margin");

            await(() -> s.mode() == Subsystem.Mode.PRIMARY, 10_000, "primary mode");
            long served = System.nanoTime();
            assertTrue(served - learnt >= LEASE_MS * 1_000_000L, "served after " + (served - learnt) / 1_000_000
                    + " ms, before one full lease");
            await(() -> !replication.activating("v1"), 5_000, "activation end");

            long next = System.nanoTime();
            sync.apply(answer(volume(2, CopyRole.PRIMARY)), next);
            assertEquals(Subsystem.Mode.PRIMARY, s.mode(), "no second activation");
            assertEquals(AnaState.OPTIMIZED, s.anaState());
            assertEquals(next + (LEASE_MS - MgmtSync.LEASE_MARGIN_MS) * 1_000_000L, s.leaseDeadlineNanos(),
                    "renewed by the next heartbeat");
        }
    }

    @Test
    void shouldCancelTheActivationWhenDemotedMeanwhile() throws Exception {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir.resolve("node"))).start();
             Replication replication = replication()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes, replication);
            sync.apply(answer(volume(1, CopyRole.SECONDARY)), System.nanoTime());
            Subsystem s = node.target().subsystemOfVolume("v1");
            sync.apply(answer(volume(2, CopyRole.PRIMARY)), System.nanoTime());
            assertTrue(replication.activating("v1"));
            sync.apply(answer(volume(3, CopyRole.SECONDARY)), System.nanoTime());
            assertFalse(replication.activating("v1"));
            // a sleep is right here: the test proves nothing serves once the whole lease has run out
            Thread.sleep(LEASE_MS + 300);
            assertEquals(Subsystem.Mode.SECONDARY, s.mode(), "a cancelled activation never serves");
            assertEquals(AnaState.INACCESSIBLE, s.anaState());
        }
    }

    @Test
    void shouldLogTheControllerIdRangeOfTheOrdinal() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir.resolve("node"))).start()) {
            MgmtSync sync = new MgmtSync(node.store(), node.target(), node::freeBytes);
            sync.registered(new Node("n2", "127.0.0.1:4420", "", 1, 1, null, null, 3));
            assertEquals(3, sync.ordinal());
            assertEquals(3072, Node.cntlidMin(3));
            assertEquals(4095, Node.cntlidMax(3));
            sync.registered(new Node("n2", "127.0.0.1:4420", "", 1, 1, null, null));
            assertEquals(3, sync.ordinal(), "an answer without an ordinal changes nothing");
        }
    }
}
