package io.rdmablock.mgmt.client;

/**
 * One copy of a volume as the management server answers it (an entry of {@link Volume#copies()}).
 *
 * @param nodeId        node holding the copy
 * @param role          primary or secondary
 * @param state         in_sync, stale or syncing
 * @param fabricAddress that node's fabric listener, {@code "host:port"} (empty when the node is no longer registered)
 */
public record VolumeCopy(String nodeId, CopyRole role, CopyState state, String fabricAddress) {
}
