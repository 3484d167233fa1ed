package io.rdmablock.rdma.verbs;

/**
 * Queue-pair creation attributes ({@code struct ibv_qp_init_attr}, RC only). Validated by the provider; a value out
 * of the device's bounds fails with an {@link IllegalArgumentException} naming the field and bounds.
 */
public final class QpInitAttr {
    public ProtectionDomain pd;
    public CompletionQueue sendCq;
    public CompletionQueue recvCq;
    /** Send work requests outstanding at once (1 .. 16384). */
    public int maxSendWr = 128;
    /** Receive work requests outstanding at once (1 .. 16384). */
    public int maxRecvWr = 128;
    public int maxSendSge = 1;
    public int maxRecvSge = 1;
    /** Bytes of inline data per send WR (0 .. 256). */
    public int maxInlineData = 64;
    /** Outstanding RDMA READs this side may issue ({@code initiator_depth}, 1 .. 16). */
    public int initiatorDepth = 16;
    /** Outstanding RDMA READs this side serves ({@code responder_resources}, 1 .. 16). */
    public int responderResources = 16;
    /** Transport retries (0 .. 7). */
    public int retryCount = 7;
    /** RNR retries (0 .. 7; 7 = infinite, as in the IB spec). */
    public int rnrRetryCount = 7;

    /** A copy of every field, so that later changes of this object do not reach a queue pair created with it. */
    public QpInitAttr copy() {
        QpInitAttr c = new QpInitAttr();
        c.pd = pd;
        c.sendCq = sendCq;
        c.recvCq = recvCq;
        c.maxSendWr = maxSendWr;
        c.maxRecvWr = maxRecvWr;
        c.maxSendSge = maxSendSge;
        c.maxRecvSge = maxRecvSge;
        c.maxInlineData = maxInlineData;
        c.initiatorDepth = initiatorDepth;
        c.responderResources = responderResources;
        c.retryCount = retryCount;
        c.rnrRetryCount = rnrRetryCount;
        return c;
    }

    public QpInitAttr pd(ProtectionDomain pd) {
        this.pd = pd;
        return this;
    }

    public QpInitAttr cq(CompletionQueue cq) {
        this.sendCq = cq;
        this.recvCq = cq;
        return this;
    }
}
