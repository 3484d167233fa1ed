package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * Answer to a heartbeat: the desired state of that node.
 *
 * @param draining true when an operator drained the node (it keeps serving, gets no new volumes)
 * @param volumes  every volume the node must hold (or delete, state {@code deleting}); a volume the node holds
 *                 but that is not listed here is unknown to the cluster: the node keeps its data (data is
 *                 deleted only on an explicit {@code deleting}), does not export it, and logs it as an orphan
 * @param leaseMs  the primary lease (docs/failover.md): a primary serves host I/O until its heartbeat's send time +
 *                 leaseMs - margin (its own monotonic clock); 0 = no lease
 * @param hosts    every host of the cluster with a DH-HMAC-CHAP secret ({@code /v1/hosts}), ordered by host NQN,
 *                 secrets included (docs/authentication.md, "Managed secrets"): the node requires each of them to
 *                 authenticate on every volume subsystem; empty = none
 * @param peerLeaseMaxMs how long after this heartbeat's send time the node's in-sync (or syncing) secondary copies may
 *                 go on granting their primary peer leases while no later answer comes (docs/failover.md, "Peer
 *                 lease"), ms; 0 = no peer leases
 * @param nodeKey  this node's own node key, base64 of 32 bytes (docs/authentication.md, "Node identities"): the node
 *                 derives from it the secrets every peer node must prove when it connects as a host
 *                 ({@code NodeLinkKeys}); null = none handed out (then no peer node is admitted to a secondary
 *                 copy)
 * @param links    the secrets of this node's links to the peer nodes that share a volume with it, by peer node id
 *                 ({@link NodeLink}); empty when none
 * @param secretsWithheld null when the answer carries the node's secret material as described above; else why the
 *                 server left {@code hosts}, {@code nodeKey} and {@code links} out although the caller is the node
 *                 itself (docs/authentication.md, "Secrets only over TLS"): the management server has no TLS and
 *                 the request came over a non-loopback address, e.g. {@code "the management server has no TLS
 *                 (--tls-cert) and node n1 connects over 192.0.2.7, not loopback: ..."}. Then {@code hosts} and
 *                 {@code links} are empty and {@code nodeKey} is null, and they mean "not handed out", not "none"
 * @param background the node's background budget bounds (docs/qos.md, "Background budget"): as set with
 *                 {@code PATCH /v1/nodes/{nodeId}}, or {@link NodeBackground#STARTUP} (0, 0) for the node's start-up
 *                 values; null from older servers (then the node keeps its bounds and reports none)
 */
public record HeartbeatResponse(boolean draining, List<DesiredVolume> volumes, long leaseMs, List<HostSecret> hosts,
                                long peerLeaseMaxMs, String nodeKey, List<NodeLink> links, String secretsWithheld,
                                NodeBackground background) {
    public HeartbeatResponse {
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
        leaseMs = Math.max(0, leaseMs);
        hosts = hosts == null ? List.of() : List.copyOf(hosts);
        peerLeaseMaxMs = Math.max(0, peerLeaseMaxMs);
        links = links == null ? List.of() : List.copyOf(links);
    }

    /**
     * An answer with only its volumes and lease: no managed host secrets, no peer leases, no node key or links,
     * nothing withheld; add the rest with the {@code with...} methods.
     */
    public static HeartbeatResponse of(boolean draining, List<DesiredVolume> volumes, long leaseMs) {
        return new HeartbeatResponse(draining, volumes, leaseMs, List.of(), 0, null, List.of(), null, null);
    }

    /** This answer with {@code hosts} (managed host secrets) set. */
    public HeartbeatResponse withHosts(List<HostSecret> hostSecrets) {
        return new HeartbeatResponse(draining, volumes, leaseMs, hostSecrets, peerLeaseMaxMs, nodeKey, links,
                secretsWithheld, background);
    }

    /** This answer with {@code peerLeaseMaxMs} set. */
    public HeartbeatResponse withPeerLeaseMaxMs(long ms) {
        return new HeartbeatResponse(draining, volumes, leaseMs, hosts, ms, nodeKey, links, secretsWithheld,
                background);
    }

    /** This answer with {@code nodeKey} and {@code links} set. */
    public HeartbeatResponse withNodeKeys(String key, List<NodeLink> nodeLinks) {
        return new HeartbeatResponse(draining, volumes, leaseMs, hosts, peerLeaseMaxMs, key, nodeLinks,
                secretsWithheld, background);
    }

    /**
     * This answer without any secret material ({@code nodeKey}, {@code links}, the secrets of {@code hosts}) and
     * saying why. The host NQNs stay, with null secrets: the node then refuses those hosts (they must authenticate
     * and cannot) instead of admitting them unauthenticated.
     *
     * @param reason why they are withheld, non-empty
     * @throws IllegalArgumentException when {@code reason} is null or empty
     */
    public HeartbeatResponse withSecretsWithheld(String reason) {
        if (reason == null || reason.isEmpty()) {
            throw new IllegalArgumentException("invalid reason: reason=" + reason + ", min length=1");
        }
        List<HostSecret> names = hosts.stream().map(h -> new HostSecret(h.hostNqn(), null, null, h.revision()))
                .toList();
        return new HeartbeatResponse(draining, volumes, leaseMs, names, peerLeaseMaxMs, null, List.of(), reason,
                background);
    }

    /** This answer with {@code background} set ({@link NodeBackground#STARTUP} for the node's start-up values). */
    public HeartbeatResponse withBackground(NodeBackground bounds) {
        return new HeartbeatResponse(draining, volumes, leaseMs, hosts, peerLeaseMaxMs, nodeKey, links,
                secretsWithheld, bounds);
    }

    @Override
    public String toString() { // never the secrets
        return "HeartbeatResponse[draining=" + draining + ", volumes=" + volumes + ", leaseMs=" + leaseMs
                + ", hosts=" + hosts + ", peerLeaseMaxMs=" + peerLeaseMaxMs + ", nodeKey=" + (nodeKey == null ? "none" : "set")
                + ", links=" + links + ", background=" + background
                + (secretsWithheld == null ? "" : ", secretsWithheld=" + secretsWithheld) + "]";
    }
}
