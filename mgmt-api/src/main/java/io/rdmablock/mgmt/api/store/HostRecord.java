package io.rdmablock.mgmt.api.store;

/**
 * A host that must pass DH-HMAC-CHAP, as stored (store key: its NQN). The secrets are in their
 * {@code DHHC-1:hh:base64:} text form here; the stores seal them with AES-256-GCM when the management server has a
 * {@code --secret-key-file} ({@link SecretCipher}), else store them <em>in clear</em>: whoever can read the metadata
 * store (the RocksDB directory, the etcd keys) can read them; docs/authentication.md, "Secrets at rest".
 * {@link #toString} never shows them.
 *
 * @param hostNqn          the host NQN (the key)
 * @param dhchapSecret     the host's secret, validated ({@code io.rdmablock.nvme.auth.DhchapSecret})
 * @param dhchapCtrlSecret the controller's secret (bidirectional), or null
 * @param updatedAtMs      time of the last write, ms since the epoch
 */
public record HostRecord(String hostNqn, String dhchapSecret, String dhchapCtrlSecret, long updatedAtMs) {
    @Override
    public String toString() {
        return "HostRecord[hostNqn=" + hostNqn + ", bidirectional=" + (dhchapCtrlSecret != null) + ", updatedAtMs="
                + updatedAtMs + "]";
    }
}
