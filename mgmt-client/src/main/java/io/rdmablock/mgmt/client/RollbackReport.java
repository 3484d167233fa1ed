package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A copy's word on the rollback its node was asked for ({@link DesiredRollback}), in its heartbeat
 * ({@link VolumeReport#rollback()}).
 *
 * @param requestId the request it is about ({@link DesiredRollback#requestId()})
 * @param state     {@link State#DONE}: this copy's content is the snapshot's; {@link State#WAITING}: not yet (a host
 *                  still connected, writes in flight): retried at the next answer; {@link State#FAILED}: it cannot
 *                  be done on this copy (no snapshot of that id, a flat volume), not retried
 * @param detail    why it waits or failed; null when done
 */
public record RollbackReport(String requestId, State state, String detail) {
    /** How far a copy's rollback got. */
    public enum State {
        /** Applied: this copy's content is the snapshot's. */
        @JsonProperty("done") DONE,
        /** Not yet: retried at the next heartbeat answer. */
        @JsonProperty("waiting") WAITING,
        /** Cannot be done on this copy: not retried. */
        @JsonProperty("failed") FAILED
    }
}
