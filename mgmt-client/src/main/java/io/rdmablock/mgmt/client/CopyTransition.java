package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/copies/{nodeId}/syncing} and {@code .../in-sync}: the primary moves a copy
 * through resync (docs/resync.md).
 *
 * @param epoch    the volume epoch the primary works under, &gt;= 1; the change applies only if it is still current
 * @param reporter node id of the primary asking, {@link Limits#NAME_PATTERN}
 */
public record CopyTransition(long epoch, String reporter) {
}
