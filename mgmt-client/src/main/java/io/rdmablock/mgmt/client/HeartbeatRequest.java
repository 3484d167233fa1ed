package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * Body of {@code POST /v1/nodes/{nodeId}/heartbeat}.
 *
 * @param freeBytes  capacity not yet promised to volumes
 * @param volumes    every volume the node holds now
 * @param background the node's background budget in effect (docs/qos.md, "Background budget"); null (not sent) until
 *                   the node has had an answer with {@link HeartbeatResponse#background} (a server that knows it)
 */
public record HeartbeatRequest(long freeBytes, List<VolumeReport> volumes,
                               @com.fasterxml.jackson.annotation.JsonInclude(
                                       com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
                               BackgroundInEffect background) {
    public HeartbeatRequest {
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
    }

    /** A heartbeat without a background report. */
    public HeartbeatRequest(long freeBytes, List<VolumeReport> volumes) {
        this(freeBytes, volumes, null);
    }
}
