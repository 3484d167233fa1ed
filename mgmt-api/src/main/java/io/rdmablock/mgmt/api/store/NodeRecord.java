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
 */
public record NodeRecord(
        String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, boolean draining,
        long registeredAtMs) {

    /** @return a copy with draining set */
    public NodeRecord drained() {
        return withDraining(true);
    }

    /** @return a copy with draining as given */
    public NodeRecord withDraining(boolean draining) {
        return new NodeRecord(nodeId, fabricAddress, metricsUrl, capacityBytes, draining, registeredAtMs);
    }
}
