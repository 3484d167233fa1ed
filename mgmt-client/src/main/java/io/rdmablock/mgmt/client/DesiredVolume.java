package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * One volume a node must hold, as the heartbeat answer says.
 *
 * @param id           volume id (the node's key for its store)
 * @param name         volume name
 * @param sizeBytes    desired size; the node grows to it (never shrinks)
 * @param lbaSize      512 or 4096
 * @param allowedHosts host NQNs allowed to connect; empty = any host
 * @param subnqn       subsystem NQN to export it under (nsid 1)
 * @param state        {@link VolumeState#DELETING}: remove it and stop reporting it; otherwise hold and serve it
 * @param provisioned  the node has reported holding it before: if the node does not hold it now, its data is lost
 *                     (data directory replaced or wiped) and it must not be created again empty; false (or absent,
 *                     from older servers) = create it when missing
 */
public record DesiredVolume(
        String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
        VolumeState state, boolean provisioned) {
    public DesiredVolume {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
    }
}
