package io.rdmablock.mgmt.client;

/**
 * The answer to a node registration ({@code POST /v1/nodes}): the node, and the node credential the registration
 * issued (docs/authentication.md, "Credentials and scopes"). {@link #toString} never shows the credential.
 *
 * @param node       the node as registered
 * @param credential {@code rbn1:<nodeId>:<secret>}: the bearer token that acts as this node only, issued by a
 *                   registration with the cluster token (the node's previous one stops working); null when the node
 *                   registered with its own credential (which stays valid) or from servers before credentials
 */
public record NodeRegistration(Node node, String credential) {
    @Override
    public String toString() {
        return "NodeRegistration[node=" + node + ", credential=" + (credential == null ? "none" : "issued") + "]";
    }

    /** The credential member of a registration answer (the rest is the {@link Node}). */
    record CredentialOnly(String credential) {
    }
}
