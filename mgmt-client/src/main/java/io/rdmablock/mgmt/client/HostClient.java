package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.type.TypeReference;

import java.util.List;

import static io.rdmablock.mgmt.client.MgmtTransport.segment;

/**
 * The host calls of the management REST API: managed DH-HMAC-CHAP secrets ({@code /v1/hosts}; answers never carry a
 * secret) and host credentials ({@code /v1/host-credentials}; docs/authentication.md, "Credentials and scopes"), on
 * the {@link MgmtClient} that made it ({@link MgmtClient#hosts()}). Thread-safe.
 */
public final class HostClient {
    private static final TypeReference<List<Host>> HOST_LIST = new TypeReference<>() { };
    private static final TypeReference<List<HostCredential>> HOST_CREDENTIAL_LIST = new TypeReference<>() { };

    private final MgmtTransport t;

    HostClient(MgmtTransport transport) {
        this.t = transport;
    }

    /** {@code PUT /v1/hosts/{hostNqn}}: sets the host's secrets (201 new, 200 replaced). Errors 400, 401, 403. */
    public Host setHost(String hostNqn, SetHostRequest request) {
        return t.send("PUT", "/v1/hosts/" + segment(hostNqn), request, Host.class);
    }

    /** {@code GET /v1/hosts}: every host with a secret, ordered by NQN. */
    public List<Host> listHosts() {
        return t.send("GET", "/v1/hosts", null, HOST_LIST);
    }

    /** {@code GET /v1/hosts/{hostNqn}}. Errors 400, 404 {@link ProblemTypes#HOST_NOT_FOUND}. */
    public Host getHost(String hostNqn) {
        return t.send("GET", "/v1/hosts/" + segment(hostNqn), null, Host.class);
    }

    /** {@code DELETE /v1/hosts/{hostNqn}}: 204. Errors 400, 401, 403, 404. */
    public void removeHost(String hostNqn) {
        t.exchange("DELETE", "/v1/hosts/" + segment(hostNqn), null);
    }

    /**
     * {@code POST /v1/host-credentials}: issues a host credential for {@code hostNqn} (201); the answer is the only
     * time the credential is shown. Errors 400 (the NQN), 401, 403.
     */
    public IssuedHostCredential issueHostCredential(String hostNqn) {
        return t.send("POST", "/v1/host-credentials", new IssueHostCredentialRequest(hostNqn),
                IssuedHostCredential.class);
    }

    /** {@code GET /v1/host-credentials}: every host credential, ordered by id (never the credentials). */
    public List<HostCredential> listHostCredentials() {
        return t.send("GET", "/v1/host-credentials", null, HOST_CREDENTIAL_LIST);
    }

    /** {@code DELETE /v1/host-credentials/{id}}: revokes it (204). Errors 400, 401, 403, 404. */
    public void revokeHostCredential(String id) {
        t.exchange("DELETE", "/v1/host-credentials/" + segment(id), null);
    }
}
