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
 * @param ordinal       1..{@value #MAX_ORDINAL}, given at the first registration and stable after: the node's NVMe
 *                      controller ids are {@code ordinal * 1024 .. ordinal * 1024 + 1023} (docs/failover.md); 0 from
 *                      older servers (none)
 * @param background    the background budget bounds set for the node ({@code PATCH /v1/nodes/{nodeId}},
 *                      docs/qos.md); null (absent) = the node's start-up values
 * @param backgroundInEffect the node's background budget as in effect, as the node last reported it in a heartbeat;
 *                      null (absent) before a report reached this server, and from older nodes
 */
public record Node(
        String nodeId,
        String fabricAddress,
        String metricsUrl,
        long capacityBytes,
        long freeBytes,
        NodeState state,
        String lastHeartbeat,
        int ordinal,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        NodeBackground background,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        BackgroundInEffect backgroundInEffect) {

    /** Highest ordinal: 62 * 1024 + 1023 = 64511 stays below the reserved cntlids FFF0h..FFFFh. */
    public static final int MAX_ORDINAL = 62;
    /** Controller ids per node. */
    public static final int CNTLIDS_PER_NODE = 1024;

    /** A node with no background budget set nor reported. */
    public Node(String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, long freeBytes,
                NodeState state, String lastHeartbeat, int ordinal) {
        this(nodeId, fabricAddress, metricsUrl, capacityBytes, freeBytes, state, lastHeartbeat, ordinal, null, null);
    }

    /** A node without an ordinal (as from servers before failover). */
    public Node(String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, long freeBytes,
                NodeState state, String lastHeartbeat) {
        this(nodeId, fabricAddress, metricsUrl, capacityBytes, freeBytes, state, lastHeartbeat, 0);
    }

    /** @return the first controller id of a node with this ordinal ({@code ordinal * 1024}) */
    public static int cntlidMin(int ordinal) {
        return ordinal * CNTLIDS_PER_NODE;
    }

    /** @return the last controller id of a node with this ordinal ({@code ordinal * 1024 + 1023}) */
    public static int cntlidMax(int ordinal) {
        return ordinal * CNTLIDS_PER_NODE + CNTLIDS_PER_NODE - 1;
    }

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
