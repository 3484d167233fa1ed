package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_ADDR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LENGTH;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LKEY;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_IMM_DATA;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_NUM_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_OPCODE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_REMOTE_ADDR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_RKEY;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_SEND_FLAGS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_WR_ID;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.CompletionQueue.CqOverrunException;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair.PostException;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WorkCompletion;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The post and poll paths against the stub device of {@code verbs_stub.c} (no RDMA device needed): what the
 * provider writes into native {@code ibv_send_wr}/{@code ibv_sge}, what it reads from {@code ibv_wc}, error
 * mapping, and that the hot path does not allocate.
 */
class FfmStubDeviceTest {
    private StubDevice stub;

    @BeforeEach
    void open() throws Throwable {
        QpInitAttr attr = new QpInitAttr();
        attr.maxSendWr = 64;
        attr.maxRecvWr = 64;
        attr.maxSendSge = 2;
        attr.maxRecvSge = 2;
        stub = StubDevice.open(attr);
    }

    @AfterEach
    void close() {
        stub.qp.close();
        stub.cq.close();
    }

    @Test
    void shouldTranslateEverySendWrFieldIntoTheNativeWorkRequest() throws Throwable {
        SendWr wr = new SendWr(2);
        wr.wrId = 0x1122334455667788L;
        wr.opcode = WrOpcode.SEND_WITH_IMM;
        wr.sendFlags = SendWr.SIGNALED | SendWr.SOLICITED;
        wr.numSge = 2;
        wr.sgList[0].set(0x1000, 100, 0xabc);
        wr.sgList[1].set(0x2000, 28, 0xdef);
        wr.remoteAddr = 0x7766554433221100L;
        wr.rkey = 0x5a5a;
        wr.immData = 0x01020304;
        stub.qp.postSend(wr);

        var n = stub.lastWr();
        assertEquals(wr.wrId, n.get(JAVA_LONG, SWR_WR_ID));
        assertEquals(3 /* IBV_WR_SEND_WITH_IMM */, n.get(JAVA_INT, SWR_OPCODE));
        assertEquals(6 /* SIGNALED | SOLICITED */, n.get(JAVA_INT, SWR_SEND_FLAGS));
        assertEquals(2, n.get(JAVA_INT, SWR_NUM_SGE));
        assertEquals(wr.remoteAddr, n.get(JAVA_LONG, SWR_REMOTE_ADDR));
        assertEquals(0x5a5a, n.get(JAVA_INT, SWR_RKEY));
        assertEquals(Integer.reverseBytes(0x01020304), n.get(JAVA_INT, SWR_IMM_DATA), "imm_data is __be32");
        var sges = stub.lastSges();
        assertEquals(0x2000, sges.get(JAVA_LONG, 16 + SGE_ADDR));
        assertEquals(28, sges.get(JAVA_INT, 16 + SGE_LENGTH));
        assertEquals(0xdef, sges.get(JAVA_INT, 16 + SGE_LKEY));
    }

    @Test
    void shouldPostSendWithInvalidateAsIbvOpcode9AndReportTheInvalidatedRkey() throws Throwable {
        SendWr wr = new SendWr(1);
        wr.wrId = 77;
        wr.opcode = WrOpcode.SEND_WITH_INV;
        wr.sendFlags = SendWr.SIGNALED;
        wr.numSge = 1;
        wr.sgList[0].set(0x1000, 64, 1);
        wr.immData = 0x0BADBEEF; // ignored: the union carries invalidate_rkey
        wr.invalidateRkey = 0x12345678;
        stub.qp.postSend(wr);
        var n = stub.lastWr();
        assertEquals(9 /* IBV_WR_SEND_WITH_INV */, n.get(JAVA_INT, SWR_OPCODE));
        assertEquals(0x12345678, n.get(JAVA_INT, SWR_IMM_DATA), "invalidate_rkey, host order, in imm_data's union");
        WorkCompletion[] wc = WorkCompletion.array(4);
        assertEquals(2, stub.cq.poll(wc, 4), "the send's completion and the stub's loopback RECV");
        assertEquals(WcOpcode.SEND, wc[0].opcode);
        assertFalse(wc[0].withInv);
        assertEquals(WcOpcode.RECV, wc[1].opcode);
        assertTrue(wc[1].withInv, wc[1].toString());
        assertFalse(wc[1].withImm);
        assertEquals(0x12345678, wc[1].invalidatedRkey);
    }

    @Test
    void shouldReadTheCompletionOfASignaledSend() {
        SendWr wr = new SendWr(2);
        wr.wrId = 42;
        wr.opcode = WrOpcode.SEND_WITH_IMM;
        wr.sendFlags = SendWr.SIGNALED;
        wr.numSge = 2;
        wr.sgList[0].set(0x1000, 100, 1);
        wr.sgList[1].set(0x2000, 28, 1);
        wr.immData = 0x01020304;
        stub.qp.postSend(wr);

        WorkCompletion[] wc = WorkCompletion.array(4);
        assertEquals(1, stub.cq.poll(wc, 4));
        assertTrue(wc[0].ok());
        assertEquals(42, wc[0].wrId);
        assertEquals(WcOpcode.SEND, wc[0].opcode);
        assertEquals(128, wc[0].byteLen);
        assertTrue(wc[0].withImm);
        assertEquals(0x01020304, wc[0].imm);
        assertEquals(0x11, wc[0].qpNum);
        assertEquals(0, stub.cq.poll(wc, 4));
    }

