package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.HostCredentialRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.client.HostCredential;
import io.rdmablock.mgmt.client.IssuedHostCredential;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.ProblemTypes;

import java.time.Instant;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Issue, listing and revocation of host credentials ({@code /v1/host-credentials}; {@link HostCredentials},
 * docs/authentication.md, "Credentials and scopes") over the {@link MetadataStore}: a record per credential, keyed by
 * its id, holding the host NQN and the credential's SHA-256, never the credential. Thread-safe (no state besides the
 * store).
 */
public final class HostCredentialRegistry {
    /** Ids tried for one issue before giving up (a 64-bit random id is taken by chance practically never). */
    static final int MAX_ATTEMPTS = 4;
    private final MetadataStore store;
    private final LongSupplier wallMs;

    HostCredentialRegistry(MetadataStore store, LongSupplier wallMs) {
        this.store = store;
        this.wallMs = wallMs;
    }

    /**
     * Issues a new credential for {@code hostNqn} (earlier ones for the same NQN stay valid until revoked).
     *
     * @return the credential with its record; the only time the credential leaves the server
     * @throws ApiException 400 validation naming {@code hostNqn} and its bounds
     */
    public IssuedHostCredential issue(String hostNqn) {
        ApiException.check(() -> Limits.checkHostNqn("hostNqn", hostNqn));
        long now = wallMs.getAsLong();
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            String id = HostCredentials.newId();
            String credential = HostCredentials.issue(id);
            if (store.createHostCredential(new HostCredentialRecord(id, hostNqn, NodeCredentials.hash(credential),
                    now))) {
                return new IssuedHostCredential(id, hostNqn, Instant.ofEpochMilli(now).toString(), credential);
            }
        }
        throw new IllegalStateException("no free host credential id after " + MAX_ATTEMPTS + " attempts");
    }

    /** @return every host credential, ordered by id (never a credential nor its hash) */
    public List<HostCredential> list() {
        return store.hostCredentials().stream().map(r -> new HostCredential(r.id(), r.hostNqn(),
                Instant.ofEpochMilli(r.createdAtMs()).toString())).toList();
    }

    /**
     * Revokes the credential: from the next request on it is 401 invalid_token.
     *
     * @throws ApiException 400 validation naming {@code id}; 404 {@link ProblemTypes#NOT_FOUND} when no credential
     *                      has that id
     */
    public void revoke(String id) {
        ApiException.check(() -> Limits.checkName("id", id));
        if (!store.removeHostCredential(id)) {
            throw new ApiException(404, ProblemTypes.NOT_FOUND, "Not found", "no host credential with id " + id
                    + " (GET /v1/host-credentials lists them)");
        }
    }
}
