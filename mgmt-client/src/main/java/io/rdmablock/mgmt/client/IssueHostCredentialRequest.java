package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/host-credentials}.
 *
 * @param hostNqn the host NQN the credential acts for ({@link Limits#NQN_PATTERN}, at most
 *                {@link Limits#MAX_NQN_BYTES} bytes)
 */
public record IssueHostCredentialRequest(String hostNqn) {
}
