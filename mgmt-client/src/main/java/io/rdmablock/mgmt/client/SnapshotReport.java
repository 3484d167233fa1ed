package io.rdmablock.mgmt.client;

/**
 * A snapshot a node holds of a volume, in its heartbeat ({@link VolumeReport#snapshots()}).
 *
 * @param id             the snapshot's number (from {@link DesiredSnapshot#id()})
 * @param name           its name
 * @param createdMs      when the node took it, ms since the epoch (the node's clock)
 * @param sizeBytes      the volume's size when it was taken
 * @param exclusiveBytes bytes only this snapshot holds on this node (freed by deleting it)
 */
public record SnapshotReport(long id, String name, long createdMs, long sizeBytes, long exclusiveBytes) {
}
