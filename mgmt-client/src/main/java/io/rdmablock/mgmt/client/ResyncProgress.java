package io.rdmablock.mgmt.client;

/**
 * One resync the primary runs, as it reports it in a heartbeat ({@link VolumeReport#resyncs()}), docs/resync.md.
 *
 * @param nodeId         node holding the copy being resynced (its state is {@code syncing})
 * @param full           true when every region is copied (no bitmap could prove what the copy missed), false when only
 *                       the regions of the primary's missed-regions bitmap are
 * @param syncedBytes    bytes copied so far, 0..totalBytes
 * @param totalBytes     bytes this resync copies: the marked regions' bytes (incremental) or the volume size (full)
 * @param bytesPerSecond copy rate over the last few seconds, bytes/s, &gt;= 0 (0 = not known yet)
 */
public record ResyncProgress(String nodeId, boolean full, long syncedBytes, long totalBytes, long bytesPerSecond) {
}
