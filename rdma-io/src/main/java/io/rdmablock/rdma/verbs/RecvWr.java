package io.rdmablock.rdma.verbs;

/** A receive work request ({@code struct ibv_recv_wr}); mutable and reusable like {@link SendWr}. */
public final class RecvWr {
    public long wrId;
    public final Sge[] sgList;
    public int numSge;
    public RecvWr next;

    public RecvWr(int maxSge) {
        if (maxSge < 1 || maxSge > 30) {
            throw new IllegalArgumentException("invalid maxSge: maxSge=" + maxSge + ", min=1, max=30");
        }
        sgList = new Sge[maxSge];
        for (int i = 0; i < maxSge; i++) {
            sgList[i] = new Sge();
        }
    }

    public RecvWr() {
        this(1);
    }
}
