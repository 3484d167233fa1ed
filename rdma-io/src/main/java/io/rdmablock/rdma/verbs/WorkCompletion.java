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
    public int qpNum;
    public int vendorErr;

    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    @Override
    public String toString() {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byteLen=" + byteLen
                + (withImm ? ", imm=" + imm : "") + ", qpNum=" + qpNum + "}";
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
