package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Who runs a soft queue pair's engine ({@link QpDriver}): the thread that posts and polls, not the engine's own
 * thread, while it keeps polling; and the engine's thread when the application never polls (a responder serves RDMA
 * WRITE and READ whether or not its application polls).
 */
class SoftInlineProgressTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);
    private static final int OPS = 2_000;

    @Test
    void shouldRunTheRequesterOnThePollingThreadAndTheUnpolledResponderOnItsOwn() {
        try (Connection c = Connection.open("soft")) {
            int rw = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
            MemoryRegion local = c.client.register(65536, rw);
            MemoryRegion remote = c.server.register(65536, rw); // the server's CQ is never polled
            QpEngine requester = ((SoftQp) c.client.qp).engine;
            QpEngine responder = ((SoftQp) c.server.qp).engine;

            SendWr w = new SendWr();
            WorkCompletion[] wcs = WorkCompletion.array(4);
            long reqBefore = requester.threadSteps();
            long respBefore = responder.threadSteps();
            long deadline = System.nanoTime() + 4 * T;
            for (int i = 0; i < OPS; i++) {
                boolean read = (i & 1) == 1;
                local.segment().set(ValueLayout.JAVA_INT, 0, i);
                w.wrId = i;
                w.opcode = read ? WrOpcode.RDMA_READ : WrOpcode.RDMA_WRITE;
                w.sendFlags = SendWr.SIGNALED;
                w.numSge = 1;
                w.sgList[0].set(local, read ? 4096 : 0, 512);
                w.remoteAddr = remote.address();
                w.rkey = remote.rkey();
                c.client.qp.postSend(w);
                int n = 0;
                while (n == 0) {
                    assertTrue(System.nanoTime() < deadline, "op " + i + " did not complete in time");
                    n = c.client.cq.await(wcs, 1, TimeUnit.MILLISECONDS.toNanos(10));
                }
                assertEquals(WcStatus.SUCCESS, wcs[0].status, wcs[0].toString());
                assertEquals(i, wcs[0].wrId);
                if (read) { // what the previous WRITE placed, fetched back: the responder served both
                    assertEquals(i - 1, local.segment().get(ValueLayout.JAVA_INT, 4096), "op " + i);
                }
            }
            long reqThread = requester.threadSteps() - reqBefore;
            long respThread = responder.threadSteps() - respBefore;
            System.out.printf("soft inline progress: %d ops, requester engine-thread steps %d, unpolled responder "
                    + "engine-thread steps %d%n", OPS, reqThread, respThread);
            // with an engine thread per queue pair doing everything, the requester's thread stepped at least once per
            // op (send, then the completion); here it steps only when the test thread was off the CPU for longer than
            // the grace (1 ms), which a loaded machine does now and then: ~10% quiet, ~40% with a build beside it
            assertTrue(reqThread < OPS, "the requester's own thread ran " + reqThread + " steps for " + OPS
                    + " ops: the polling thread should have run most of them");
            assertTrue(respThread >= OPS / 2, "the unpolled responder's engine thread ran only " + respThread
                    + " steps for " + OPS + " served requests");
            assertEquals(0, c.server.cq.poll(wcs, 4), "one-sided operations complete nothing at the responder");
        }
    }
}
