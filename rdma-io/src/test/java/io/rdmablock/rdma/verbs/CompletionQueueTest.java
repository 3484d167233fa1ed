package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Completion queues: shared by many queue pairs, polling without blocking, waiting with timeout, overrun. */
class CompletionQueueTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";
    private static final int RW = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReturnZeroFromAwaitOnTimeoutAndFromPollWhenEmpty(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            CmId id = p.createId();
            id.resolve(new InetSocketAddress(VerbsTestSupport.address(), 9), VerbsTestSupport.TIMEOUT_NS);
            CompletionQueue cq = id.device().createCq(16);
            WorkCompletion[] wcs = WorkCompletion.array(4);
            assertEquals(0, cq.poll(wcs, 4));
            long t0 = System.nanoTime();
            assertEquals(0, cq.await(wcs, 4, TimeUnit.MILLISECONDS.toNanos(50)));
            assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(40), "await waited");
            CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(
                    () -> cq.await(wcs, 4, TimeUnit.SECONDS.toNanos(10)));
            long t1 = System.nanoTime();
            while (!waiting.isDone() && System.nanoTime() - t1 < TimeUnit.SECONDS.toNanos(5)) {
                cq.wakeup();
                Thread.onSpinWait();
            }
            assertEquals(0, waiting.join());
            assertTrue(System.nanoTime() - t1 < TimeUnit.SECONDS.toNanos(5), "wakeup released await");
            cq.close();
            id.close();
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldShareOneCqAcrossManyQueuePairs(String provider) throws Exception {
        int qps = 16;
        int perQp = 20;
        try (VerbsProvider p = Providers.select(provider);
             CmListener listener = p.listen(new InetSocketAddress(VerbsTestSupport.address(), 0), 32);
             Arena arena = Arena.ofShared()) {
            CmId first = p.createId();
            first.resolve(new InetSocketAddress(VerbsTestSupport.address(), listener.localAddress().getPort()),
                    VerbsTestSupport.TIMEOUT_NS);
            DeviceContext dev = first.device();
            ProtectionDomain pd = dev.allocPd();
            CompletionQueue clientCq = dev.createCq(qps * perQp + 16);
            CompletionQueue serverCq = dev.createCq(qps * perQp + 16);
            MemoryRegion src = pd.registerMemory(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            MemoryRegion dst = pd.registerMemory(arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            List<CmId> ids = new ArrayList<>();
            Map<Integer, Integer> serverQpIndex = new HashMap<>();
            try {
                List<QueuePair> clientQps = new ArrayList<>();
                for (int q = 0; q < qps; q++) {
                    CmId cid = q == 0 ? first : p.createId();
                    if (q > 0) {
                        cid.resolve(new InetSocketAddress(VerbsTestSupport.address(),
                                listener.localAddress().getPort()), VerbsTestSupport.TIMEOUT_NS);
                    }
                    ids.add(cid);
                    QpInitAttr ca = new QpInitAttr().pd(pd).cq(clientCq);
                    ca.maxSendWr = perQp;
                    clientQps.add(cid.createQp(ca));
                    CompletableFuture<Void> f = CompletableFuture.runAsync(
                            () -> cid.connect(new byte[] {(byte) 0}, VerbsTestSupport.TIMEOUT_NS));
                    CmId sid = listener.getRequest(VerbsTestSupport.TIMEOUT_NS);
                    ids.add(sid);
                    QpInitAttr sa = new QpInitAttr().pd(pd).cq(serverCq);
                    sa.maxRecvWr = perQp;
                    QueuePair sqp = sid.createQp(sa);
                    serverQpIndex.put(sqp.qpNum(), q);
                    for (int i = 0; i < perQp; i++) {
                        sqp.postRecv(recv(q * 1000L + i, dst, 0, 64));
                    }
                    sid.accept(null, VerbsTestSupport.TIMEOUT_NS);
                    f.get(10, TimeUnit.SECONDS);
                }
                for (int i = 0; i < perQp; i++) {
                    for (int q = 0; q < qps; q++) {
                        clientQps.get(q).postSend(send(q * 1000L + i, WrOpcode.SEND, src, 0, 32));
                    }
                }
                int[] nextPerQp = new int[qps];
                int got = 0;
                WorkCompletion[] wcs = WorkCompletion.array(32);
                long deadline = System.nanoTime() + VerbsTestSupport.TIMEOUT_NS;
                while (got < qps * perQp && System.nanoTime() < deadline) {
                    int n = serverCq.await(wcs, 32, TimeUnit.MILLISECONDS.toNanos(100));
                    for (int k = 0; k < n; k++) {
                        WorkCompletion wc = wcs[k];
                        assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                        int q = serverQpIndex.get(wc.qpNum);
                        assertEquals(q * 1000L + nextPerQp[q], wc.wrId, "per-QP order on a shared CQ");
                        nextPerQp[q]++;
                    }
                    got += n;
                }
                assertEquals(qps * perQp, got, "all receives completed on the shared CQ");
                int sendsDone = 0;
                while (sendsDone < qps * perQp && System.nanoTime() < deadline) {
                    sendsDone += clientCq.await(wcs, 32, TimeUnit.MILLISECONDS.toNanos(100));
                }
                assertEquals(qps * perQp, sendsDone);
            } finally {
                for (CmId id : ids) {
                    id.close();
                }
                src.close();
                dst.close();
                clientCq.close();
                serverCq.close();
                pd.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReportOverrunAndMoveAttachedQpsToError(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxSendWr = 64, a -> { }, 8, s -> { })) {
            MemoryRegion local = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(4096, RW);
            int capacity = c.client.cq.capacity();
            for (int i = 0; i < capacity + 8; i++) {
                c.client.qp.postSend(rdma(i, WrOpcode.RDMA_WRITE, local, 0, 64, remote, 0));
            }
            WorkCompletion[] wcs = WorkCompletion.array(1);
            long deadline = System.nanoTime() + VerbsTestSupport.TIMEOUT_NS;
            CompletionQueue.CqOverrunException overrun = null;
            while (overrun == null && System.nanoTime() < deadline) {
                try {
                    c.client.cq.await(wcs, 0, TimeUnit.MILLISECONDS.toNanos(10));
                } catch (CompletionQueue.CqOverrunException e) {
                    overrun = e;
                }
            }
            assertTrue(overrun != null, "CqOverrunException within the timeout");
            assertThrows(CompletionQueue.CqOverrunException.class, () -> c.client.cq.poll(wcs, 1));
            long t0 = System.nanoTime();
            while (c.client.qp.state() != QpState.ERROR && System.nanoTime() - t0 < VerbsTestSupport.TIMEOUT_NS) {
                Thread.onSpinWait();
            }
            assertEquals(QpState.ERROR, c.client.qp.state(), "attached QP moved to ERROR");
        }
    }
}
