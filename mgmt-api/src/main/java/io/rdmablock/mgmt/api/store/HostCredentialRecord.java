package io.rdmablock.mgmt.api.store;

/**
 * A host credential as stored (store key: its id; docs/authentication.md, "Credentials and scopes"). The credential
 * itself ({@code rbh1:<id>:<secret>}) is never stored, only its SHA-256.
 *
 * @param id             the credential's id, {@code [a-z0-9][a-z0-9._-]{0,62}} (the key; the middle part of the
 *                       credential)
 * @param hostNqn        the one host NQN the credential acts for
 * @param credentialHash lowercase hex SHA-256 of the credential's UTF-8 bytes
 * @param createdAtMs    time of issue, ms since the epoch
 */
public record HostCredentialRecord(String id, String hostNqn, String credentialHash, long createdAtMs) {
    @Override
    public String toString() { // never the hash: it identifies the credential
        return "HostCredentialRecord[id=" + id + ", hostNqn=" + hostNqn + ", createdAtMs=" + createdAtMs + "]";
    }
}
