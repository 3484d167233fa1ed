package io.rdmablock.rdma.verbs;

/**
 * Memory-region access flags, same bit values as {@code enum ibv_access_flags} in {@code <infiniband/verbs.h>}.
 */
public final class Access {
    /** {@code IBV_ACCESS_LOCAL_WRITE}: the local HCA may write (RECV buffers, RDMA READ sinks). */
    public static final int LOCAL_WRITE = 1;
    /** {@code IBV_ACCESS_REMOTE_WRITE}: a peer may RDMA WRITE into it. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** {@code IBV_ACCESS_REMOTE_READ}: a peer may RDMA READ from it. */
    public static final int REMOTE_READ = 1 << 2;
    /** Every bit this API knows. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ;

    private Access() {
    }
}
