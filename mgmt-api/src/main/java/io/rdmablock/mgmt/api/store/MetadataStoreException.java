package io.rdmablock.mgmt.api.store;

/**
 * A metadata store operation failed (I/O, corruption); the message names the operation and key. The subclass
 * {@link MetadataStoreUnavailableException} means "transiently unreachable" (REST: 503) rather than a fault (500).
 */
public class MetadataStoreException extends RuntimeException {
    /** @param message operation and key; @param cause the store's failure */
    public MetadataStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
