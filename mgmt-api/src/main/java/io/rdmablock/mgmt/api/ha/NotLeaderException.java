package io.rdmablock.mgmt.api.ha;

/**
 * A write refused because this management server is not (or no longer) the leader: checked before each decision
 * ({@link LeaderOnlyStore}), so a leader whose lease ran out stops writing at once. REST: {@code 503}
 * {@code no-leader} with {@code Retry-After: 1} (the new leader is not known yet at that instant).
 */
public final class NotLeaderException extends RuntimeException {
    public NotLeaderException(String message) {
        super(message, null, false, false);
    }
}
