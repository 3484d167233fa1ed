package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/copies/{nodeId}/stale}: the primary drops a secondary from the in-sync set.
 *
 * @param epoch    the volume epoch the primary works under, &gt;= 1; the change applies only if it is still current
 * @param reporter node id of the primary making the report, {@link Limits#NAME_PATTERN}
 */
public record MarkCopyStaleRequest(long epoch, String reporter) {
}
