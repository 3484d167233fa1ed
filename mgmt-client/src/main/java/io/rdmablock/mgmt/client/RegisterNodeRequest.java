package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/nodes}. Registering again with the same nodeId updates the node (idempotent).
 *
 * @param nodeId        {@link Limits#NAME_PATTERN}
 * @param fabricAddress fabric listener, {@code "host:port"}, port 1..65535
 * @param metricsUrl    Prometheus scrape URL (may be empty)
 * @param capacityBytes total capacity for volumes, &gt; 0
 * @param freeBytes     0..capacityBytes
 */
public record RegisterNodeRequest(
        String nodeId, String fabricAddress, String metricsUrl, long capacityBytes, long freeBytes) {
}
