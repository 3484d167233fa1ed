package io.rdmablock.rdma.verbs;

/**
 * Send work-request opcodes ({@code enum ibv_wr_opcode}, ibv_post_send(3)). The ordinals are not the ibverbs values
 * (IBV_WR_SEND_WITH_INV is 9); a provider maps them.
 *
 * <p>{@link #SEND_WITH_INV}: a SEND that also asks the receiver to invalidate {@link SendWr#invalidateRkey} (IB
 * spec 1.4 section 10.7.4 "Send with Invalidate"; iWARP RFC 5040 "Send with Invalidate"); the receiver's RECV
 * completion has {@link WorkCompletion#withInv} and {@link WorkCompletion#invalidatedRkey}. Only on devices where
 * {@link DeviceContext#supportsSendWithInvalidate()} is true (ibverbs: IBV_DEVICE_MEM_MGT_EXTENSIONS); elsewhere
 * posting it fails with {@link PostException} (EINVAL). Which memory the receiving device accepts to invalidate is
 * the device's: IB/RoCE devices (rxe: rxe_invalidate_mr) only fast-registration MRs, siw (siw_invalidate_stag) any
 * MR or MW of the receiving QP's PD; a refused key fails the receiving QP (REM_INV_REQ_ERR / TERMINATE).
 */
public enum WrOpcode {
    RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, RDMA_READ, SEND_WITH_INV
}
