package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.assertSameBytes;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.fill;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** SEND/RECV semantics: ordering, immediate data, inline, scatter, length errors, RNR. */
class SendRecvTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldDeliverSendIntoPostedRecv(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            fill(src.segment(), 1);
            c.server.qp.postRecv(recv(7, dst, 0, 4096));
            c.client.qp.postSend(send(9, WrOpcode.SEND, src, 0, 1000));
            WorkCompletion s = c.client.next();
            assertEquals(WcStatus.SUCCESS, s.status, s.toString());
            assertEquals(9, s.wrId);
            assertEquals(WcOpcode.SEND, s.opcode);
            WorkCompletion r = c.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(7, r.wrId);
            assertEquals(WcOpcode.RECV, r.opcode);
            assertEquals(1000, r.byteLen);
            assertEquals(c.server.qp.qpNum(), r.qpNum);
            assertSameBytes(src.segment().asSlice(0, 1000), dst.segment().asSlice(0, 1000), "payload");
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldConsumeRecvsInPostingOrder(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(8 * 256, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(8 * 256, Access.LOCAL_WRITE);
            fill(src.segment(), 2);
            for (int i = 0; i < 8; i++) {
                c.server.qp.postRecv(recv(100 + i, dst, i * 256L, 256));
            }
            for (int i = 0; i < 8; i++) {
                c.client.qp.postSend(send(i, WrOpcode.SEND, src, i * 256L, 10 + i));
            }
            List<WorkCompletion> sends = c.client.take(8);
            List<WorkCompletion> recvs = c.server.take(8);
            for (int i = 0; i < 8; i++) {
                assertEquals(i, sends.get(i).wrId, "send completions in posting order");
                assertEquals(WcStatus.SUCCESS, sends.get(i).status);
                assertEquals(100 + i, recvs.get(i).wrId, "receives consumed in posting order");
                assertEquals(10 + i, recvs.get(i).byteLen);
                assertSameBytes(src.segment().asSlice(i * 256L, 10 + i), dst.segment().asSlice(i * 256L, 10 + i),
                        "message " + i);
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCarryImmediateDataWithSend(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            c.server.qp.postRecv(recv(1, dst, 0, 64));
            SendWr w = send(2, WrOpcode.SEND_WITH_IMM, src, 0, 16);
            w.immData = 0xCAFEBABE;
            if (VerbsTestSupport.iwarp(c)) {
                // iWARP (RFC 5040) has no immediate data: siw refuses WITH_IMM at post time (siw_verbs.c, EINVAL)
                QueuePair.PostException e = assertThrows(QueuePair.PostException.class, () -> c.client.qp.postSend(w));
                assertEquals(22, e.errno(), e.getMessage());
                return;
            }
            c.client.qp.postSend(w);
            assertEquals(WcStatus.SUCCESS, c.client.next().status);
            WorkCompletion r = c.server.next();
            assertEquals(WcStatus.SUCCESS, r.status);
            assertTrue(r.withImm, "withImm");
            assertEquals(0xCAFEBABE, r.imm);
            assertEquals(16, r.byteLen);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCopyInlineDataAtPostTime(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            fill(src.segment(), 3);
            byte[] expected = src.segment().asSlice(0, 48).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            c.server.qp.postRecv(recv(1, dst, 0, 64));
            SendWr w = send(2, WrOpcode.SEND, src, 0, 48);
            w.sendFlags |= SendWr.INLINE;
            c.client.qp.postSend(w);
            src.segment().fill((byte) 0); // inline: the buffer may be reused as soon as postSend returns
            assertEquals(WcStatus.SUCCESS, c.client.next().status);
            WorkCompletion r = c.server.next();
            assertEquals(48, r.byteLen);
            assertEquals(java.lang.foreign.MemorySegment.ofArray(expected).mismatch(dst.segment().asSlice(0, 48)),
                    -1L, "inline payload");
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldScatterSendAcrossRecvSges(String provider) {
        try (Connection c = Connection.open(provider, a -> a.maxSendSge = 3, a -> a.maxRecvSge = 3, 64, s -> { })) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE);
            fill(src.segment(), 4);
            RecvWr r = new RecvWr(3);
            r.wrId = 5;
            r.numSge = 3;
            r.sgList[0].set(dst, 0, 100);
            r.sgList[1].set(dst, 1000, 100);
            r.sgList[2].set(dst, 2000, 100);
            c.server.qp.postRecv(r);
            SendWr w = new SendWr(3);
            w.opcode = WrOpcode.SEND;
            w.sendFlags = SendWr.SIGNALED;
            w.numSge = 2;
            w.sgList[0].set(src, 0, 150);
            w.sgList[1].set(src, 500, 100);
            c.client.qp.postSend(w);
            assertEquals(WcStatus.SUCCESS, c.client.next().status);
            WorkCompletion wc = c.server.next();
            assertEquals(WcStatus.SUCCESS, wc.status);
            assertEquals(250, wc.byteLen);
            assertSameBytes(src.segment().asSlice(0, 100), dst.segment().asSlice(0, 100), "sge 0");
            assertSameBytes(src.segment().asSlice(100, 50), dst.segment().asSlice(1000, 50), "sge 1a");
            assertSameBytes(src.segment().asSlice(500, 50), dst.segment().asSlice(1050, 50), "sge 1b");
            assertSameBytes(src.segment().asSlice(550, 50), dst.segment().asSlice(2000, 50), "sge 2");
        }
    }
}
