package io.rdmablock.rdma.verbs;

/**
 * A work completion ({@code struct ibv_wc}). Mutable: {@link CompletionQueue#poll} fills caller-provided instances,
 * so polling allocates nothing. For a completion with a status other than SUCCESS only {@link #wrId},
 * {@link #status}, {@link #qpNum} (and {@link #vendorErr}) are defined, as in ibverbs.
 */
public final class WorkCompletion {
    public long wrId;
    public WcStatus status = WcStatus.SUCCESS;
    public WcOpcode opcode = WcOpcode.SEND;
    /** Bytes received (RECV) or transferred. */
    public int byteLen;
    /** Immediate data, valid when {@link #withImm}. */
    public int imm;
    public boolean withImm;
    /**
     * RECV completion of a {@link WrOpcode#SEND_WITH_INV}: the device invalidated {@link #invalidatedRkey}
     * (ibverbs IBV_WC_WITH_INV, ibv_wc.invalidated_rkey).
     */
    public boolean withInv;
    /** The rkey the peer's SEND_WITH_INV invalidated, valid when {@link #withInv}; else 0. */
    public int invalidatedRkey;
    public int qpNum;
    public int vendorErr;

    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    @Override
    public String toString() {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byteLen=" + byteLen
                + (withImm ? ", imm=" + imm : "") + (withInv ? ", invalidatedRkey=0x"
                + Integer.toHexString(invalidatedRkey) : "") + ", qpNum=" + qpNum + "}";
    }

    /** Creates {@code n} completions for a poll array. */
    public static WorkCompletion[] array(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }
}
