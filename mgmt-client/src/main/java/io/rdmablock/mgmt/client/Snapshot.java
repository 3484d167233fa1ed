package io.rdmablock.mgmt.client;

/**
 * A snapshot of a volume as the management API shows it ({@code GET /v1/volumes/{name}/snapshots}).
 *
 * @param volume         the volume's name
 * @param name           1-64 characters of {@code [A-Za-z0-9._-]}, starting with a letter or digit; unique per volume
 * @param id             number given by the management server, unique and never reused within the volume (1 and up)
 * @param createdAtMs    when the request was accepted, ms since the epoch (the management server's clock)
 * @param epoch          the volume's epoch when it was requested (docs/replication.md)
 * @param state          {@link SnapshotState}
 * @param sizeBytes      the volume's size when it was taken (0 until the primary reported it)
 * @param exclusiveBytes bytes only this snapshot holds, what deleting it frees, as the primary last reported
 */
public record Snapshot(String volume, String name, long id, long createdAtMs, long epoch, SnapshotState state,
                       long sizeBytes, long exclusiveBytes) {
}
