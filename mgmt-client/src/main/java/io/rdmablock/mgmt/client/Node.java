package io.rdmablock.mgmt.client;

/**
 * A storage node as the management server sees it ({@code GET /v1/nodes}).
 *
 * @param nodeId        unique node id chosen by the node, {@link Limits#NAME_PATTERN}
 * @param fabricAddress fabric listener, {@code "host:port"}
 * @param metricsUrl    Prometheus scrape URL of the node (may be empty)
 * @param capacityBytes total capacity for volumes
 * @param freeBytes     capacity not yet promised to volumes, as last reported
 * @param state         up / down (no heartbeat within the timeout) / draining
 * @param lastHeartbeat time of the last registration or heartbeat, ISO-8601 UTC
 */
public record Node(
        String nodeId,
        String fabricAddress,
        String metricsUrl,
        long capacityBytes,
        long freeBytes,
        NodeState state,
        String lastHeartbeat) {

    /** Prefix of every node host NQN; the node id follows. */
    public static final String HOSTNQN_PREFIX = "nqn.2026-11.io.rdmablock:node:";

    /**
     * @return the host NQN a storage node uses when it connects to a peer node (a primary to its secondaries),
     *         {@code nqn.2026-11.io.rdmablock:node:<nodeId>}; a secondary admits only its primary's
     */
    public static String hostnqnOf(String nodeId) {
        return HOSTNQN_PREFIX + nodeId;
    }
}
