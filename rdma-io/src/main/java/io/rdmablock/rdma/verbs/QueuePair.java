package io.rdmablock.rdma.verbs;

/**
 * A reliable-connected queue pair ({@code ibv_qp}, {@code IBV_QPT_RC}), created by {@link CmId#createQp}.
 *
 * <p>Posting is done by one thread at a time (the poller owning it). Semantics (IB spec Vol. 1 ch. 9-10, ibverbs):
 * SEND consumes the next posted RECV in order; a SEND longer than that RECV's buffer completes LOC_LEN_ERR at the
 * responder and REM_INV_REQ_ERR at the requester; a SEND finding no RECV is retried per {@code rnrRetryCount}, then
 * RNR_RETRY_EXC_ERR; RDMA READ/WRITE are served by the remote provider after checking rkey, bounds and access flags,
 * and a violation completes REM_ACCESS_ERR at the requester without touching the remote memory. Any error completion
 * moves the QP to ERROR and every outstanding work request then completes with WR_FLUSH_ERR. Operations on one QP
 * execute in order (a SEND posted after an RDMA WRITE is delivered after the WRITE's data is placed).
 */
public interface QueuePair extends AutoCloseable {

    int qpNum();

    QpState state();

    /** The attributes it was created with (caps may be raised by the provider). */
    QpInitAttr attr();

    /**
     * Posts a list of send WRs linked by {@link SendWr#next} ({@code ibv_post_send(3)}).
     *
     * @throws PostException if a WR is malformed (too many SGEs, inline too large, send queue full, QP not in RTS
     *                       or ERROR); WRs before the failing one are posted, as with {@code bad_wr}
     */
    void postSend(SendWr wr);

    /**
     * Posts a list of receive WRs ({@code ibv_post_recv(3)}). Allowed in INIT, RTR, RTS; in ERROR they complete with
     * WR_FLUSH_ERR.
     *
     * @throws PostException as for {@link #postSend}
     */
    void postRecv(RecvWr wr);

    /** Moves the QP to ERROR ({@code ibv_modify_qp(3)}); outstanding WRs are flushed. */
    void moveToError();

    /** Destroys the QP ({@code ibv_destroy_qp(3)}); idempotent. Outstanding WRs are flushed first. */
    @Override
    void close();

    /** {@code ibv_post_send}/{@code ibv_post_recv} returned an error. */
    final class PostException extends VerbsException {
        private final long badWrId;

        public PostException(String message, int errno, long badWrId) {
            super(message, errno);
            this.badWrId = badWrId;
        }

        /** wrId of the first WR not posted. */
        public long badWrId() {
            return badWrId;
        }
    }
}
