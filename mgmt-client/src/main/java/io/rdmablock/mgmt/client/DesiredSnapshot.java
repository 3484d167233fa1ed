package io.rdmablock.mgmt.client;

/**
 * A snapshot the primary copy's node must hold, or must delete, as the heartbeat answer says
 * ({@link DesiredVolume#snapshots()}). The node takes a missing one at once (a write barrier on the volume) and
 * reports it ({@link VolumeReport#snapshots()}); taking or deleting is idempotent by {@code id}.
 *
 * @param id     the snapshot's number within the volume (1 and up, never reused)
 * @param name   its name (as {@link Snapshot#name()})
 * @param delete true: delete it and stop reporting it; false: hold it
 */
public record DesiredSnapshot(long id, String name, boolean delete) {
}
