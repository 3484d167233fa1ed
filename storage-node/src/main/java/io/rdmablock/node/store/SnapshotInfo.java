package io.rdmablock.node.store;

/**
 * One snapshot of a mapped volume as the store holds it.
 *
 * @param volumeId       the volume's id
 * @param id             the snapshot's number, unique within the volume (1 and up)
 * @param name           1-64 characters of {@code [A-Za-z0-9._-]}, starting with a letter or digit
 * @param createdMs      when it was taken, ms since the epoch (the node's clock)
 * @param sizeBytes      the volume's size when it was taken
 * @param exclusiveBytes bytes only this snapshot holds: what deleting it frees (a multiple of the cluster size)
 */
public record SnapshotInfo(String volumeId, long id, String name, long createdMs, long sizeBytes,
                           long exclusiveBytes) {
}
