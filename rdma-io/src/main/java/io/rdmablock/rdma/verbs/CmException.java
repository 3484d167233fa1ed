package io.rdmablock.rdma.verbs;

/**
 * A connection step ended with an event other than the one awaited, or timed out ({@link #event()} is null then).
 * For REJECTED, {@link #privateData()} carries the peer's reject private data.
 */
public class CmException extends VerbsException {
    private final CmEventType event;
    private final byte[] privateData;

    public CmException(String message, CmEventType event, byte[] privateData) {
        super(message);
        this.event = event;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** The event that ended the wait, or null on timeout. */
    public CmEventType event() {
        return event;
    }

    public byte[] privateData() {
        return privateData.clone();
    }
}
