package io.rdmablock.rdma.verbs;

import static io.rdmablock.rdma.verbs.VerbsTestSupport.assertSameBytes;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.fill;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.rdma;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.recv;
import static io.rdmablock.rdma.verbs.VerbsTestSupport.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

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
            if (VerbsTestSupport.iwarp(c)) {
                // iWARP (RFC 5040) has no immediate data: siw refuses WITH_IMM at post time (siw_verbs.c, EINVAL)
                QueuePair.PostException e = assertThrows(QueuePair.PostException.class, () -> c.client.qp.postSend(w));
                assertEquals(22, e.errno(), e.getMessage());
                return;
            }
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
    void shouldStartFencedWriteOnlyAfterEarlierReadCompleted(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion local = c.client.register(1 << 20, RW);
            MemoryRegion remote = c.server.register(2 << 20, RW);
            fill(remote.segment().asSlice(0, 1 << 20), 31);
            for (int round = 0; round < 3; round++) {
                local.segment().fill((byte) 0);
                remote.segment().asSlice(1 << 20, 1 << 20).fill((byte) 0);
                SendWr read = rdma(1, WrOpcode.RDMA_READ, local, 0, 1 << 20, remote, 0);
                SendWr write = rdma(2, WrOpcode.RDMA_WRITE, local, 0, 1 << 20, remote, 1 << 20);
                write.sendFlags |= SendWr.FENCE; // IBV_SEND_FENCE: waits for the READ before it starts
                read.next = write;
                c.client.qp.postSend(read);
                assertEquals(WcStatus.SUCCESS, c.client.next().status);
                assertEquals(WcStatus.SUCCESS, c.client.next().status);
                assertSameBytes(remote.segment().asSlice(0, 1 << 20), remote.segment().asSlice(1 << 20, 1 << 20),
                        "fenced WRITE carried the READ's data, round " + round);
            }
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldCompleteZeroLengthOperations(String provider) {
        try (Connection c = Connection.open(provider)) {
            MemoryRegion local = c.client.register(4096, Access.LOCAL_WRITE);
            MemoryRegion remote = c.server.register(4096, RW);
            MemoryRegion rbuf = c.server.register(64, Access.LOCAL_WRITE);
            c.server.qp.postRecv(recv(1, rbuf, 0, 64));
            c.server.qp.postRecv(recv(2, rbuf, 0, 64));
            boolean imm = !VerbsTestSupport.iwarp(c); // iWARP (RFC 5040) has no immediate data: siw refuses WITH_IMM
            WrOpcode[] ops = imm ? new WrOpcode[] {WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ,
                WrOpcode.RDMA_WRITE_WITH_IMM} : new WrOpcode[] {WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ};
            for (int i = 0; i < ops.length; i++) {
                SendWr w = rdma(10 + i, ops[i], local, 0, 0, remote, 0);
                w.numSge = 0;
                w.immData = 99;
                c.client.qp.postSend(w);
            }
            for (int i = 0; i < ops.length; i++) {
                WorkCompletion wc = c.client.next();
                assertEquals(10 + i, wc.wrId);
                assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
            }
            WorkCompletion r1 = c.server.next();
            assertEquals(WcOpcode.RECV, r1.opcode);
            assertEquals(0, r1.byteLen);
            if (!imm) {
                return;
            }
            WorkCompletion r2 = c.server.next();
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r2.opcode, r2.toString());
            assertEquals(0, r2.byteLen);
            assertEquals(99, r2.imm);
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
            if (VerbsTestSupport.iwarp(c)) {
                // siw completes SEND/WRITE when transmitted and READ when its response is placed, so a READ may
                // complete after later SENDs/WRITEs; READs keep their order, and so do the others among themselves
                long nextRead = -1;
                long nextOther = -1;
                for (WorkCompletion wc : wcs) {
                    assertEquals(WcStatus.SUCCESS, wc.status, wc.toString());
                    boolean isRead = ops[(int) wc.wrId] == WrOpcode.RDMA_READ;
                    long prev = isRead ? nextRead : nextOther;
                    assertTrue(wc.wrId > prev, "completion order within " + (isRead ? "READs" : "SEND/WRITE") + ": " + wc);
                    if (isRead) {
                        nextRead = wc.wrId;
                    } else {
                        nextOther = wc.wrId;
                    }
                }
                assertEquals(ops.length, wcs.stream().mapToLong(w -> w.wrId).distinct().count(), "every WR once");
                return;
            }
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
            // ffm on iWARP registers every LOCAL_WRITE region with REMOTE_WRITE too (an iWARP READ sink is written
            // as a tagged buffer, RFC 5040 / ibv_reg_mr(3)), so there the region without REMOTE_WRITE is read-only
            int access = VerbsTestSupport.iwarp(c) ? Access.REMOTE_READ : Access.LOCAL_WRITE | Access.REMOTE_READ;
            MemoryRegion dst = c.server.register(4096, access);
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
            assumeFalse(VerbsTestSupport.iwarp(c),
                    "siw does not enforce REMOTE_READ on the READ responder: the READ succeeds (kernel 6.1 siw)");
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
                    if (VerbsTestSupport.iwarp(c)) {
                        assertRemoteRejectedOnIwarp(c, wc);
                    } else {
                        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status, "rkey of another PD: " + wc);
                    }
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
        if (VerbsTestSupport.iwarp(c)) {
            assertRemoteRejectedOnIwarp(c, s1);
            // the SEND behind it: transmitted before the TERMINATE arrived, or failed/flushed after it; siw may also
            // leave it uncompleted (its requester does not report the TERMINATE), so it is checked only if it comes
            WorkCompletion s2 = c.client.next(java.util.concurrent.TimeUnit.SECONDS.toNanos(2));
            if (s2 != null) {
                assertEquals(2, s2.wrId);
                assertTrue(s2.status == WcStatus.SUCCESS || s2.status == WcStatus.WR_FLUSH_ERR
                        || s2.status == WcStatus.LOC_QP_OP_ERR, s2.toString());
            }
        } else {
            WorkCompletion s2 = c.client.next();
            assertEquals(2, s2.wrId);
            assertEquals(WcStatus.REM_ACCESS_ERR, s1.status, s1.toString());
            assertEquals(WcStatus.WR_FLUSH_ERR, s2.status, s2.toString());
            VerbsTestSupport.awaitState(c.client.qp, QpState.ERROR, "requester QP");
        }
        WorkCompletion r = c.server.next();
        assertEquals(5, r.wrId);
        assertEquals(WcStatus.WR_FLUSH_ERR, r.status, "responder QP went to ERROR and flushed: " + r);
        VerbsTestSupport.awaitState(c.server.qp, QpState.ERROR, "responder QP");
    }

    /**
     * iWARP: the data sink rejects a bad WRITE with a TERMINATE (RFC 5040 section 7); siw completes the WRITE locally
     * once transmitted (SUCCESS), or with an error when the TERMINATE arrives first, and then the requester QP is in
     * ERROR. After a local SUCCESS, siw's requester is not seen failing (no ERROR state, no DISCONNECTED within the
     * timeout): the guarantees left are the responder's (memory unchanged, its QP in ERROR, RECVs flushed).
     */
    private static void assertRemoteRejectedOnIwarp(Connection c, WorkCompletion wc) {
        assertTrue(wc.status == WcStatus.SUCCESS || wc.status == WcStatus.REM_ACCESS_ERR
                || wc.status == WcStatus.LOC_QP_OP_ERR || wc.status == WcStatus.WR_FLUSH_ERR, wc.toString());
        if (wc.status != WcStatus.SUCCESS) {
            VerbsTestSupport.awaitState(c.client.qp, QpState.ERROR, "requester QP after an error completion");
        }
    }

    private static void assertUnchanged(MemorySegment seg, byte value) {
        for (long i = 0; i < seg.byteSize(); i++) {
            if (seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != value) {
                throw new AssertionError("responder memory changed at offset " + i);
            }
        }
    }
}
