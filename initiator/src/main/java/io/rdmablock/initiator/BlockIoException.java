package io.rdmablock.initiator;

/** An I/O on a {@link BlockDevice} failed; the cause says how (NVMe status, timeout, device lost). */
public class BlockIoException extends RuntimeException {
    public BlockIoException(String message, Throwable cause) {
        super(message, cause);
    }

    public BlockIoException(String message) {
        super(message);
    }
}
