package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * Body of {@code POST /v1/nodes/{nodeId}/heartbeat}.
 *
 * @param freeBytes capacity not yet promised to volumes
 * @param volumes   every volume the node holds now
 */
public record HeartbeatRequest(long freeBytes, List<VolumeReport> volumes) {
    public HeartbeatRequest {
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
    }
}
