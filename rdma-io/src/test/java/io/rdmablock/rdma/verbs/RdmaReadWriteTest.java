package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.assertSameBytes;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.fill;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.VerbsTestSupport.Connection;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** One-sided operations: served by the remote provider after rkey, bounds and access checks. */
class RdmaReadWriteTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";
    private static final int RW = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldPlaceRdmaWriteWithoutReceiverInvolvement(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(65536, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(65536, RW);
            fill(src.segment(), 11);
            c.client.qp.postSend(rdma(1, WrOpcode.RDMA_WRITE, src, 100, 40000, dst, 2000));
            WorkCompletion wc = c.client.next();
            assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
            assertEquals(WcOpcode.RDMA_WRITE, wc.opcode);
            assertSameBytes(src.segment().asSlice(100, 40000), dst.segment().asSlice(2000, 40000), "written");
            c.server.assertNoCompletion(50_000_000L);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldFetchRdmaReadFromRemoteMemory(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion sink = c.client.register(65536, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(65536, Access.LOCAL_WRITE | Access.REMOTE_READ);
            fill(remote.segment(), 12);
            c.client.qp.postSend(rdma(1, WrOpcode.RDMA_READ, sink, 0, 30000, remote, 1234));
            WorkCompletion wc = c.client.next();
            assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
            assertEquals(WcOpcode.RDMA_READ, wc.opcode);
            assertEquals(30000, wc.byteLen);
            assertSameBytes(remote.segment().asSlice(1234, 30000), sink.segment().asSlice(0, 30000), "read");
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldConsumeRecvForRdmaWriteWithImm(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, RW);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            fill(src.segment(), 13);
            c.server.qp.postRecv(recv(77, rbuf, 0, 64));
            SendWr w = rdma(1, WrOpcode.RDMA_WRITE_WITH_IMM, src, 0, 1000, dst, 0);
            w.immData = 0x01020304;
            c.client.qp.postSend(w);
            assertEquals(WcStatus.SUCCESS, c.client.next().status);
            WorkCompletion r = c.server.next();
            assertEquals(WcStatus.SUCCESS, r.status, r.toString());
            assertEquals(77, r.wrId);
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode);
            assertTrue(r.withImm);
            assertEquals(0x01020304, r.imm);
            assertEquals(1000, r.byteLen);
            assertSameBytes(src.segment().asSlice(0, 1000), dst.segment().asSlice(0, 1000), "written");
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldDeliverSendAfterEarlierWriteIsPlaced(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(1 << 20, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(1 << 20, RW);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            fill(src.segment(), 14);
            for (int round = 0; round < 5; round++) {
                c.server.qp.postRecv(recv(round, rbuf, 0, 64));
                SendWr write = rdma(100 + round, WrOpcode.RDMA_WRITE, src, 0, 1 << 20, dst, 0);
                write.sendFlags = 0; // unsignaled, chained with the SEND
                write.next = send(200 + round, WrOpcode.SEND, src, 0, 8);
                c.client.qp.postSend(write);
                WorkCompletion r = c.server.next();
                assertEquals(WcStatus.SUCCESS, r.status, r.toString());
                // the SEND is delivered only after the WRITE's data is placed
                assertSameBytes(src.segment(), dst.segment(), "write data when the SEND arrived, round " + round);
                dst.segment().fill((byte) 0);
                WorkCompletion s = c.client.next();
                assertEquals(200 + round, s.wrId, "unsignaled WRITE generates no completion");
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCompleteSendQueueInPostingOrderAcrossOpcodes(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion local = c.client.register(1 << 20, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(1 << 20, RW);
            MemoryRegion rbuf = c.server.register(4096, Access.LOCAL_WRITE);
            for (int i = 0; i < 4; i++) {
                c.server.qp.postRecv(recv(i, rbuf, 0, 4096));
            }
            SendWr head = null;
            SendWr tail = null;
            WrOpcode[] ops = {WrOpcode.RDMA_READ, WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ,
                WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.SEND, WrOpcode.RDMA_READ, WrOpcode.SEND};
            for (int i = 0; i < ops.length; i++) {
                int len = ops[i] == WrOpcode.SEND ? 100 : 200_000;
                SendWr w = rdma(i, ops[i], local, (long) (i % 4) * 200_000, len, remote, 0);
                if (head == null) {
                    head = w;
                } else {
                    tail.next = w;
                }
                tail = w;
            }
            c.client.qp.postSend(head);
            List<WorkCompletion> wcs = c.client.take(ops.length);
            for (int i = 0; i < ops.length; i++) {
                assertEquals(i, wcs.get(i).wrId, "completion " + i);
                assertEquals(WcStatus.SUCCESS, wcs.get(i).status, wcs.get(i).toString());
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectWriteWithBadRkeyAndLeaveMemoryUnchanged(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, RW);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            fill(src.segment(), 15);
            dst.segment().fill((byte) 0x33);
            c.server.qp.postRecv(recv(5, rbuf, 0, 64));
            SendWr w = rdma(1, WrOpcode.RDMA_WRITE, src, 0, 4096, dst, 0);
            w.rkey = dst.rkey() + 0x100;
            c.client.qp.postSend(w);
            c.client.qp.postSend(send(2, WrOpcode.SEND, src, 0, 8));
            assertRemoteAccessThenFlush(c);
            assertUnchanged(dst.segment(), (byte) 0x33);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectWriteBeyondRegionBounds(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(8192, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, RW);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            dst.segment().fill((byte) 0x44);
            c.server.qp.postRecv(recv(5, rbuf, 0, 64));
            c.client.qp.postSend(rdma(1, WrOpcode.RDMA_WRITE, src, 0, 4096, dst, 1));
            c.client.qp.postSend(send(2, WrOpcode.SEND, src, 0, 8));
            assertRemoteAccessThenFlush(c);
            assertUnchanged(dst.segment(), (byte) 0x44);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectWriteIntoRegionWithoutRemoteWrite(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = c.server.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            dst.segment().fill((byte) 0x55);
            c.server.qp.postRecv(recv(5, rbuf, 0, 64));
            c.client.qp.postSend(rdma(1, WrOpcode.RDMA_WRITE, src, 0, 100, dst, 0));
            c.client.qp.postSend(send(2, WrOpcode.SEND, src, 0, 8));
            assertRemoteAccessThenFlush(c);
            assertUnchanged(dst.segment(), (byte) 0x55);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectReadFromRegionWithoutRemoteRead(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion sink = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            sink.segment().fill((byte) 0x66);
            c.server.qp.postRecv(recv(5, rbuf, 0, 64));
            c.client.qp.postSend(rdma(1, WrOpcode.RDMA_READ, sink, 0, 100, remote, 0));
            c.client.qp.postSend(send(2, WrOpcode.SEND, sink, 0, 8));
            assertRemoteAccessThenFlush(c);
            assertUnchanged(sink.segment(), (byte) 0x66);
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectRkeyOfAnotherProtectionDomain(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion src = c.client.register(4096, Access.LOCAL_WRITE);
            ProtectionDomain otherPd = c.server.id.device().allocPd();
            try (Arena arena = Arena.ofShared()) {
                MemorySegment seg = arena.allocate(4096, 4096);
                seg.fill((byte) 0x77);
                try (MemoryRegion foreign = otherPd.registerMemory(seg, RW)) {
                    c.client.qp.postSend(rdma(1, WrOpcode.RDMA_WRITE, src, 0, 100, foreign, 0));
                    WorkCompletion wc = c.client.next();
                    assertEquals(WcStatus.REM_ACCESS_ERR, wc.status, "rkey of another PD: " + wc);
                    assertUnchanged(seg, (byte) 0x77);
                }
            } finally {
                otherPd.close();
            }
        }
    }

    private static void assertRemoteAccessThenFlush(Connection c) {
        WorkCompletion s1 = c.client.next();
        assertEquals(1, s1.wrId);
        assertEquals(WcStatus.REM_ACCESS_ERR, s1.status, s1.toString());
        WorkCompletion s2 = c.client.next();
        assertEquals(2, s2.wrId);
        assertEquals(WcStatus.WR_FLUSH_ERR, s2.status, s2.toString());
        WorkCompletion r = c.server.next();
        assertEquals(5, r.wrId);
        assertEquals(WcStatus.WR_FLUSH_ERR, r.status, "responder QP went to ERROR and flushed: " + r);
        assertEquals(QpState.ERROR, c.client.qp.state());
        assertEquals(QpState.ERROR, c.server.qp.state());
    }

    private static void assertUnchanged(MemorySegment seg, byte value) {
        for (long i = 0; i < seg.byteSize(); i++) {
            if (seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != value) {
                throw new AssertionError("responder memory changed at offset " + i);
            }
        }
    }
}
