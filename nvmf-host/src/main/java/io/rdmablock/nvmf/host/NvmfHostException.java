package io.rdmablock.nvmf.host;

/**
 * A host-side queue operation failed: the CM connect was rejected or timed out (the message names the NVMe/RDMA
 * reject status, NVMe/RDMA Transport 1.0 section 3.2), a command got no response in time (cause
 * {@link java.util.concurrent.TimeoutException}), a work completion failed, or the controller refused to become
 * ready. A command answered with an error status is the subclass {@link NvmfStatusException}.
 *
 * <p>Users of this module translate it to their own error types at their API boundary (the initiator to
 * {@code BlockIoException}).
 */
public class NvmfHostException extends RuntimeException {
    /** @param message what failed, naming the qid and the values that matter */
    public NvmfHostException(String message, Throwable cause) {
        super(message, cause);
    }

    /** @param message what failed, naming the qid and the values that matter */
    public NvmfHostException(String message) {
        super(message);
    }
}
