package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/promote}: an operator makes the copy on {@code nodeId} the primary
 * (docs/failover.md, "Promotion").
 *
 * @param nodeId         the node whose copy becomes primary, {@link Limits#NAME_PATTERN}
 * @param acceptDataLoss must be true when that copy is not in sync: writes acknowledged after it went stale are lost
 *                       (every other copy becomes stale too)
 */
public record PromoteRequest(String nodeId, boolean acceptDataLoss) {
}
