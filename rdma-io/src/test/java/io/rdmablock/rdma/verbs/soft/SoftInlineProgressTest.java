package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Who runs a soft queue pair's engine ({@link QpEngine}, "Who runs it"): the thread that posts and polls, not the
 * engine's own thread, while it keeps polling; and the engine's thread when the application never polls (a responder
 * serves RDMA WRITE and READ whether or not its application polls).
 */
class SoftInlineProgressTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);
    private static final int OPS = 2_000;

    @Test
    void shouldRunTheRequesterOnThePollingThreadAndTheUnpolledResponderOnItsOwn() throws Exception {
        try (SoftVerbsProvider p = new SoftVerbsProvider();
             CmListener l = p.listen(new InetSocketAddress("127.0.0.1", 0), 4);
             Arena arena = Arena.ofShared()) {
            CmId c = p.createId();
            c.resolve(new InetSocketAddress("127.0.0.1", l.localAddress().getPort()), T);
            ProtectionDomain pd = c.device().allocPd();
            int rw = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
            MemoryRegion local = pd.registerMemory(arena.allocate(65536, 4096), rw);
            MemoryRegion remote = pd.registerMemory(arena.allocate(65536, 4096), rw);
            CompletionQueue ccq = c.device().createCq(64);
            CompletionQueue scq = c.device().createCq(64); // never polled
            QueuePair cqp = c.createQp(new QpInitAttr().pd(pd).cq(ccq));
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> c.connect(null, T));
            CmId s = l.getRequest(T);
            QueuePair sqp = s.createQp(new QpInitAttr().pd(pd).cq(scq));
            s.accept(null, T);
            f.get(10, TimeUnit.SECONDS);
            QpEngine requester = ((SoftQp) cqp).engine;
            QpEngine responder = ((SoftQp) sqp).engine;

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
                cqp.postSend(w);
                int n = 0;
                while (n == 0) {
                    assertTrue(System.nanoTime() < deadline, "op " + i + " did not complete in time");
                    n = ccq.await(wcs, 1, TimeUnit.MILLISECONDS.toNanos(10));
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
            assertEquals(0, scq.poll(wcs, 4), "one-sided operations complete nothing at the responder");
            c.close();
            s.close();
        }
    }
}
