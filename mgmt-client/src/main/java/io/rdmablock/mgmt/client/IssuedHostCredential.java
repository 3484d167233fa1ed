package io.rdmablock.mgmt.client;

/**
 * The answer to {@code POST /v1/host-credentials}: the new host credential, the only time it is shown (the server
 * keeps its SHA-256 only). {@link #toString} never shows the credential.
 *
 * @param id         the credential's id ({@link HostCredential#id()})
 * @param hostNqn    the one host NQN it acts for
 * @param createdAt  time of issue, ISO-8601 UTC
 * @param credential {@code rbh1:<id>:<secret>} (secret: 32 random bytes, unpadded base64url, 43 characters): the
 *                   bearer token a host sends to read the volumes that admit its NQN and report their copies
 *                   unreachable, nothing else
 */
public record IssuedHostCredential(String id, String hostNqn, String createdAt, String credential) {
    @Override
    public String toString() {
        return "IssuedHostCredential[id=" + id + ", hostNqn=" + hostNqn + ", createdAt=" + createdAt + "]";
    }
}
