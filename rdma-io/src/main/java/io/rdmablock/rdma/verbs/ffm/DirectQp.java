package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_QP_ATTR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The passive side's QP on IB/RoCE, created with {@code ibv_create_qp} instead of {@code rdma_create_qp} so that
 * the provider drives INIT -> RTR -> RTS itself (with {@code rdma_init_qp_attr(3)}, as librdmacm does inside
 * {@code rdma_accept}) and can set this side's own {@code retry_cnt} and {@code rnr_retry}.
 *
 * <p>Why: with rdma_cm each QP's RNR retry count comes from the <em>peer's</em> connection parameters (IB CM REQ/REP
 * fields). The API promises that {@link io.rdmablock.rdma.verbs.QpInitAttr#rnrRetryCount} governs this QP's own
 * SENDs. So the active side sends its own wish in the REQ, the passive side echoes it back in the REP (applied to
 * the active QP by librdmacm) and sets its own QP's values here before accepting.
 */
final class DirectQp {
    static final int IBV_QPS_INIT = 1;
    static final int IBV_QPS_RTR = 2;
    static final int IBV_QPS_RTS = 3;
    private static final long QPA_STATE = off(IBV_QP_ATTR, "qp_state");
    private static final long QPA_MAX_RD_ATOMIC = off(IBV_QP_ATTR, "max_rd_atomic");
    private static final long QPA_MAX_DEST_RD_ATOMIC = off(IBV_QP_ATTR, "max_dest_rd_atomic");
    private static final long QPA_RETRY_CNT = off(IBV_QP_ATTR, "retry_cnt");
    private static final long QPA_RNR_RETRY = off(IBV_QP_ATTR, "rnr_retry");

    private DirectQp() {
    }

    /** {@code ibv_create_qp(pd, initAttr)} then INIT (pkey, port, access flags from rdma_cm). */
    static MemorySegment create(MemorySegment cmId, FfmProtectionDomain pd, MemorySegment initAttr, String details) {
        MemorySegment qp;
        try {
            qp = (MemorySegment) Native.IBV_CREATE_QP.invokeExact(Native.errnoSegment(), pd.pd, initAttr);
        } catch (Throwable t) {
            throw new VerbsException("ibv_create_qp failed: " + t, 0, t);
        }
        if (qp.address() == 0) {
            throw Native.fail("ibv_create_qp", Native.errno(), details);
        }
        try {
            modify(cmId, qp, IBV_QPS_INIT, -1, -1, -1, -1);
            return qp;
        } catch (RuntimeException e) {
            try {
                int ignored = (int) Native.IBV_DESTROY_QP.invokeExact(Native.errnoSegment(), qp);
            } catch (Throwable s) {
                e.addSuppressed(s);
            }
            throw e;
        }
    }

    /** INIT (refresh) -> RTR -> RTS with this side's RDMA READ depths and retry counts. */
    static void toRts(MemorySegment cmId, MemorySegment qp, int maxDestRdAtomic, int maxRdAtomic, int retryCnt,
                      int rnrRetry) {
        modify(cmId, qp, IBV_QPS_INIT, -1, -1, -1, -1);
        modify(cmId, qp, IBV_QPS_RTR, maxDestRdAtomic, -1, -1, -1);
        modify(cmId, qp, IBV_QPS_RTS, -1, maxRdAtomic, retryCnt, rnrRetry);
    }

    /** {@code rdma_init_qp_attr} for {@code state}, then overrides (-1 = keep), then {@code ibv_modify_qp}. */
    private static void modify(MemorySegment cmId, MemorySegment qp, int state, int maxDestRdAtomic, int maxRdAtomic,
                               int retryCnt, int rnrRetry) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IBV_QP_ATTR);
            MemorySegment mask = a.allocate(JAVA_INT);
            attr.set(JAVA_INT, QPA_STATE, state);
            int rc = (int) Native.RDMA_INIT_QP_ATTR.invokeExact(Native.errnoSegment(), cmId, attr, mask);
            if (rc != 0) {
                throw Native.fail("rdma_init_qp_attr", Native.errno(), "qp_state=" + state);
            }
            if (maxDestRdAtomic >= 0) {
                attr.set(JAVA_BYTE, QPA_MAX_DEST_RD_ATOMIC, (byte) maxDestRdAtomic);
            }
            if (maxRdAtomic >= 0) {
                attr.set(JAVA_BYTE, QPA_MAX_RD_ATOMIC, (byte) maxRdAtomic);
            }
            if (retryCnt >= 0) {
                attr.set(JAVA_BYTE, QPA_RETRY_CNT, (byte) retryCnt);
            }
            if (rnrRetry >= 0) {
                attr.set(JAVA_BYTE, QPA_RNR_RETRY, (byte) rnrRetry);
            }
            rc = (int) Native.IBV_MODIFY_QP.invokeExact(Native.errnoSegment(), qp, attr, mask.get(JAVA_INT, 0));
            if (rc != 0) {
                throw Native.fail("ibv_modify_qp", rc > 0 ? rc : Native.errno(), "qp_state=" + state + ", mask=0x"
                        + Integer.toHexString(mask.get(JAVA_INT, 0)));
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_modify_qp failed: " + t, 0, t);
        }
    }
}
