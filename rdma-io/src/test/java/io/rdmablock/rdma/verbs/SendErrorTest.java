package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** SEND error paths: too long for the RECV, no RECV (RNR) with bounded and infinite retries. */
class SendErrorTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFailBothSidesWhenSendIsLongerThanRecv(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            dst.segment().fill((byte) 0x5A);
            c.server.qp.postRecv(recv(1, dst, 0, 100));
            c.server.qp.postRecv(recv(2, dst, 100, 100));
            c.client.qp.postSend(send(10, WrOpcode.SEND, src, 0, 101));
            c.client.qp.postSend(send(11, WrOpcode.SEND, src, 0, 10));
            WorkCompletion r1 = c.server.next();
            assertEquals(1, r1.wrId);
            assertEquals(WcStatus.LOC_LEN_ERR, r1.status, r1.toString());
            WorkCompletion r2 = c.server.next();
            assertEquals(2, r2.wrId);
            assertEquals(WcStatus.WR_FLUSH_ERR, r2.status, r2.toString());
            WorkCompletion s1 = c.client.next();
            assertEquals(10, s1.wrId);
            assertEquals(WcStatus.REM_INV_REQ_ERR, s1.status, s1.toString());
            WorkCompletion s2 = c.client.next();
            assertEquals(11, s2.wrId);
            assertEquals(WcStatus.WR_FLUSH_ERR, s2.status, s2.toString());
            assertEquals(QpState.ERROR, c.client.qp.state());
            assertEquals(QpState.ERROR, c.server.qp.state());
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFailWithRnrRetryExceededWhenNoRecvIsPosted(String provider) {
        try (Connection c = Connection.open(provider, a -> a.rnrRetryCount = 1, a -> { }, 64, s -> { })) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            c.client.qp.postSend(send(1, WrOpcode.SEND, src, 0, 64));
            c.client.qp.postSend(send(2, WrOpcode.SEND, src, 0, 64));
            WorkCompletion s1 = c.client.next();
            assertEquals(1, s1.wrId);
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, s1.status, s1.toString());
            WorkCompletion s2 = c.client.next();
            assertEquals(WcStatus.WR_FLUSH_ERR, s2.status, s2.toString());
            assertEquals(QpState.ERROR, c.client.qp.state());
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRetryForeverOnRnrWhenRnrRetryIsSeven(String provider) {
        try (Connection c = Connection.open(provider, a -> a.rnrRetryCount = 7, a -> { }, 64, s -> { })) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            c.client.qp.postSend(send(1, WrOpcode.SEND, src, 0, 64));
            c.client.qp.postSend(send(2, WrOpcode.SEND, src, 64, 64));
            c.client.assertNoCompletion(TimeUnit.MILLISECONDS.toNanos(300));
            c.server.qp.postRecv(recv(7, dst, 0, 64));
            c.server.qp.postRecv(recv(8, dst, 64, 64));
            WorkCompletion s1 = c.client.next();
            WorkCompletion s2 = c.client.next();
            assertEquals(WcStatus.SUCCESS, s1.status, s1.toString());
            assertEquals(1, s1.wrId);
            assertEquals(WcStatus.SUCCESS, s2.status, s2.toString());
            assertEquals(2, s2.wrId);
            assertEquals(7, c.server.next().wrId);
            assertEquals(8, c.server.next().wrId);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldDeliverSendAfterRnrWhenRecvArrivesWithinRetries(String provider) {
        try (Connection c = Connection.open(provider, a -> a.rnrRetryCount = 6, a -> { }, 64, s -> { })) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            c.client.qp.postSend(send(1, WrOpcode.SEND, src, 0, 64));
            c.server.qp.postRecv(recv(7, dst, 0, 64));
            WorkCompletion s1 = c.client.next();
            assertEquals(WcStatus.SUCCESS, s1.status, s1.toString());
            assertEquals(WcStatus.SUCCESS, c.server.next().status);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCompleteLocalProtectionErrorForBadLkey(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            c.server.qp.postRecv(recv(7, dst, 0, 64));
            SendWr w = send(1, WrOpcode.SEND, src, 0, 64);
            w.sgList[0].lkey = src.lkey() ^ 0x5500;
            c.client.qp.postSend(w);
            WorkCompletion s1 = c.client.next();
            assertEquals(1, s1.wrId);
            assertEquals(WcStatus.LOC_PROT_ERR, s1.status, s1.toString());
            assertEquals(QpState.ERROR, c.client.qp.state());
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCompleteLocalProtectionErrorForSgeOutsideRegion(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            SendWr w = send(1, WrOpcode.SEND, src, 4000, 200);
            c.client.qp.postSend(w);
            WorkCompletion s1 = c.client.next();
            assertEquals(WcStatus.LOC_PROT_ERR, s1.status, s1.toString());
        }
    }
}
