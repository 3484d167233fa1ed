package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * Body of {@code POST /v1/volumes}. Bounds: {@link Limits}.
 *
 * @param name         {@link Limits#NAME_PATTERN}
 * @param sizeBytes    &gt; 0, a multiple of {@link Limits#SIZE_ALIGNMENT_BYTES}, at most {@link Limits#MAX_SIZE_BYTES}
 * @param lbaSize      512 or 4096
 * @param replicas     copies on distinct nodes, {@link Limits#MIN_REPLICAS}..{@link Limits#MAX_REPLICAS}
 * @param minInSync    fewest in-sync copies with which writes are accepted, 1..replicas; on the wire it may be
 *                     absent, then the server takes {@link Limits#defaultMinInSync(int)}
 * @param allowedHosts host NQNs (at most {@link Limits#MAX_ALLOWED_HOSTS}), or {@code ["*"]}
 *                     ({@link Limits#ANY_HOST}) for any host; empty (the default) admits no host
 * @param requireAuth  true: only hosts with a DH-HMAC-CHAP secret ({@code PUT /v1/hosts/{hostNqn}}) may connect;
 *                     absent on the wire = false
 * @param qos          the volume's limits ({@link VolumeQos}, bounds there); absent = {@link VolumeQos#NONE}
 */
public record CreateVolumeRequest(String name, long sizeBytes, int lbaSize, int replicas, int minInSync,
                                  List<String> allowedHosts, boolean requireAuth, VolumeQos qos) {
    public CreateVolumeRequest {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        qos = qos == null ? VolumeQos.NONE : qos;
    }

    /** As the canonical constructor, without limits. */
    public CreateVolumeRequest(String name, long sizeBytes, int lbaSize, int replicas, int minInSync,
                               List<String> allowedHosts, boolean requireAuth) {
        this(name, sizeBytes, lbaSize, replicas, minInSync, allowedHosts, requireAuth, VolumeQos.NONE);
    }

    /** @return this request with the limits {@code limits} (null: none) */
    public CreateVolumeRequest withQos(VolumeQos limits) {
        return new CreateVolumeRequest(name, sizeBytes, lbaSize, replicas, minInSync, allowedHosts, requireAuth,
                limits);
    }

    /** As the canonical constructor, without authentication required. */
    public CreateVolumeRequest(String name, long sizeBytes, int lbaSize, int replicas, int minInSync,
                               List<String> allowedHosts) {
        this(name, sizeBytes, lbaSize, replicas, minInSync, allowedHosts, false);
    }

    /** @return this request with {@code requireAuth} set to {@code on} */
    public CreateVolumeRequest withRequireAuth(boolean on) {
        return new CreateVolumeRequest(name, sizeBytes, lbaSize, replicas, minInSync, allowedHosts, on, qos);
    }

    /** @return this request admitting exactly {@code hosts} ({@code ["*"]}: any host) */
    public CreateVolumeRequest withAllowedHosts(List<String> hosts) {
        return new CreateVolumeRequest(name, sizeBytes, lbaSize, replicas, minInSync, hosts, requireAuth, qos);
    }

    /** @return this request admitting any host ({@code ["*"]}, {@link Limits#ANY_HOST}) */
    public CreateVolumeRequest withAnyHost() {
        return withAllowedHosts(List.of(Limits.ANY_HOST));
    }

    /** @return a request with lbaSize 4096, 1 replica, admitting no host yet */
    public static CreateVolumeRequest of(String name, long sizeBytes) {
        return replicated(name, sizeBytes, 1);
    }

    /** @return a request with lbaSize 4096, {@code replicas} copies, the default minInSync, admitting no host yet */
    public static CreateVolumeRequest replicated(String name, long sizeBytes, int replicas) {
        return new CreateVolumeRequest(name, sizeBytes, 4096, replicas, Limits.defaultMinInSync(replicas), List.of());
    }
}
