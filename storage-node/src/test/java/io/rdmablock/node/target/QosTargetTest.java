package io.rdmablock.node.target;

import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-volume limits on a running target (docs/qos.md): a host's commands over the volume's budget are held in their
 * queue and answered once the budget allows, with success, never with an error; a live change applies to the held
 * ones.
 */
class QosTargetTest extends TargetTestBase {
    private static final int DEPTH = 16;

    /** Posts {@code n} 4 KiB READs (cids 1..n) at once on {@code host}. */
    private static void postReads(RawHost host, int n) {
        for (int i = 0; i < n; i++) {
            host.rw(i, Opcodes.IO_READ, i + 1, 8L * i, 8, false, 4096L * i, 4096);
            host.post(i, SqeDescriptor.LENGTH);
        }
    }

    @Test
    void overLimitCommandsAreHeldNotFailedAndAllComplete() {
        Subsystem s = f.target.subsystemOfVolume("vol1");
        s.qos().apply(VolumeQos.ofIops(100), s.volume().sizeBytes()); // 1 per 10 ms, 5 in the bucket
        connectDeep();
        long start = System.nanoTime();
        postReads(io, DEPTH);
        int maxHeld = 0;
        for (int i = 0; i < DEPTH; i++) {
            RawHost.Cqe c = io.await(10_000 * MS);
            assertNotNull(c, "answer " + i + " of " + DEPTH);
            assertEquals(0, c.status(), "cid " + c.cid() + ": " + NvmeStatus.describe(c.status()));
            maxHeld = Math.max(maxHeld, s.qos().heldCommands());
        }
        long tookMs = (System.nanoTime() - start) / MS;
        assertTrue(maxHeld > 0, "commands were held");
        // the limit bounds from below: 11 held commands at 100 IOPS cannot all be answered in under ~100 ms
        assertTrue(tookMs >= 80, "16 READs at 100 IOPS took " + tookMs + " ms");
        assertEquals(0, s.qos().heldCommands());
        assertTrue(s.qos().delayedSeconds() > 0.1, "delayed " + s.qos().delayedSeconds() + " s");
    }

    @Test
    void liftingTheLimitReleasesTheHeldCommands() {
        Subsystem s = f.target.subsystemOfVolume("vol1");
        s.qos().apply(VolumeQos.ofIops(1), s.volume().sizeBytes()); // 1 per second: the rest wait
        connectDeep();
        postReads(io, DEPTH);
        RawHost.Cqe first = io.await(10_000 * MS);
        assertNotNull(first);
        assertEquals(0, first.status());
        long deadline = System.nanoTime() + 10_000 * MS;
        while (s.qos().heldCommands() < DEPTH - 2 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(s.qos().heldCommands() >= DEPTH - 2, "held: " + s.qos().heldCommands());
        s.qos().apply(VolumeQos.ofIops(1_000_000), s.volume().sizeBytes()); // a live change
        for (int i = 1; i < DEPTH; i++) {
            RawHost.Cqe c = io.await(10_000 * MS);
            assertNotNull(c, "answer " + i);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        }
        assertEquals(0, s.qos().heldCommands());
    }

    @Test
    void aSecondaryAppliesNothingAndThePromotedCopyEnforcesTheSameLimits() {
        Subsystem s = f.target.subsystemOfVolume("vol1");
        VolumeIo.Factory local = s.volumeIoFactory();
        s.qos().apply(VolumeQos.ofIops(100), s.volume().sizeBytes()); // every copy gets the limits
        s.secondaryOf(SecondaryModeTest.PRIMARY);
        admin = f.connect(0, 32, f.subnqn, SecondaryModeTest.PRIMARY, 0xFFFF, 0);
        io = f.connect(1, DEPTH + 1, f.subnqn, SecondaryModeTest.PRIMARY, TargetFixture.cntlid(admin), 0);
        for (int round = 0; round < 3; round++) { // 48 READs: far over 100 IOPS's bucket of 5
            postReads(io, DEPTH);
            for (int i = 0; i < DEPTH; i++) {
                RawHost.Cqe c = io.await(10_000 * MS);
                assertNotNull(c);
                assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            }
        }
        assertEquals(0, s.qos().delayedSeconds(), "the primary's forwarded I/O is not held on a secondary");
        disconnect();
        s.primary(local); // promoted: its queues open behind the same limiter
        connectDeep();
        postReads(io, DEPTH);
        int maxHeld = 0;
        for (int i = 0; i < DEPTH; i++) {
            RawHost.Cqe c = io.await(10_000 * MS);
            assertNotNull(c);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            maxHeld = Math.max(maxHeld, s.qos().heldCommands());
        }
        assertTrue(maxHeld > 0 && s.qos().delayedSeconds() > 0, "held on the promoted copy: " + s.qos());
    }

    private void connectDeep() {
        admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
        io = f.connect(1, DEPTH + 1, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin), 0);
    }
}
