package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/copies/{nodeId}/unreachable}: a host or a node reports that the copy on
 * {@code nodeId} (normally the primary) does not answer it. One of the two signals before a primary is declared lost
 * (the other: no heartbeat within the lease); docs/failover.md.
 *
 * @param epoch    the volume epoch the reporter last saw, &gt;= 0 (0: unknown); a report about an older epoch is ignored
 * @param reporter host NQN or node id of the reporter, 1..223 characters
 */
public record UnreachableReport(long epoch, String reporter) {
}
