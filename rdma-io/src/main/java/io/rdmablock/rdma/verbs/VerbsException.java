package io.rdmablock.rdma.verbs;

/**
 * A verbs or connection-manager call failed. The message names the call, the errno where there is one and the
 * arguments that matter, e.g. {@code ibv_reg_mr failed: errno=12 (ENOMEM), lengthBytes=1073741824}.
 */
public class VerbsException extends RuntimeException {
    private final int errno;

    public VerbsException(String message) {
        this(message, 0, null);
    }

    public VerbsException(String message, int errno) {
        this(message, errno, null);
    }

    public VerbsException(String message, int errno, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /** The errno of the failed call, 0 when none applies. */
    public int errno() {
        return errno;
    }
}
