package io.rdmablock.mgmt.client;

/**
 * A secondary copy's report that its primary went silent (docs/failover.md, "Promotion: a secondary's report"): the
 * copy is {@code in_sync} or {@code syncing}, so the primary must renew its peer lease there every {@code leaseMs / 4}
 * (Peer Lease, C1h), and none came for {@code silentMs} &gt;= the lease. The primary can then serve on no peer lease
 * granted by this copy; with its management lease lapsed too it serves nothing, and the management plane may promote
 * (the same second signal as a host's {@code POST .../unreachable}). Carried in the heartbeat
 * ({@link VolumeReport#primarySilence()}) while the silence lasts.
 *
 * @param nodeId   the primary's node, as the copy's last heartbeat answer named it
 * @param epoch    the volume's epoch in that answer, &gt;= 1
 * @param silentMs how long no Peer Lease request came from that node, ms (or since the copy learned of it), &gt;= 0
 */
public record PrimarySilence(String nodeId, long epoch, long silentMs) {
}
