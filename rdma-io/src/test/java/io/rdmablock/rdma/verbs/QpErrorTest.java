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
            c.client.id.disconnect();
            long sendsOk = 0;
            for (int i = 0; i < 64 + 16; i++) {
                WorkCompletion wc = c.client.next();
                if (wc.wrId < 1000) {
                    assertTrue(wc.status == WcStatus.SUCCESS || wc.status == WcStatus.WR_FLUSH_ERR, wc.toString());
                    if (wc.status == WcStatus.SUCCESS) {
                        sendsOk++;
                    }
                } else {
                    assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, wc.toString());
                }
            }
            assertTrue(sendsOk < 64, "some work was still in flight when disconnecting");
            for (WorkCompletion wc : c.server.take(16)) {
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status, "peer flushes its receives: " + wc);
            }
            assertEquals(CmEventType.DISCONNECTED, c.client.id.pollEvent(VerbsTestSupport.TIMEOUT_NS));
            assertEquals(CmEventType.DISCONNECTED, c.server.id.pollEvent(VerbsTestSupport.TIMEOUT_NS));
            assertEquals(QpState.ERROR, c.server.qp.state());
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
