package io.rdmablock.rdma.verbs;

/**
 * A send work request ({@code struct ibv_send_wr}), mutable and reusable: allocate once per slot, patch the fields
 * that change, post. Chain with {@link #next} to post a list with one call. The provider copies what it needs during
 * {@link QueuePair#postSend}; the object may be reused as soon as that call returns (the payload memory may not, until
 * the completion — or, for an unsignaled WR, a later signaled completion — arrives; inline data excepted).
 */
public final class SendWr {
    /** {@code IBV_SEND_SIGNALED}: generate a completion on success. */
    public static final int SIGNALED = 1 << 1;
    /** {@code IBV_SEND_SOLICITED}. */
    public static final int SOLICITED = 1 << 2;
    /** {@code IBV_SEND_INLINE}: payload copied at post time (max {@link QpInitAttr#maxInlineData}). */
    public static final int INLINE = 1 << 3;
    /** {@code IBV_SEND_FENCE}: wait for prior RDMA READs before this one starts. */
    public static final int FENCE = 1;

    public long wrId;
    public WrOpcode opcode = WrOpcode.SEND;
    /** Bitwise OR of SIGNALED, SOLICITED, INLINE, FENCE. */
    public int sendFlags;
    /** Gather list; only the first {@link #numSge} entries are used. */
    public final Sge[] sgList;
    public int numSge;
    /** RDMA READ/WRITE: remote address and rkey. */
    public long remoteAddr;
    public int rkey;
    /** Immediate data (network byte order on the wire; here a plain int) for *_WITH_IMM. */
    public int immData;
    /**
     * {@link WrOpcode#SEND_WITH_INV}: the receiver's rkey to invalidate (ibv_send_wr.invalidate_rkey, which shares
     * its 4 bytes with imm_data); ignored for other opcodes.
     */
    public int invalidateRkey;
    /** Next WR in a posted list, or null. */
    public SendWr next;

    public SendWr(int maxSge) {
        if (maxSge < 1 || maxSge > 30) {
            throw new IllegalArgumentException("invalid maxSge: maxSge=" + maxSge + ", min=1, max=30");
        }
        sgList = new Sge[maxSge];
        for (int i = 0; i < maxSge; i++) {
            sgList[i] = new Sge();
        }
    }

    public SendWr() {
        this(1);
    }

    /** Total bytes of the first {@link #numSge} elements. */
    public long totalLength() {
        long n = 0;
        for (int i = 0; i < numSge; i++) {
            n += Integer.toUnsignedLong(sgList[i].length);
        }
        return n;
    }
}
