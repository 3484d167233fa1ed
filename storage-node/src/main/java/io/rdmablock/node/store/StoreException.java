package io.rdmablock.node.store;

/**
 * A store operation failed in the operating system or in RocksDB. The message names the call, the errno (when
 * there is one) and the arguments that matter, e.g.
 * {@code "open failed: errno=13 (EACCES), path=/data/volumes/v1.vol"}.
 */
public class StoreException extends RuntimeException {

    private final int errno;

    public StoreException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    public StoreException(String message, Throwable cause) {
        super(message, cause);
        this.errno = 0;
    }

    /** The errno of the failed call, or 0 when the failure did not come from a system call. */
    public int errno() {
        return errno;
    }
}
