package io.rdmablock.mgmt.client;

/**
 * Body of {@code PUT /v1/hosts/{hostNqn}}. {@link #toString} never shows a secret.
 *
 * @param dhchapSecret     the host's secret, {@code DHHC-1:hh:base64:} (nvme-cli {@code gen-dhchap-key}); required
 * @param dhchapCtrlSecret the controller's secret (bidirectional authentication), same form; null = none
 */
public record SetHostRequest(String dhchapSecret, String dhchapCtrlSecret) {
    @Override
    public String toString() {
        return "SetHostRequest[bidirectional=" + (dhchapCtrlSecret != null) + "]";
    }
}
