package io.rdmablock.mgmt.client;

/**
 * One host's DH-HMAC-CHAP secrets as the heartbeat answer carries them to a node ({@link HeartbeatResponse#hosts()};
 * docs/authentication.md, "Managed secrets"). The values are the secrets themselves, in the {@code DHHC-1:hh:...:}
 * text form of nvme-cli {@code gen-dhchap-key}: this record is only ever sent to a node over the node channel (TLS
 * protects it when the management server is configured with TLS), never answered on the REST routes for hosts, and
 * {@link #toString} never shows a secret.
 *
 * @param hostNqn          the host NQN ({@link Limits#NQN_PATTERN})
 * @param dhchapSecret     the host's secret, {@code DHHC-1:...}; null when the server withheld it
 *                         ({@link HeartbeatResponse#secretsWithheld()}: the host has one the node is not given)
 * @param dhchapCtrlSecret the controller's secret for bidirectional authentication, or null (unidirectional)
 * @param revision         the metadata store's revision of the host record, &gt;= 1 (changes with every write)
 */
public record HostSecret(String hostNqn, String dhchapSecret, String dhchapCtrlSecret, long revision) {
    @Override
    public String toString() {
        return "HostSecret[hostNqn=" + hostNqn + ", bidirectional=" + (dhchapCtrlSecret != null) + ", revision="
                + revision + "]";
    }
}
