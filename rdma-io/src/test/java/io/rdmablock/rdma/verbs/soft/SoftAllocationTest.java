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
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The soft provider's post and poll paths and its engines (run on the posting / polling thread or their own)
 * allocate nothing of their own per operation once warm (the JDK's vectored socket I/O on registered memory
 * allocates a few dozen bytes per call):
 * measured with {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}.
 */
class SoftAllocationTest {
    private static final long T = TimeUnit.SECONDS.toNanos(10);
    private static final int OPS = 20_000;

    @Test
    void shouldNotAllocatePerOperationOnPostPollOrEngineThreads() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (SoftVerbsProvider p = new SoftVerbsProvider();
             CmListener l = p.listen(new InetSocketAddress("127.0.0.1", 0), 4);
             Arena arena = Arena.ofShared()) {
            CmId c = p.createId();
            c.resolve(new InetSocketAddress("127.0.0.1", l.localAddress().getPort()), T);
            ProtectionDomain pd = c.device().allocPd();
            int rw = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
            MemoryRegion local = pd.registerMemory(arena.allocate(65536, 4096), rw);
            MemoryRegion remote = pd.registerMemory(arena.allocate(65536, 4096), rw);
            CompletionQueue ccq = c.device().createCq(256);
            CompletionQueue scq = c.device().createCq(256);
            QpInitAttr ca = new QpInitAttr().pd(pd).cq(ccq);
            ca.maxSendWr = 16;
            QueuePair cqp = c.createQp(ca);
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> c.connect(null, T));
            CmId s = l.getRequest(T);
            QpInitAttr sa = new QpInitAttr().pd(pd).cq(scq);
            sa.maxRecvWr = 64;
            QueuePair sqp = s.createQp(sa);
            s.accept(null, T);
            f.get(10, TimeUnit.SECONDS);

            SendWr w = new SendWr();
            RecvWr r = new RecvWr();
            WorkCompletion[] wcs = WorkCompletion.array(16);
            WrOpcode[] ops = {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ, WrOpcode.SEND};
            run(cqp, sqp, ccq, scq, local, remote, w, r, wcs, ops, OPS / 4); // warm up (JIT, view caches)
            long[] engines = engineThreadIds();
            long engineBefore = sum(mx, engines);
            long appBefore = mx.getThreadAllocatedBytes(Thread.currentThread().threadId());
            run(cqp, sqp, ccq, scq, local, remote, w, r, wcs, ops, OPS);
            long app = mx.getThreadAllocatedBytes(Thread.currentThread().threadId()) - appBefore;
            long engine = sum(mx, engines) - engineBefore;
            assertEquals(2, engines.length, "two engine threads");
            // The engines now mostly run on the posting / polling thread (QpEngine: caller-driven steps), so the
            // socket I/O is counted there or on the engine threads, whichever ran it: the sum is bounded per
            // operation. What remains is inside the JDK: a vectored read/write on a segment-backed ByteBuffer
            // (registered memory) allocates a 16-byte Releaser and a 24-byte LinkedRunnable per buffer per call
            // (sun.nio.ch.IOUtil, JDK 25); the provider's own buffers are session-less and cost nothing.
            long total = app + engine;
            assertTrue(total / OPS < 100, "post/poll and engines allocated " + total + " bytes (post/poll thread "
                    + app + ", engine threads " + engine + ") for " + OPS + " operations");
            c.close();
            s.close();
        }
    }

    private static void run(QueuePair cqp, QueuePair sqp, CompletionQueue ccq, CompletionQueue scq,
                            MemoryRegion local, MemoryRegion remote, SendWr w, RecvWr r, WorkCompletion[] wcs,
                            WrOpcode[] ops, int count) {
        int outstanding = 0;
        int recvsOut = 0;
        long deadline = System.nanoTime() + T;
        for (int i = 0; i < count || outstanding > 0; ) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            while (recvsOut < 32) {
                r.wrId = 0;
                r.numSge = 1;
                r.sgList[0].set(remote, 0, 4096);
                sqp.postRecv(r);
                recvsOut++;
            }
            if (i < count && outstanding < 8) {
                w.wrId = i;
                w.opcode = ops[i % ops.length];
                w.sendFlags = SendWr.SIGNALED;
                w.numSge = 1;
                w.sgList[0].set(local, 0, 512);
                w.remoteAddr = remote.address() + 8192;
                w.rkey = remote.rkey();
                cqp.postSend(w);
                outstanding++;
                i++;
                continue;
            }
            int n = ccq.await(wcs, wcs.length, TimeUnit.MILLISECONDS.toNanos(1));
            for (int k = 0; k < n; k++) {
                if (wcs[k].status != WcStatus.SUCCESS) {
                    throw new AssertionError(wcs[k].toString());
                }
            }
            outstanding -= n;
            recvsOut -= scq.poll(wcs, wcs.length);
        }
    }

    private static long[] engineThreadIds() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("soft-qp-"))
                .mapToLong(Thread::threadId).toArray();
    }

    private static long sum(com.sun.management.ThreadMXBean mx, long[] ids) {
        long s = 0;
        for (long id : ids) {
            s += mx.getThreadAllocatedBytes(id);
        }
        return s;
    }
}
