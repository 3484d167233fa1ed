package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_QP;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_QP_ATTR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_QP_INIT_ATTR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_RECV_WR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_SEND_WR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RWR_NEXT;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RWR_NUM_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RWR_SG_LIST;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RWR_WR_ID;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_ADDR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LENGTH;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SGE_LKEY;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_NEXT;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_NUM_SGE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_OPCODE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_REMOTE_ADDR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_RKEY;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_SEND_FLAGS;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_SG_LIST;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.SWR_WR_ID;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.Sge;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An RC {@code ibv_qp} created by {@code rdma_create_qp(3)}.
 *
 * <p>Posting: the Java {@link SendWr}/{@link RecvWr} chain is translated into native {@code ibv_send_wr} (128 bytes)
 * / {@code ibv_recv_wr} (32 bytes) slots preallocated at creation, one per work-queue entry, each with its own
 * {@code ibv_sge} array (16 bytes per SGE); then {@code ops.post_send}/{@code ops.post_recv} is called once for the
 * whole chain. No allocation per post. A chain longer than the work queue is posted in slices (the device then
 * answers ENOMEM when its queue is full, as ibverbs does).
 *
 * <p>The native slots are accessed through global-scope aliases ({@link Native#unscoped}) so that a downcall does
 * not acquire/release the shared arena (two atomic operations per segment argument); the arena still frees them in
 * {@link #close()}, which the owner calls only once it no longer posts (as with the QP itself).
 *
 * <p>{@link Owner} says who created the native QP and so how {@link #close()} destroys it.
 *
 * <p>Teardown: {@link #close()} moves the QP to ERROR (the device flushes every outstanding WR into the CQ as
 * WR_FLUSH_ERR for the owner to poll), then {@code rdma_destroy_qp}, then frees the native slots.
 */
final class FfmQueuePair implements QueuePair {
    private static final long SWR_SIZE = IBV_SEND_WR.byteSize();
    private static final long RWR_SIZE = IBV_RECV_WR.byteSize();
    private static final long SGE_SIZE = IBV_SGE.byteSize();
    private static final ValueLayout.OfLong J_LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt J_INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final int IBV_QP_STATE = 1;
    private static final int IBV_QPS_ERR = 6;

    /** Who created the native QP, hence how it is destroyed. */
    enum Owner {
        /** {@code rdma_create_qp}: destroyed with {@code rdma_destroy_qp(cmId)}. */
        RDMA_CM,
        /** {@code ibv_create_qp} (passive side on IB/RoCE, transitions done by the provider): {@code ibv_destroy_qp}. */
        DIRECT,
        /** Not ours (the benchmark's and tests' stub): nothing native is destroyed. */
        EXTERNAL
    }

    private final FfmDeviceContext device;
    private final MemorySegment cmId;
    private final Owner owner;
    final MemorySegment qp;
    private final int qpNum;
    private final QpInitAttr attr;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment fnPostSend;
    private final MemorySegment fnPostRecv;
    private final int sendSlots;
    private final int recvSlots;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final MemorySegment sendWrs;
    private final MemorySegment recvWrs;
    private final MemorySegment sendSges;
    private final MemorySegment recvSges;
    private final MemorySegment badWr;
    private boolean closed;
    /** iWARP: siw's query_qp does not report the state, so the provider tracks it (see {@link #state()}). */
    private volatile QpState trackedState = QpState.INIT;

    FfmQueuePair(FfmDeviceContext device, Owner owner, MemorySegment cmId, MemorySegment qp, QpInitAttr attr) {
        this.device = device;
        this.owner = owner;
        this.cmId = cmId;
        this.qp = qp.reinterpret(IBV_QP.byteSize());
        this.qpNum = this.qp.get(JAVA_INT, off(IBV_QP, "qp_num"));
        this.attr = attr;
        this.fnPostSend = device.fnPostSend;
        this.fnPostRecv = device.fnPostRecv;
        this.sendSlots = Math.max(1, attr.maxSendWr);
        this.recvSlots = attr.maxRecvWr;
        this.maxSendSge = attr.maxSendSge;
        this.maxRecvSge = attr.maxRecvSge;
        this.sendWrs = Native.unscoped(arena.allocate(SWR_SIZE * sendSlots, 8));
        this.recvWrs = Native.unscoped(arena.allocate(RWR_SIZE * recvSlots, 8));
        this.sendSges = Native.unscoped(arena.allocate(SGE_SIZE * sendSlots * maxSendSge, 8));
        this.recvSges = Native.unscoped(arena.allocate(SGE_SIZE * recvSlots * maxRecvSge, 8));
        for (int i = 0; i < sendSlots; i++) {
            sendWrs.set(ADDRESS, i * SWR_SIZE + SWR_SG_LIST, sendSges.asSlice(SGE_SIZE * i * maxSendSge));
        }
        for (int i = 0; i < recvSlots; i++) {
            recvWrs.set(ADDRESS, i * RWR_SIZE + RWR_SG_LIST, recvSges.asSlice(SGE_SIZE * i * maxRecvSge));
        }
        this.badWr = Native.unscoped(arena.allocate(ADDRESS));
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpInitAttr attr() {
        return attr;
    }

    FfmDeviceContext device() {
        return device;
    }

    @Override
    public void postSend(SendWr wr) {
        if (wr.next == null && validSend(wr)) { // fast path: one WR, slot 0
            fillSend(0, wr, 0L);
            int rc;
            try {
                rc = (int) Native.OPS_POST_SEND.invokeExact(fnPostSend, qp, sendWrs, badWr);
            } catch (Throwable t) {
                throw new VerbsException("ibv_post_send failed: " + t, 0, t);
            }
            if (rc != 0) {
                throw sendFailure(Math.abs(rc), wr, 0); // providers return errno or -errno (siw)
            }
            return;
        }
        postSendChain(wr);
    }

    private boolean validSend(SendWr w) {
        return w.numSge >= 0 && w.numSge <= maxSendSge && w.numSge <= w.sgList.length && w.opcode != null
                && (w.opcode != WrOpcode.SEND_WITH_INV || device.supportsSendWithInvalidate());
    }

    private void postSendChain(SendWr wr) {
        SendWr w = wr;
        while (w != null) {
            SendWr head = w;
            int n = 0;
            SendWr invalid = null;
            for (; w != null && n < sendSlots; w = w.next) {
                if (!validSend(w)) {
                    invalid = w;
                    break;
                }
                fillSend(n, w, sendWrs.address() + (n + 1) * SWR_SIZE);
                n++;
            }
            if (n > 0) {
                sendWrs.set(J_LONG, (n - 1) * SWR_SIZE + SWR_NEXT, 0L);
                int rc;
                try {
                    rc = (int) Native.OPS_POST_SEND.invokeExact(fnPostSend, qp, sendWrs, badWr);
                } catch (Throwable t) {
                    throw new VerbsException("ibv_post_send failed: " + t, 0, t);
                }
                if (rc != 0) {
                    throw sendFailure(Math.abs(rc), head, slotOf(badWr.get(ADDRESS, 0).address(), sendWrs, SWR_SIZE, n));
                }
            }
            if (invalid != null) {
                throw new PostException("ibv_post_send not called: errno=22 (EINVAL), qpNum=" + qpNum + ", wrId="
                        + invalid.wrId + ", opcode=" + invalid.opcode + ", numSge=" + invalid.numSge + ", maxSendSge="
                        + maxSendSge + ", sgList.length=" + invalid.sgList.length
                        + (invalid.opcode == WrOpcode.SEND_WITH_INV ? " (device " + device.name()
                        + " does not support SEND_WITH_INV: no IBV_DEVICE_MEM_MGT_EXTENSIONS)" : ""),
                        Errno.EINVAL, invalid.wrId);
            }
        }
    }

    /** Writes {@code w} into native slot {@code slot}, linked to {@code next} (an address, 0 for the last). */
    private void fillSend(int slot, SendWr w, long next) {
        long base = slot * SWR_SIZE;
        MemorySegment s = sendWrs;
        s.set(J_LONG, base + SWR_WR_ID, w.wrId);
        s.set(J_LONG, base + SWR_NEXT, next);
        // num_sge|opcode and send_flags|imm_data are adjacent u32 pairs (checked in Words): one 8-byte store each
        WrOpcode op = w.opcode;
        s.set(J_LONG, base + SWR_NUM_SGE, Words.pair(w.numSge, NativeStructs.IBV_WR_OPCODE[op.ordinal()]));
        // the imm_data (__be32) / invalidate_rkey (host order) union
        int immOrInv = op == WrOpcode.SEND_WITH_INV ? w.invalidateRkey : Integer.reverseBytes(w.immData);
        s.set(J_LONG, base + SWR_SEND_FLAGS, Words.pair(w.sendFlags, immOrInv));
        s.set(J_LONG, base + SWR_REMOTE_ADDR, w.remoteAddr);
        s.set(J_INT, base + SWR_RKEY, w.rkey);
        MemorySegment sges = sendSges;
        long first = SGE_SIZE * (long) slot * maxSendSge;
        for (int i = 0; i < w.numSge; i++) {
            Sge g = w.sgList[i];
            long o = first + i * SGE_SIZE;
            sges.set(J_LONG, o + SGE_ADDR, g.addr);
            sges.set(J_LONG, o + SGE_LENGTH, Words.pair(g.length, g.lkey)); // length|lkey
        }
    }

    @Override
    public void postRecv(RecvWr wr) {
        RecvWr w = wr;
        while (w != null) {
            RecvWr head = w;
            int n = 0;
            RecvWr invalid = null;
            for (; w != null && n < recvSlots; w = w.next) {
                if (w.numSge < 0 || w.numSge > maxRecvSge || w.numSge > w.sgList.length) {
                    invalid = w;
                    break;
                }
                fillRecv(n++, w);
            }
            if (n > 0) {
                recvWrs.set(ADDRESS, (n - 1) * RWR_SIZE + RWR_NEXT, MemorySegment.NULL);
                int rc;
                try {
                    rc = (int) Native.OPS_POST_RECV.invokeExact(fnPostRecv, qp, recvWrs, badWr);
                } catch (Throwable t) {
                    throw new VerbsException("ibv_post_recv failed: " + t, 0, t);
                }
                if (rc != 0) {
                    rc = Math.abs(rc);
                    RecvWr bad = head;
                    for (int i = slotOf(badWr.get(ADDRESS, 0).address(), recvWrs, RWR_SIZE, n); i > 0; i--) {
                        bad = bad.next;
                    }
                    throw new PostException("ibv_post_recv failed: errno=" + rc + " (" + Errno.name(rc) + "), qpNum="
                            + qpNum + ", wrId=" + bad.wrId + ", numSge=" + bad.numSge + ", maxRecvWr=" + recvSlots
                            + ", state=" + safeState(), rc, bad.wrId);
                }
            }
            if (invalid != null) {
                throw new PostException("ibv_post_recv not called: errno=22 (EINVAL), qpNum=" + qpNum + ", wrId="
                        + invalid.wrId + ", numSge=" + invalid.numSge + ", maxRecvSge=" + maxRecvSge, Errno.EINVAL,
                        invalid.wrId);
            }
        }
    }

    private void fillRecv(int slot, RecvWr w) {
        long base = slot * RWR_SIZE;
        MemorySegment s = recvWrs;
        s.set(J_LONG, base + RWR_WR_ID, w.wrId);
        s.set(J_LONG, base + RWR_NEXT, s.address() + base + RWR_SIZE);
        s.set(J_INT, base + RWR_NUM_SGE, w.numSge);
        MemorySegment sges = recvSges;
        long first = SGE_SIZE * (long) slot * maxRecvSge;
        for (int i = 0; i < w.numSge; i++) {
            Sge g = w.sgList[i];
            long o = first + i * SGE_SIZE;
            sges.set(J_LONG, o + SGE_ADDR, g.addr);
            sges.set(J_LONG, o + SGE_LENGTH, Words.pair(g.length, g.lkey)); // length|lkey
        }
    }

    private static int slotOf(long badAddress, MemorySegment slots, long size, int n) {
        long i = (badAddress - slots.address()) / size;
        return i < 0 || i >= n ? 0 : (int) i;
    }

    private PostException sendFailure(int rc, SendWr head, int badIndex) {
        SendWr bad = head;
        for (int i = badIndex; i > 0; i--) {
            bad = bad.next;
        }
        String hint = device.iwarp() && (bad.opcode == WrOpcode.SEND_WITH_IMM || bad.opcode == WrOpcode.RDMA_WRITE_WITH_IMM)
                ? " (iWARP has no immediate data)" : "";
        return new PostException("ibv_post_send failed: errno=" + rc + " (" + Errno.name(rc) + "), qpNum=" + qpNum
                + ", wrId=" + bad.wrId + ", opcode=" + bad.opcode + ", numSge=" + bad.numSge + ", totalLength="
                + bad.totalLength() + ", sendFlags=0x" + Integer.toHexString(bad.sendFlags) + ", maxSendWr=" + sendSlots
                + ", maxInlineData=" + attr.maxInlineData + ", state=" + safeState() + hint, rc, bad.wrId);
    }

    private String safeState() {
        if (owner == Owner.EXTERNAL) {
            return "?";
        }
        try {
            return state().name();
        } catch (RuntimeException e) {
            return "?";
        }
    }

    /**
     * {@code ibv_query_qp(IBV_QP_STATE)}. On iWARP, where siw does not report the state, the tracked state: INIT
     * after creation, RTS once connected, ERROR after {@link #moveToError}, a disconnect or an error completion.
     */
    @Override
    public QpState state() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment qpAttr = a.allocate(IBV_QP_ATTR);
            MemorySegment init = a.allocate(IBV_QP_INIT_ATTR);
            int rc = (int) Native.IBV_QUERY_QP.invokeExact(Native.errnoSegment(), qp, qpAttr, IBV_QP_STATE, init);
            if (rc != 0) {
                throw Native.fail("ibv_query_qp", rc > 0 ? rc : Native.errno(), "qpNum=" + qpNum);
            }
            int s = qpAttr.get(JAVA_INT, off(IBV_QP_ATTR, "qp_state"));
            QpState[] states = QpState.values();
            QpState reported = s >= 0 && s < states.length ? states[s] : QpState.ERROR;
            // siw (kernel 6.1) leaves qp_state 0 (RESET) in ibv_query_qp; a connected QP is never RESET
            return device.iwarp() && reported == QpState.RESET ? trackedState : reported;
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_query_qp failed: " + t, 0, t);
        }
    }

    /** {@code ibv_modify_qp(IBV_QP_STATE = IBV_QPS_ERR)}. */
    @Override
    public void moveToError() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment qpAttr = a.allocate(IBV_QP_ATTR);
            qpAttr.set(JAVA_INT, off(IBV_QP_ATTR, "qp_state"), IBV_QPS_ERR);
            int rc = (int) Native.IBV_MODIFY_QP.invokeExact(Native.errnoSegment(), qp, qpAttr, IBV_QP_STATE);
            trackedState = QpState.ERROR;
            if (rc != 0) {
                throw Native.fail("ibv_modify_qp(ERR)", rc > 0 ? rc : Native.errno(), "qpNum=" + qpNum);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_modify_qp failed: " + t, 0, t);
        }
    }

    /** ERROR (flush), then {@code rdma_destroy_qp} (or {@code ibv_destroy_qp}), then the native slots; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (owner == Owner.EXTERNAL) {
            arena.close();
            return;
        }
        device.forgetQp(this);
        RuntimeException first = null;
        first = Closer.close(this::moveToError, first);
        try {
            if (owner == Owner.RDMA_CM) {
                Native.RDMA_DESTROY_QP.invokeExact(cmId);
            } else {
                int rc = (int) Native.IBV_DESTROY_QP.invokeExact(Native.errnoSegment(), qp);
                if (rc != 0) {
                    throw Native.fail("ibv_destroy_qp", rc > 0 ? rc : Native.errno(), "qpNum=" + qpNum);
                }
            }
        } catch (Throwable t) {
            first = Closer.close(() -> {
                throw t instanceof VerbsException ve ? ve : new VerbsException("destroying the QP failed: " + t, 0, t);
            }, first);
        }
        arena.close();
        if (first != null) {
            throw first;
        }
    }

    /** The connection is established (tracked state for iWARP). */
    void connected() {
        trackedState = QpState.RTS;
    }

    /** An error completion arrived for this QP: the device moved it to ERROR (tracked state for iWARP). */
    void errorCompletion() {
        trackedState = QpState.ERROR;
    }

    Owner owner() {
        return owner;
    }

    boolean isClosed() {
        return closed;
    }
}
