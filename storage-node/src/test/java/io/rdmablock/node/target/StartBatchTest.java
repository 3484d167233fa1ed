package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-queue budget of command starts per polling round ({@link FabricQueue#START_BATCH}, docs/qos.md "Fairness
 * without limits"): a queue with far more capsules waiting than the budget starts at most the budget in one round
 * (the volume I/O sees the round's clock, so starts with the same clock are one round's), the rest in later rounds,
 * and every command is answered, with success.
 */
class StartBatchTest extends TargetTestBase {
    private static final int DEPTH = 64;

    @Test
    void aDeepQueueStartsAtMostTheBudgetPerRoundAndAnswersEveryCommand() {
        AtomicInteger maxPerRound = new AtomicInteger();
        AtomicInteger started = new AtomicInteger();
        Subsystem s = f.target.subsystemOfVolume("vol1");
        s.setVolumeIoFactory(c -> new ForwardingVolumeIo(c) {
            private long roundNs = Long.MIN_VALUE;
            private int inRound;

            @Override
            public int start(Request r, long nowNs) {
                if (started.getAndIncrement() == 0) {
                    // the first command holds the poller: every other capsule is in the CQ at its next round
                    sleepMs(100);
                }
                if (nowNs != roundNs) {
                    roundNs = nowNs;
                    inRound = 0;
                }
                maxPerRound.accumulateAndGet(++inRound, Math::max);
                return super.start(r, nowNs);
            }
        });
        admin = f.connect(0, 32, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
        io = f.connect(1, DEPTH + 1, f.subnqn, TargetFixture.HOSTNQN, TargetFixture.cntlid(admin), 0);
        for (int i = 0; i < DEPTH; i++) {
            io.rw(i, Opcodes.IO_READ, i + 1, 8L * i, 8, false, 4096L * i, 4096);
            io.post(i, SqeDescriptor.LENGTH);
        }
        boolean[] answered = new boolean[DEPTH + 1];
        for (int i = 0; i < DEPTH; i++) {
            RawHost.Cqe c = io.await(10_000 * MS);
            assertNotNull(c, "answer " + i + " of " + DEPTH);
            assertEquals(0, c.status(), "cid " + c.cid() + ": " + NvmeStatus.describe(c.status()));
            assertTrue(c.cid() >= 1 && c.cid() <= DEPTH && !answered[c.cid()], "cid " + c.cid() + " answered once");
            answered[c.cid()] = true;
        }
        assertEquals(DEPTH, started.get(), "commands started");
        assertTrue(maxPerRound.get() <= FabricQueue.START_BATCH, "most commands started in one round: "
                + maxPerRound.get() + ", budget " + FabricQueue.START_BATCH);
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
