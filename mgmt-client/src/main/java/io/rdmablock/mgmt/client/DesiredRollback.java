package io.rdmablock.mgmt.client;

import java.util.Objects;

/**
 * A rollback the management server asks of every copy of a volume ({@link DesiredVolume#rollback()},
 * docs/snapshots.md, "Rollback"): the node makes its copy's content its own snapshot {@code snapshotId}'s, once per
 * {@code requestId} (the node keeps the last request id it applied in the same synced metadata batch as the rollback,
 * so a request seen again, after later writes or a restart, is never applied twice), and reports it
 * ({@link VolumeReport#rollback()}).
 *
 * @param requestId  unique per rollback request (a UUID), never reused
 * @param snapshotId the snapshot's number, the same on every copy ({@link DesiredSnapshot#id()}), &gt;= 1
 * @param snapshot   the snapshot's name (for logs; the node goes by {@code snapshotId})
 */
public record DesiredRollback(String requestId, long snapshotId, String snapshot) {
    /** @throws NullPointerException when {@code requestId} is missing */
    public DesiredRollback {
        Objects.requireNonNull(requestId, "requestId");
    }
}
