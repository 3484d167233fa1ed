package io.rdmablock.mgmt.api.store;

/**
 * A storage node as stored. Liveness (last heartbeat) and reported free capacity are runtime state kept by the
 * cluster service, not stored: after a restart every node is down until it heartbeats again.
 *
 * @param nodeId         unique id (the store key)
 * @param fabricAddress  {@code host:port}
 * @param metricsUrl     Prometheus URL or empty
 * @param capacityBytes  capacity for volumes
 * @param draining       true once drained
 * @param registeredAtMs first registration, ms since the epoch
 * @param ordinal        1..62, the node's controller-id range ({@code ordinal * 1024 ..}), given at its first
 *                       registration and kept across re-registrations; 0 in records written before (a new one is
 *                       given at the next registration)
 * @param nodeKey        the node key, base64 of 32 random bytes ({@code NodeLinkKeys}, docs/authentication.md, "Node
 *                       identities"), made at the first registration, kept across re-registrations, changed only by
 *                       a rotation; null in records written before node keys (one is made at the node's next
 *                       registration or heartbeat). A secret: never in {@link #toString}, a REST answer other than
 *                       the node's own heartbeat answer, nor a log line
 * @param credentialHash lowercase hex SHA-256 of the node's credential (docs/authentication.md, "Credentials and
 *                       scopes"; the credential itself is never stored), set at each registration with the cluster
 *                       token; null in records written before node credentials (then only the cluster token acts
 *                       for the node until its next such registration)
 * @param background     the node's background budget bounds set from the management plane (docs/qos.md, "Background
 *                       budget"); null = the node's start-up values (and in records written before)
 */
public record NodeRecord(
        String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, boolean draining,
        long registeredAtMs, int ordinal, String nodeKey, String credentialHash,
        io.rdmablock.mgmt.client.NodeBackground background) {

    /** A record without a background budget setting (the node's start-up values). */
    public NodeRecord(String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, boolean draining,
                      long registeredAtMs, int ordinal, String nodeKey, String credentialHash) {
        this(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, ordinal, nodeKey,
                credentialHash, null);
    }

    /** @return a copy with draining set */
    public NodeRecord drained() {
        return withDraining(true);
    }

    /** @return a copy with draining as given */
    public NodeRecord withDraining(boolean draining) {
        return new NodeRecord(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, ordinal,
                nodeKey, credentialHash, background);
    }

    /** @return a copy with the background budget bounds as given (null: the node's start-up values) */
    public NodeRecord withBackground(io.rdmablock.mgmt.client.NodeBackground bounds) {
        return new NodeRecord(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, ordinal,
                nodeKey, credentialHash, bounds);
    }

    /** @return a copy with the node key as given (base64 of 32 bytes) */
    public NodeRecord withNodeKey(String key) {
        return new NodeRecord(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, ordinal, key,
                credentialHash, background);
    }

    @Override
    public String toString() { // never the node key
        return "NodeRecord[nodeId=" + nodeId + ", fabricAddress=" + fabricAddress + ", metricsUrl=" + metricsUrl
                + ", capacityBytes=" + capacityBytes + ", draining=" + draining + ", registeredAtMs=" + registeredAtMs
                + ", ordinal=" + ordinal + ", nodeKey=" + (nodeKey == null ? "none" : "set") + ", credential="
                + (credentialHash == null ? "none" : "set") + ", background=" + background + "]";
    }
}
