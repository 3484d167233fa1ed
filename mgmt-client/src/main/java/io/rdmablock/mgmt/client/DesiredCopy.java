package io.rdmablock.mgmt.client;

/**
 * One copy of a volume as the heartbeat answer lists it (an entry of {@link DesiredVolume#copies()}): what a node
 * needs to reach its peers and to know which peer may write to it.
 *
 * @param nodeId        node holding the copy
 * @param role          primary or secondary
 * @param state         in_sync, stale or syncing
 * @param fabricAddress that node's fabric listener, {@code "host:port"} (empty when the node is no longer registered)
 * @param hostnqn       that node's host NQN when it connects to a peer, {@link Node#hostnqnOf(String)}
 */
public record DesiredCopy(String nodeId, CopyRole role, CopyState state, String fabricAddress, String hostnqn) {
}
