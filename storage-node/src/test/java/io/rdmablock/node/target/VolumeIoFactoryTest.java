package io.rdmablock.node.target;

import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.rdma.fabric.NvmeStatus;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The subsystem's {@link VolumeIo.Factory}: swappable, used from the next I/O queue Connect, with pollables. */
class VolumeIoFactoryTest extends TargetTestBase {

    /** A handle wrapping the local one that counts what it starts and how often its pollable ran. */
    static final class CountingIo extends ForwardingVolumeIo {
        final Poller poller;
        final AtomicInteger starts;
        final AtomicInteger polls;
        final Poller.Pollable pollable;

        CountingIo(VolumeIo.Context c, AtomicInteger starts, AtomicInteger polls, AtomicInteger opened) {
            super(c);
            this.poller = c.poller();
            this.starts = starts;
            this.polls = polls;
            this.pollable = nowNs -> {
                polls.incrementAndGet();
                return 0;
            };
            poller.addPollable(pollable);
            opened.incrementAndGet();
        }

        @Override
        public int start(Request r, long nowNs) {
            starts.incrementAndGet();
            return local.start(r, nowNs);
        }

        @Override
        public void close() {
            poller.removePollable(pollable);
            local.close();
        }
    }

    private static RawHost.Cqe write(RawHost io, int cid) {
        return io.writeBlocks(cid, 8, cid, 0);
    }

    @Test
    void shouldOpenTheSwappedFactoryAtTheNextConnectAndLeaveConnectedQueuesOnTheirHandle() {
        Subsystem s = f.target.subsystemOfVolume("vol1");
        AtomicInteger starts = new AtomicInteger();
        AtomicInteger polls = new AtomicInteger();
        AtomicInteger opened = new AtomicInteger();
        try (RawHost admin = f.admin(0); RawHost before = f.io(TargetFixture.cntlid(admin), 1, 8)) {
            s.setVolumeIoFactory(c -> new CountingIo(c, starts, polls, opened));
            RawHost.Cqe c1 = write(before, 1);
            assertEquals(0, c1.status(), NvmeStatus.describe(c1.status()));
            assertEquals(0, starts.get(), "a queue connected before the swap keeps its local handle");
            try (RawHost after = f.io(TargetFixture.cntlid(admin), 2, 8)) {
                assertEquals(1, opened.get(), "the Connect after the swap opened the new factory's handle");
                RawHost.Cqe c2 = write(after, 2);
                assertEquals(0, c2.status(), NvmeStatus.describe(c2.status()));
                assertEquals(1, starts.get(), "the WRITE went through the new handle");
                assertTrue(polls.get() > 0, "the handle's pollable is polled by the queue's poller");
            }
        }
    }
}
