package io.rdmablock.mgmt.client;

/**
 * One copy of a volume as the management server answers it (an entry of {@link Volume#copies()}).
 *
 * @param nodeId        node holding the copy
 * @param role          primary or secondary
 * @param state         in_sync, stale or syncing
 * @param fabricAddress that node's fabric listener, {@code "host:port"} (empty when the node is no longer registered)
 * @param syncedBytes   while {@code syncing}: bytes copied so far, as the primary last reported; null otherwise
 * @param totalBytes    while {@code syncing}: bytes the resync copies (marked regions, or the volume size when full);
 *                      null otherwise
 * @param etaSeconds    while {@code syncing}: estimated seconds left at the reported rate; null when not syncing or the
 *                      rate is not known yet
 */
public record VolumeCopy(String nodeId, CopyRole role, CopyState state, String fabricAddress, Long syncedBytes,
                         Long totalBytes, Long etaSeconds) {
    /** A copy with no resync progress (not syncing). */
    public VolumeCopy(String nodeId, CopyRole role, CopyState state, String fabricAddress) {
        this(nodeId, role, state, fabricAddress, null, null, null);
    }
}
