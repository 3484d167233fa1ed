package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * One volume as a node reports it in a heartbeat.
 *
 * @param id             volume id (from the desired state)
 * @param sizeBytes      size the node holds now
 * @param state          {@link VolumeState#READY} once the node serves it at sizeBytes;
 *                       {@link VolumeState#CREATING} while it is being made or grown
 * @param connectedHosts host NQNs with a live controller on this volume
 */
public record VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts) {
    public VolumeReport {
        connectedHosts = connectedHosts == null ? List.of() : List.copyOf(connectedHosts);
    }
}
