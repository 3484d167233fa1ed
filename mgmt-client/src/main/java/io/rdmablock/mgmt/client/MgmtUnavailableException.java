package io.rdmablock.mgmt.client;

/** The management server could not be reached or did not answer within the request timeout. */
public class MgmtUnavailableException extends RuntimeException {
    /**
     * @param message what was attempted, e.g. {@code "POST http://127.0.0.1:8080/v1/volumes failed"}
     * @param cause   the transport failure
     */
    public MgmtUnavailableException(String message, Throwable cause) {
        super(message + ": " + cause, cause);
    }
}
