package io.rdmablock.mgmt.client;

/**
 * The DH-HMAC-CHAP secrets a node uses toward one peer node it may connect to as a host (replication, resync,
 * verify, peer leases), as the heartbeat answer carries them ({@link HeartbeatResponse#links()}; derivation in
 * {@code io.rdmablock.nvme.auth.NodeLinkKeys}, docs/authentication.md, "Node identities"). Only ever sent to
 * the node whose link it is; {@link #toString} never shows a secret.
 *
 * @param nodeId           the peer node (the target of the link)
 * @param dhchapSecret     the host secret this node proves to the peer, {@code DHHC-1:01:...:}
 * @param dhchapCtrlSecret the controller secret the peer proves back (bidirectional), {@code DHHC-1:01:...:}
 */
public record NodeLink(String nodeId, String dhchapSecret, String dhchapCtrlSecret) {
    @Override
    public String toString() {
        return "NodeLink[nodeId=" + nodeId + "]";
    }
}
