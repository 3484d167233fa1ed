package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.client.ProblemTypes;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Per-node credentials (docs/authentication.md, "Credentials and scopes"). A credential is the bearer token
 * {@code rbn1:<nodeId>:<secret>}, the secret 32 random bytes in unpadded base64url (43 characters); the server
 * stores only its SHA-256 ({@link NodeRecord#credentialHash()}). It is issued by a registration with the cluster
 * token and acts only as its node: the operations of {@link #NODE_OPERATIONS}, each checking that the node it acts
 * for ({@link #authorize}) is the credential's. Stateless and thread-safe; nothing here logs a credential or puts it
 * into a message.
 */
public final class NodeCredentials {
    /** Prefix of every node credential. */
    static final String PREFIX = "rbn1:";
    /** Bytes of a credential's secret. */
    static final int SECRET_BYTES = 32;
    /** The operations (contract operationIds) a node credential may call; every other one answers it 403. */
    public static final Set<String> NODE_OPERATIONS = Set.of("registerNode", "heartbeat", "markCopyStale",
            "markCopySyncing", "markCopyInSync", "reportUnreachable", "getVolume", "getVerify");
    /** The {@code WWW-Authenticate} value of a node credential that is not (or no longer) valid. */
    static final String INVALID = "Bearer realm=\"rdmablock\", error=\"invalid_token\"";
    private static final Pattern SHAPE = Pattern.compile("^rbn1:([a-z0-9][a-z0-9._-]{0,62}):[A-Za-z0-9_-]{43}$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private NodeCredentials() {
    }

    /** Who sent a request, as {@code http.BearerAuth} judged its token; {@link Scope#HOST}: {@link HostCredentials}. */
    public enum Scope { ADMIN, READ, NODE, HOST }

    /**
     * The caller of a request (in the routing context under {@link #CALLER}).
     *
     * @param scope          the token's scope
     * @param id             for {@link Scope#NODE}: the node the credential names; for {@link Scope#HOST}: the host
     *                       credential's id (not yet verified); else null
     * @param credentialHash for {@link Scope#NODE} and {@link Scope#HOST}: SHA-256 of the credential, hex; else null
     * @param verified       for {@link Scope#NODE} and {@link Scope#HOST}: checked against the stored record by this
     *                       request ({@link #verify}, {@link HostCredentials#verify}); {@code http.BearerAuth} only checks
     *                       the shape
     * @param hostNqn        for a verified {@link Scope#HOST}: the host NQN its record binds it to; else null
     */
    public record Caller(Scope scope, String id, String credentialHash, boolean verified, String hostNqn) {
        public static final Caller ADMIN = new Caller(Scope.ADMIN, null, null, true);
        public static final Caller READ = new Caller(Scope.READ, null, null, true);

        /** A caller without a host NQN (every scope but a verified {@link Scope#HOST}). */
        Caller(Scope scope, String id, String credentialHash, boolean verified) {
            this(scope, id, credentialHash, verified, null);
        }

        public boolean node() {
            return scope == Scope.NODE;
        }

        public boolean host() {
            return scope == Scope.HOST;
        }

        /** @return for {@link Scope#NODE}: the node the credential names; else null */
        String nodeId() {
            return scope == Scope.NODE ? id : null;
        }

        @Override
        public String toString() {
            return switch (scope) {
                case NODE -> "node credential of " + id;
                case HOST -> "host credential " + id + (hostNqn == null ? "" : " of " + hostNqn);
                default -> scope.name().toLowerCase();
            };
        }
    }

    /** Routing-context key of the {@link Caller}. */
    public static final String CALLER = "rdmablock.caller";

    /** @return the caller of a node credential, or null when {@code token} does not have a credential's shape */
    public static Caller parse(String token) {
        var m = SHAPE.matcher(token);
        return m.matches() ? new Caller(Scope.NODE, m.group(1), hash(token), false) : null;
    }

    /** @return a new credential for {@code nodeId} (the caller stores {@link #hash} of it, answers it once) */
    static String issue(String nodeId) {
        byte[] secret = new byte[SECRET_BYTES];
        RANDOM.nextBytes(secret);
        return PREFIX + nodeId + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    /** @return lowercase hex SHA-256 of the credential's UTF-8 bytes */
    public static String hash(String credential) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(credential.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /**
     * Checks that {@code caller} may act as node {@code actingAs}: the cluster token always; a node credential only
     * when it is the one stored for its node (compared in constant time) and names {@code actingAs}.
     *
     * @return true when the caller is that node's own credential (it may be given the node's secrets); false for the
     *         cluster token
     * @throws ApiException 401 {@link ProblemTypes#UNAUTHORIZED} when the credential is not its node's current one
     *                      (or the node is not registered); 403 {@link ProblemTypes#FORBIDDEN} when it is another
     *                      node's; 403 for the read token and a host credential
     */
    static boolean authorize(MetadataStore store, Caller caller, String actingAs) {
        if (caller == null || caller.scope() == Scope.ADMIN) {
            return false;
        }
        if (caller.scope() == Scope.READ || caller.scope() == Scope.HOST) {
            throw new ApiException(403, ProblemTypes.FORBIDDEN, "Forbidden", "the "
                    + (caller.host() ? "host credential" : "read token") + " cannot act as a node");
        }
        if (!caller.verified()) {
            verify(store, caller);
        }
        if (!caller.nodeId().equals(actingAs)) {
            throw new ApiException(403, ProblemTypes.FORBIDDEN, "Forbidden", "the credential of node "
                    + caller.nodeId() + " acts only as that node, not as " + actingAs);
        }
        return true;
    }

    /**
     * Verifies a node credential against its node's record; 401 (see {@link #authorize}) when it is not current.
     * The verticle does this for every request with a node credential before its route runs.
     *
     * @return the caller, marked verified
     */
    static Caller verify(MetadataStore store, Caller caller) {
        NodeRecord n = store.node(caller.nodeId()).orElse(null);
        boolean ok = n != null && n.credentialHash() != null && MessageDigest.isEqual(
                n.credentialHash().getBytes(StandardCharsets.US_ASCII),
                caller.credentialHash().getBytes(StandardCharsets.US_ASCII));
        if (!ok) {
            throw new ApiException(401, ProblemTypes.UNAUTHORIZED, "Unauthorized", "the node credential of "
                    + caller.nodeId() + " is not valid (not issued, replaced by a later registration with the"
                    + " cluster token, or the node was removed): register with the cluster token for a new one")
                    .withWwwAuthenticate(INVALID);
        }
        return new Caller(caller.scope(), caller.nodeId(), caller.credentialHash(), true);
    }
}
