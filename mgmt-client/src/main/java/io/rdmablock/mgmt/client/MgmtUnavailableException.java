package io.rdmablock.mgmt.client;

/**
 * No management server could be reached or none answered within the request timeout. With several management
 * URLs the message names every URL tried and why it failed.
 */
public class MgmtUnavailableException extends RuntimeException {
    /**
     * @param message what was attempted, e.g. {@code "POST http://127.0.0.1:8080/v1/volumes failed"}
     * @param cause   the transport failure; appended to the message
     */
    public MgmtUnavailableException(String message, Throwable cause) {
        super(cause == null ? message : message + ": " + cause, cause);
    }

    /**
     * @param message   the whole message, e.g. naming every URL tried and why (the cause is not appended)
     * @param cause     the last transport failure, or null
     * @param ignored   distinguishes this constructor; any value
     */
    MgmtUnavailableException(String message, Throwable cause, boolean ignored) {
        super(message, cause);
    }
}
