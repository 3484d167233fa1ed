package io.rdmablock.rdma.verbs.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What the conformance suite does not pin down for {@code memory}: no thread hop, closed regions refused. */
class MemProviderTest {
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    /** A connected pair: client [0] and server [1] sides. */
    private record Pair(VerbsProvider provider, CmListener listener, CmId client, CmId server, CompletionQueue ccq,
                        CompletionQueue scq, ProtectionDomain cpd, ProtectionDomain spd, Arena arena)
            implements AutoCloseable {
        static Pair open() throws Exception {
            VerbsProvider p = Providers.select("memory");
            CmListener l = p.listen(new InetSocketAddress("127.0.0.1", 0), 4);
            CmId c = p.createId();
            c.resolve(l.localAddress(), TIMEOUT_NS);
            ProtectionDomain cpd = c.device().allocPd();
            CompletionQueue ccq = c.device().createCq(64);
            c.createQp(new QpInitAttr().pd(cpd).cq(ccq));
            CompletableFuture<Void> f = CompletableFuture.runAsync(() -> c.connect(null, TIMEOUT_NS));
            CmId s = l.getRequest(TIMEOUT_NS);
            ProtectionDomain spd = s.device().allocPd();
            CompletionQueue scq = s.device().createCq(64);
            s.createQp(new QpInitAttr().pd(spd).cq(scq));
            s.accept(null, TIMEOUT_NS);
            f.get(10, TimeUnit.SECONDS);
            return new Pair(p, l, c, s, ccq, scq, cpd, spd, Arena.ofShared());
        }

        @Override
        public void close() {
            provider.close();
            arena.close();
        }
    }

    private static SendWr rdma(WrOpcode op, MemoryRegion local, MemoryRegion remote) {
        SendWr w = new SendWr();
        w.wrId = 7;
        w.opcode = op;
        w.sendFlags = SendWr.SIGNALED;
        w.numSge = 1;
        w.sgList[0].set(local, 0, 4096);
        w.remoteAddr = remote.address();
        w.rkey = remote.rkey();
        return w;
    }

    @Test
    void shouldCompleteRdmaWriteOnTheCallersThreadBeforePostSendReturns() throws Exception {
        try (Pair p = Pair.open()) {
            MemoryRegion src = p.cpd.registerMemory(p.arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            MemoryRegion dst = p.spd.registerMemory(p.arena.allocate(4096, 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            src.segment().fill((byte) 0x5A);
            p.client.qp().postSend(rdma(WrOpcode.RDMA_WRITE, src, dst));
            WorkCompletion[] wcs = WorkCompletion.array(4);
            assertEquals(1, p.ccq.poll(wcs, 4), "completion already on the CQ (no thread hop)");
            assertEquals(WcStatus.SUCCESS, wcs[0].status, wcs[0].toString());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
        }
    }

    @Test
    void shouldRefuseRdmaReadFromAClosedRemoteRegion() throws Exception {
        try (Pair p = Pair.open()) {
            MemoryRegion sink = p.cpd.registerMemory(p.arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            MemoryRegion remote = p.spd.registerMemory(p.arena.allocate(4096, 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_READ);
            remote.segment().fill((byte) 1);
            remote.close();
            p.client.qp().postSend(rdma(WrOpcode.RDMA_READ, sink, remote));
            WorkCompletion[] wcs = WorkCompletion.array(4);
            assertEquals(1, p.ccq.await(wcs, 4, TIMEOUT_NS));
            assertEquals(WcStatus.REM_ACCESS_ERR, wcs[0].status, wcs[0].toString());
            assertEquals(0, sink.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0), "nothing placed");
        }
    }

    @Test
    void shouldRefuseALocalRegionClosedAfterPosting() throws Exception {
        try (Pair p = Pair.open()) {
            MemoryRegion src = p.cpd.registerMemory(p.arena.allocate(4096, 4096), Access.LOCAL_WRITE);
            MemoryRegion dst = p.spd.registerMemory(p.arena.allocate(4096, 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            // a SEND waiting for a RECV (RNR, retried forever) holds the WRITE behind it in the queue
            SendWr send = rdma(WrOpcode.SEND, src, dst);
            send.wrId = 1;
            p.client.qp().postSend(send);
            p.client.qp().postSend(rdma(WrOpcode.RDMA_WRITE, src, dst));
            src.close();
            io.rdmablock.rdma.verbs.RecvWr r = new io.rdmablock.rdma.verbs.RecvWr();
            r.numSge = 1;
            r.sgList[0].set(dst, 0, 4096);
            p.server.qp().postRecv(r);
            WorkCompletion[] wcs = WorkCompletion.array(4);
            assertTrue(p.ccq.await(wcs, 4, TIMEOUT_NS) >= 1);
            assertEquals(WcStatus.LOC_PROT_ERR, wcs[0].status, "the SEND's source was closed: " + wcs[0]);
        }
    }
}
