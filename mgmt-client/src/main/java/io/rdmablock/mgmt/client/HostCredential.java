package io.rdmablock.mgmt.client;

/**
 * A host credential as the management server lists it ({@code GET /v1/host-credentials}; docs/authentication.md,
 * "Credentials and scopes"). Never carries the credential: it is answered once, when issued
 * ({@link IssuedHostCredential}).
 *
 * @param id        the credential's id, {@code [a-z0-9][a-z0-9._-]{0,62}}: the middle part of
 *                  {@code rbh1:<id>:<secret>}, and what {@code DELETE /v1/host-credentials/{id}} revokes
 * @param hostNqn   the one host NQN it acts for
 * @param createdAt time of issue, ISO-8601 UTC
 */
public record HostCredential(String id, String hostNqn, String createdAt) {
}
