package io.rdmablock.rdma.verbs;

/**
 * An opened device ({@code ibv_context}). Obtained from a {@link CmId} after address resolution or from a connect
 * request, as with rdma_cm: the device is the one that routes to the peer. Closing is done by the provider.
 */
public interface DeviceContext {
    /** Device name, e.g. {@code soft0}, {@code rxe0}, {@code siw0}. */
    String name();

    /** Transport of this device; callers use it only for diagnostics (provider hides iWARP differences). */
    Transport transport();

    /**
     * True when the device executes {@link WrOpcode#SEND_WITH_INV} (ibverbs: {@code IBV_DEVICE_MEM_MGT_EXTENSIONS}
     * in {@code ibv_device_attr.device_cap_flags}, ibv_query_device(3); rxe and siw set it). The soft provider: false.
     */
    boolean supportsSendWithInvalidate();

    /**
     * True when the payload of an unsignaled SEND or RDMA WRITE may still be read from its buffer after a later
     * signaled work request on the same send queue completed, so a poster that reuses the buffer at that later
     * completion must signal the data-bearing work request too. siw does this: it transmits the payload of an
     * unsignaled work request of 4 KiB or more zero-copy ({@code sendpage} of the buffer's pages, which TCP reads
     * when it transmits), and completes work requests at local delivery to TCP (Linux
     * {@code drivers/infiniband/sw/siw/siw_qp_tx.c}, {@code siw_qp_prepare_tx}: "In iWarp, work completion is only
     * local delivery to TCP"); a signaled one is copied. The verbs ordering rule (a completion retires every earlier
     * work request of its send queue) then does not hold for the buffer. The FFM provider answers true for iWARP
     * devices; the user-space providers false.
     */
    default boolean transmitsUnsignaledPayloadLate() {
        return false;
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd(3)}).
     *
     * @throws VerbsException on failure
     */
    ProtectionDomain allocPd();

    /**
     * Creates a completion queue with a completion channel for blocking waits ({@code ibv_create_cq(3)},
     * {@code ibv_create_comp_channel(3)}).
     *
     * @param capacity minimum number of completions it holds (the provider may round up), 1 .. 65536
     * @throws IllegalArgumentException if capacity is out of bounds
     * @throws VerbsException on failure
     */
    CompletionQueue createCq(int capacity);

    /** Device transport; {@code SOFT} for the user-space emulations ({@code soft}'s soft0, {@code memory}'s mem0). */
    enum Transport { INFINIBAND, ROCE, IWARP, SOFT }
}
