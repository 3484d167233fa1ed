package io.rdmablock.node.target;

import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A poller whose loop fails on an unexpected exception (here one thrown by a {@link Poller.Pollable} that a volume
 * I/O factory registered, as a replicated volume's peer queues are) tears down its queues and is never fed again:
 * before the fix the acceptor kept handing it new queues, which were never polled, so every other connection
 * round robin to it hung until the host gave up. Expected: the failed poller is replaced at the next hand-off and
 * every later Connect succeeds.
 */
class PollerReplacementTest extends TargetTestBase {
    @Test
    @Timeout(60)
    void shouldReplaceAFailedPollerAndNeverHandItAQueue() throws Exception {
        Subsystem s = f.target.subsystemOfVolume("vol1");
        AtomicBoolean armed = new AtomicBoolean(true);
        s.setVolumeIoFactory(c -> {
            if (armed.getAndSet(false)) {
                c.poller().addPollable(nowNs -> {
                    throw new IllegalStateException("injected poller fault");
                });
            }
            return LocalVolumeIo.open(c);
        });
        admin = f.admin(0);
        int cntlid = TargetFixture.cntlid(admin);
        try {
            io = f.io(cntlid, 1, 8); // its poller fails on the next round
        } catch (AssertionError | RuntimeException e) {
            // the poller may fail before this Connect's response went out: the queue is torn down with it
        }
        int failed = Await.value(() -> {
            int dead = -1;
            for (int i = 0; i < f.target.pollers().size(); i++) {
                if (f.target.pollers().get(i).isDead()) {
                    dead = i;
                }
            }
            return dead;
        }, i -> i >= 0, Duration.ofSeconds(5), "the injected fault ended a poller's loop");
        Poller dead = f.target.pollers().get(failed);
        disconnect();
        // every slot gets queues round robin: 2 x pollers Connects reach the failed slot at least twice
        for (int i = 0; i < 2 * f.target.pollers().size(); i++) {
            long t0 = System.nanoTime();
            try (RawHost a = f.admin(0); RawHost q = f.io(TargetFixture.cntlid(a), 1, 8)) {
                RawHost.Cqe read = q.readBlocks(0, 3, 0);
                assertEquals(0, read.status(), NvmeStatus.describe(read.status()));
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 5_000, "association " + i + " took " + ms + " ms");
        }
        assertNotSame(dead, f.target.pollers().get(failed), "the failed poller was replaced");
        assertTrue(dead.isDead());
    }
}
