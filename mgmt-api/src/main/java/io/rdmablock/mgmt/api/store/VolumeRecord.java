package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.VolumeState;

import java.util.List;

/**
 * A volume as stored (the durable part of {@link io.rdmablock.mgmt.client.Volume}; the fabric address is read
 * from the node at answer time).
 *
 * @param id             UUID
 * @param name           unique name (the store key)
 * @param sizeBytes      desired size
 * @param lbaSize        512 or 4096
 * @param replicas       replication factor
 * @param allowedHosts   host NQNs; empty = any
 * @param nodeId         node it is placed on
 * @param state          lifecycle state
 * @param connectedHosts host NQNs connected, as last reported
 * @param createdAtMs    creation time, ms since the epoch
 * @param provisioned    its node has reported it (it holds data from then on): a node that no longer holds it lost
 *                       it and must not create it again empty; false in records written before this field existed
 *                       (a {@code ready} state then means the same, see {@link #holdsData()})
 */
public record VolumeRecord(
        String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
        String nodeId, VolumeState state, List<String> connectedHosts, long createdAtMs, boolean provisioned) {
    public VolumeRecord {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        connectedHosts = connectedHosts == null ? List.of() : List.copyOf(connectedHosts);
    }

    /** @return a copy with another size and state */
    public VolumeRecord withSize(long newSizeBytes, VolumeState newState) {
        return new VolumeRecord(id, name, newSizeBytes, lbaSize, replicas, allowedHosts, nodeId, newState,
                connectedHosts, createdAtMs, provisioned);
    }

    /** @return a copy marked provisioned (its node has reported holding it) */
    public VolumeRecord withProvisioned() {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, true);
    }

    /** True when the volume's node once held it: {@link #provisioned}, or a {@code ready} record of older servers. */
    public boolean holdsData() {
        return provisioned || state == VolumeState.READY;
    }

    /** @return a copy with another state */
    public VolumeRecord withState(VolumeState newState) {
        return withSize(sizeBytes, newState);
    }

    /** @return a copy with other connected hosts */
    public VolumeRecord withConnectedHosts(List<String> hosts) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, hosts,
                createdAtMs, provisioned);
    }
}
