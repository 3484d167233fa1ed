package io.rdmablock.node.target;

import io.rdmablock.node.NodeConfiguration;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A poller whose only outstanding work is store I/O waits on the store's completion ({@link io.rdmablock.node.target.VolumeIo#awaitStore}),
 * not for the end of a fixed park: with no idle spin and an idle wait of 100 ms, QD1 reads on an I/O queue alone on
 * its poller complete in far less than one idle wait each. Without the store wait every read that is not complete
 * in the round that submitted it costs a whole 100 ms park.
 */
class PollerStoreWaitTest {
    private static final long IDLE_WAIT_NS = 100_000_000L;
    private static final int READS = 20;

    @TempDir
    Path dir;
    private TargetFixture f;
    private RawHost admin;
    private RawHost io;

    @AfterEach
    void close() {
        TargetFixture.close(io, admin);
        if (f != null) {
            f.close();
        }
    }

    @Test
    void shouldWakeOnTheStoreCompletionNotAtTheEndOfTheIdleWait() {
        // 2 pollers: the admin queue on one, the I/O queue alone on the other; no spin, 100 ms idle wait
        TargetOptions o = new TargetOptions(128, 32, 8192, 128 * 1024, 64, 2, 0, IDLE_WAIT_NS, 1000,
                5_000_000_000L);
        f = new TargetFixture(dir, o, 64L << 20, 512, Set.of("*"));
        admin = f.admin(0);
        io = f.io(TargetFixture.cntlid(admin), 1, 32);
        int blocks = 8; // 4 KiB
        assertEquals(0, io.exec(io.rw(0, Opcodes.IO_WRITE, 1, 0, blocks * 16, false, 0, blocks * 16 * 512)).status());
        long worstNs = 0;
        long start = System.nanoTime();
        for (int i = 0; i < READS; i++) {
            long t0 = System.nanoTime();
            RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_READ, 2 + i, (long) (i % 16) * blocks, blocks, false, 0,
                    blocks * 512));
            worstNs = Math.max(worstNs, System.nanoTime() - t0);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        }
        long totalNs = System.nanoTime() - start;
        System.out.println("PollerStoreWaitTest: " + READS + " QD1 reads in " + totalNs / 1000 + " us, worst " + worstNs / 1000 + " us");
        // a park per read would take READS x 100 ms = 2 s; waking on the store takes the store's time (~0.1 ms)
        assertTrue(totalNs < READS * IDLE_WAIT_NS / 4, "20 QD1 reads took " + totalNs / 1_000_000
                + " ms (worst " + worstNs / 1_000_000 + " ms): the poller waited out its idle wait instead of the store");
    }

    @Test
    void shouldRejectAStoreWaitMinimumBelowOneNamingTheProperty() {
        assertEquals(1, TargetTuning.DEFAULTS.withStoreWaitMin(1).storeWaitMin());
        assertEquals(8, TargetTuning.DEFAULTS.storeWaitMin());
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> NodeConfiguration.from(java.util.Map.of("rdmablock.node.storeWaitMin", "0")::get));
        assertEquals("invalid rdmablock.node.storeWaitMin: value=0, min=1, max=2147483647", e.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> TargetTuning.DEFAULTS.withStoreWaitMin(0));
    }
}
