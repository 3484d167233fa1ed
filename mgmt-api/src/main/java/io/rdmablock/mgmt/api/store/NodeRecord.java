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
 */
public record NodeRecord(
        String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, boolean draining,
        long registeredAtMs, int ordinal) {

    /** A record without an ordinal (as written before failover). */
    public NodeRecord(String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, boolean draining,
                      long registeredAtMs) {
        this(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, 0);
    }

    /** @return a copy with draining set */
    public NodeRecord drained() {
        return withDraining(true);
    }

    /** @return a copy with draining as given */
    public NodeRecord withDraining(boolean draining) {
        return new NodeRecord(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs, ordinal);
    }
}
