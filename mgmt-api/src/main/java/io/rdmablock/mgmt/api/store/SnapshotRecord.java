package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;

import java.util.Objects;

/**
 * A snapshot as stored, inside its {@link VolumeRecord} (docs/snapshots.md): it lives and goes with its volume.
 *
 * @param id             unique within the volume, never reused (from {@link VolumeRecord#nextSnapshotId()}), &gt;= 1
 * @param name           unique within the volume, 1..64 of {@code [A-Za-z0-9._-]}, first a letter or digit
 * @param createdAtMs    when it was requested, ms since the epoch
 * @param epoch          the volume's epoch when it was requested
 * @param state          creating until the primary reports it, ready, deleting until the primary no longer does
 * @param sizeBytes      the volume's size it captured, bytes, as the primary reported it (0 before)
 * @param exclusiveBytes bytes only this snapshot holds (what deleting it frees), as last reported (0 before)
 */
public record SnapshotRecord(long id, String name, long createdAtMs, long epoch, SnapshotState state, long sizeBytes,
                             long exclusiveBytes) {
    /** @throws NullPointerException when {@code name} or {@code state} is missing */
    public SnapshotRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(state, "state");
    }

    /** @return a copy in another state */
    public SnapshotRecord withState(SnapshotState next) {
        return new SnapshotRecord(id, name, createdAtMs, epoch, next, sizeBytes, exclusiveBytes);
    }

    /** @return a copy with the sizes a report gave, bytes */
    public SnapshotRecord withSizes(long size, long exclusive) {
        return new SnapshotRecord(id, name, createdAtMs, epoch, state, size, exclusive);
    }

    /** @return the REST shape of this snapshot of volume {@code volume} */
    public Snapshot toSnapshot(String volume) {
        return new Snapshot(volume, name, id, createdAtMs, epoch, state, sizeBytes, exclusiveBytes);
    }
}
