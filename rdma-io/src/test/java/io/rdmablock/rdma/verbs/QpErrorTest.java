package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import io.rdmablock.rdma.verbs.VerbsTestSupport.Side;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** ERROR state: flush of outstanding work, posting in ERROR, disconnect with work in flight, queue limits. */
class QpErrorTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";
    private static final int RW = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFlushPostedRecvsOnMoveToError(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion buf = c.server.register(4096, Access.LOCAL_WRITE);
            for (int i = 0; i < 5; i++) {
                c.server.qp.postRecv(recv(i, buf, 0, 4096));
            }
            c.server.qp.moveToError();
            assertEquals(QpState.ERROR, c.server.qp.state());
            List<WorkCompletion> wcs = c.server.take(5);
            for (int i = 0; i < 5; i++) {
                assertEquals(i, wcs.get(i).wrId, "flush in posting order");
                assertEquals(WcStatus.WR_FLUSH_ERR, wcs.get(i).status);
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCompletePostsInErrorStateWithFlush(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion buf = c.client.register(4096, Access.LOCAL_WRITE);
            c.client.qp.moveToError();
            if (!VerbsTestSupport.soft(c)) {
                // rxe (6.1) and siw accept work posted in ERROR without ever completing it (IB spec 10.8.3.1 and
                // ibv_post_send(3) say it completes with flush; the kernels flush only on the move to ERROR):
                // the post is accepted or refused, and nothing but a flush may ever complete
                for (Runnable post : List.<Runnable>of(() -> c.client.qp.postRecv(recv(1, buf, 0, 64)),
                        () -> c.client.qp.postSend(send(2, WrOpcode.SEND, buf, 0, 64)))) {
                    try {
                        post.run();
                    } catch (QueuePair.PostException e) {
                        assertTrue(e.errno() != 0, e.getMessage());
                    }
                }
                WorkCompletion wc;
                while ((wc = c.client.next(100_000_000L)) != null) {
                    assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, wc.toString());
                }
                return;
            }
            c.client.qp.postRecv(recv(1, buf, 0, 64));
            c.client.qp.postSend(send(2, WrOpcode.SEND, buf, 0, 64));
            Set<Long> ids = new HashSet<>();
            for (WorkCompletion wc : c.client.take(2)) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, wc.toString());
                ids.add(wc.wrId);
            }
            assertEquals(Set.of(1L, 2L), ids);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFlushEverythingOnBothSidesWhenDisconnectingWithWorkInFlight(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxSendWr = 64, a -> { }, 512, s -> { })) {
            MemoryRegion local = c.client.register(1 << 20, RW);
            MemoryRegion remote = c.server.register(1 << 20, RW);
            MemoryRegion rbuf = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion srvRecv = c.server.register(4096, Access.LOCAL_WRITE);
            for (int i = 0; i < 16; i++) {
                c.client.qp.postRecv(recv(1000 + i, rbuf, 0, 4096));
                c.server.qp.postRecv(recv(2000 + i, srvRecv, 0, 4096));
            }
            for (int i = 0; i < 64; i++) {
                WrOpcode op = i % 2 == 0 ? WrOpcode.RDMA_WRITE : WrOpcode.RDMA_READ;
                c.client.qp.postSend(rdma(i, op, local, 0, 1 << 20, remote, 0));
            }
            boolean soft = VerbsTestSupport.soft(c);
            c.client.id.disconnect();
            long sendsOk = 0;
            for (int i = 0; i < 64 + 16; i++) {
                WorkCompletion wc = c.client.next();
                if (wc.wrId < 1000) {
                    // siw: a WR cut off by the disconnect completes LOC_QP_OP_ERR (siw_qp_sq_process error path)
                    assertTrue(wc.status == WcStatus.SUCCESS || wc.status == WcStatus.WR_FLUSH_ERR
                            || !soft && wc.status == WcStatus.LOC_QP_OP_ERR, wc.toString());
                    if (wc.status == WcStatus.SUCCESS) {
                        sendsOk++;
                    }
                } else {
                    assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, wc.toString());
                }
            }
            if (soft && !VerbsTestSupport.memory(c)) {
                // memory: each WR executes when posted, nothing is ever in flight (all 64 complete).
                // rxe under emulation finished all 64 MiB before rdma_disconnect took effect: per WR "completed
                // or flushed" is what a device guarantees; soft keeps work queued and must flush some
                assertTrue(sendsOk < 64, "some work was still in flight when disconnecting");
            }
            assertEquals(CmEventType.DISCONNECTED, c.client.id.pollEvent(VerbsTestSupport.TIMEOUT_NS));
            // the peer learns of the disconnect from its CM event (the kernel does not move a user QP to ERROR
            // on DREQ, cma.c), so its receives are flushed once that event is taken
            assertEquals(CmEventType.DISCONNECTED, c.server.id.pollEvent(VerbsTestSupport.TIMEOUT_NS));
            for (WorkCompletion wc : c.server.take(16)) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, "peer flushes its receives: " + wc);
            }
            VerbsTestSupport.awaitState(c.server.qp, QpState.ERROR, "peer QP after DISCONNECTED");
            c.client.assertNoCompletion(20_000_000L);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRefuseSendWhenSendQueueIsFull(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxSendWr = 4, a -> { }, 64, s -> { })) {
            MemoryRegion buf = c.client.register(4096, Access.LOCAL_WRITE);
            // no RECV on the server and infinite RNR retry: nothing completes, the queue fills up
            int depth = c.client.qp.attr().maxSendWr; // a provider may round the asked 4 up
            if (!VerbsTestSupport.soft(c)) {
                // rxe and siw accept more than the maxSendWr they report (rings rounded up to a power of two,
                // rxe_queue.c/siw_verbs.c), and on siw the first SEND without RECV ends the connection (no RNR):
                // a device only guarantees that a refused post names the WR it refused
                for (int i = 0; i <= depth; i++) {
                    long wrId = i;
                    try {
                        c.client.qp.postSend(send(wrId, WrOpcode.SEND, buf, 0, 8));
                    } catch (QueuePair.PostException e) {
                        assertEquals(wrId, e.badWrId(), e.getMessage());
                        break;
                    }
                }
                return;
            }
            for (int i = 0; i < depth; i++) {
                c.client.qp.postSend(send(i, WrOpcode.SEND, buf, 0, 8));
            }
            QueuePair.PostException e = assertThrows(QueuePair.PostException.class,
                    () -> c.client.qp.postSend(send(99, WrOpcode.SEND, buf, 0, 8)));
            assertEquals(12, e.errno(), e.getMessage());
            assertEquals(99, e.badWrId());
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectInlineLargerThanMaxInlineData(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxInlineData = 64, a -> { }, 64, s -> { })) {
            MemoryRegion buf = c.client.register(4096, Access.LOCAL_WRITE);
            SendWr w = send(1, WrOpcode.SEND, buf, 0, c.client.qp.attr().maxInlineData + 1);
            w.sendFlags |= SendWr.INLINE;
            if (VerbsTestSupport.iwarp(c)) {
                // siw copies inline data up to its own SIW_MAX_INLINE (siw.h), beyond the maxInlineData it
                // reports: refused, or sent and completed, but never hanging
                MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
                c.server.qp.postRecv(recv(2, dst, 0, 4096));
                try {
                    c.client.qp.postSend(w);
                } catch (QueuePair.PostException e) {
                    return;
                }
                assertEquals(1, c.client.next().wrId);
                return;
            }
            assertThrows(QueuePair.PostException.class, () -> c.client.qp.postSend(w));
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReleaseUnsignaledSlotsWithLaterSignaledCompletion(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxSendWr = 8, a -> { }, 64, s -> { })) {
            MemoryRegion local = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(4096, RW);
            for (int round = 0; round < 50; round++) {
                for (int i = 0; i < 7; i++) {
                    SendWr w = rdma(round * 10L + i, WrOpcode.RDMA_WRITE, local, 0, 512, remote, 0);
                    w.sendFlags = 0;
                    c.client.qp.postSend(w);
                }
                c.client.qp.postSend(rdma(round * 10L + 9, WrOpcode.RDMA_WRITE, local, 0, 512, remote, 0));
                WorkCompletion wc = c.client.next();
                assertEquals(round * 10L + 9, wc.wrId, "only the signaled WR completes");
                assertEquals(WcStatus.SUCCESS, wc.status);
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFailPostSendBeforeConnect(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            CmId id = p.createId();
            id.resolve(new java.net.InetSocketAddress(VerbsTestSupport.address(), 9), VerbsTestSupport.TIMEOUT_NS);
            try (Side s = new Side(id, 16, a -> { })) {
                MemoryRegion buf = s.register(4096, Access.LOCAL_WRITE);
                assertThrows(QueuePair.PostException.class,
                        () -> s.qp.postSend(send(1, WrOpcode.SEND, buf, 0, 8)));
                s.qp.postRecv(recv(2, buf, 0, 64)); // allowed in INIT
            }
        }
    }
}