    @Test
    void shouldPostAChainWithOneCallAndNameTheFirstWrNotPosted() throws Throwable {
        SendWr a = signaledSend(1);
        SendWr b = signaledSend(2);
        SendWr c = signaledSend(3);
        a.next = b;
        b.next = c;
        stub.failPostSend(1, 12);
        PostException e = assertThrows(PostException.class, () -> stub.qp.postSend(a));
        assertEquals(2, e.badWrId());
        assertEquals(12, e.errno());
        assertTrue(e.getMessage().startsWith("ibv_post_send failed: errno=12 (ENOMEM), qpNum=17, wrId=2"),
                e.getMessage());
        assertEquals(1, stub.sends(), "the WR before the failing one is posted");
    }

    @Test
    void shouldReportAPositiveErrnoWhenTheDeviceReturnsANegativeOne() throws Throwable {
        stub.failPostSend(0, -22); // siw returns -errno, rxe and mlx5 errno
        PostException e = assertThrows(PostException.class, () -> stub.qp.postSend(signaledSend(7)));
        assertEquals(22, e.errno());
        assertTrue(e.getMessage().startsWith("ibv_post_send failed: errno=22 (EINVAL)"), e.getMessage());
    }

    @Test
    void shouldPostTheWrsBeforeAMalformedOneThenRejectIt() throws Throwable {
        SendWr a = signaledSend(1);
        SendWr b = new SendWr(3);
        b.wrId = 2;
        b.numSge = 3; // QP allows 2
        a.next = b;
        PostException e = assertThrows(PostException.class, () -> stub.qp.postSend(a));
        assertEquals(2, e.badWrId());
        assertEquals(1, stub.sends());
        assertTrue(e.getMessage().contains("maxSendSge=2"), e.getMessage());
    }

    @Test
    void shouldPostChainsLongerThanTheSendQueueInSlices() throws Throwable {
        SendWr head = null;
        for (int i = 199; i >= 0; i--) {
            SendWr w = signaledSend(i);
            w.next = head;
            head = w;
        }
        stub.qp.postSend(head);
        assertEquals(200, stub.sends());
        WorkCompletion[] wc = WorkCompletion.array(256);
        assertEquals(200, stub.cq.poll(wc, 256), "polled in batches of the native array, in order");
        for (int i = 0; i < 200; i++) {
            assertEquals(i, wc[i].wrId);
        }
    }

    @Test
    void shouldCompleteAPostedRecvAsRecv() {
        RecvWr r = new RecvWr(1);
        r.wrId = 9;
        r.numSge = 1;
        r.sgList[0].set(0x3000, 4096, 7);
        stub.qp.postRecv(r);
        WorkCompletion[] wc = WorkCompletion.array(1);
        assertEquals(1, stub.cq.poll(wc, 1));
        assertEquals(WcOpcode.RECV, wc[0].opcode);
        assertEquals(9, wc[0].wrId);
        assertEquals(4096, wc[0].byteLen);
    }

    @Test
    void shouldReportAFailingPollAsCqOverrun() throws Throwable {
        stub.pollError(true);
        CqOverrunException e = assertThrows(CqOverrunException.class, () -> stub.cq.poll(WorkCompletion.array(1), 1));
        assertTrue(e.getMessage().startsWith("ibv_poll_cq failed"), e.getMessage());
    }

    @Test
    void shouldReturnEveryCompletionWhateverItsWrId() {
        SendWr formerlyReserved = signaledSend(0xFFFF_FFFF_5242_4831L); // the removed iWARP hello's wrId
        SendWr user = signaledSend(5);
        formerlyReserved.next = user;
        stub.qp.postSend(formerlyReserved);
        WorkCompletion[] wc = WorkCompletion.array(4);
        assertEquals(2, stub.cq.poll(wc, 4), "the provider filters no completion: it posts no work request of its own");
        assertEquals(0xFFFF_FFFF_5242_4831L, wc[0].wrId);
        assertEquals(5, wc[1].wrId);
    }

    @Test
    void shouldTimeOutAwaitWhenNothingCompletes() {
        long t0 = System.nanoTime();
        assertEquals(0, stub.cq.await(WorkCompletion.array(1), 1, TimeUnit.MILLISECONDS.toNanos(50)));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(50));
    }

    @Test
    void shouldReturnFromAwaitOnWakeup() throws Exception {
        CompletableFuture<Integer> f = CompletableFuture.supplyAsync(
                () -> stub.cq.await(WorkCompletion.array(1), 1, TimeUnit.SECONDS.toNanos(30)));
        stub.cq.wakeup();
        assertEquals(0, f.get(10, TimeUnit.SECONDS));
    }

    @Test
    void shouldNotAllocatePerPostAndPoll() {
        SendWr wr = signaledSend(0);
        WorkCompletion[] wc = WorkCompletion.array(16);
        loop(wr, wc, 300_000); // warm up (JIT)
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        long before = mx.getThreadAllocatedBytes(tid);
        int ops = 200_000;
        loop(wr, wc, ops);
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertTrue(allocated < ops / 10, "allocated " + allocated + " bytes for " + ops + " post+poll");
    }

    private void loop(SendWr wr, WorkCompletion[] wc, int n) {
        for (int i = 0; i < n; i++) {
            wr.wrId = i;
            stub.qp.postSend(wr);
            if (stub.cq.poll(wc, 16) != 1) {
                throw new AssertionError("no completion at " + i);
            }
        }
    }

    private static SendWr signaledSend(long wrId) {
        SendWr w = new SendWr(1);
        w.wrId = wrId;
        w.opcode = WrOpcode.SEND;
        w.sendFlags = SendWr.SIGNALED;
        w.numSge = 1;
        w.sgList[0].set(0x1000, 64, 1);
        return w;
    }
}
