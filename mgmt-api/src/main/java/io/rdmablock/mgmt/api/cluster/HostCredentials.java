package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.store.HostCredentialRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Host credentials (docs/authentication.md, "Credentials and scopes"): the bearer token
 * {@code rbh1:<id>:<secret>}, {@code id} matching {@code [a-z0-9][a-z0-9._-]{0,62}} (16 hex digits when issued here),
 * the secret 32 random bytes in unpadded base64url (43 characters). Issued by an operator for one host NQN
 * ({@link HostCredentialRegistry}); the store keeps its SHA-256 ({@link HostCredentialRecord}). Scope HOST: only the
 * operations of {@link #HOST_OPERATIONS}, and of those only the volumes that admit its NQN ({@link #admits}): a
 * volume whose allow-list contains that NQN or {@code "*"} (an empty list admits no host here). Stateless and
 * thread-safe; nothing here logs a credential or puts it into a message.
 */
public final class HostCredentials {
    /** Prefix of every host credential. */
    static final String PREFIX = "rbh1:";
    /**
     * The operations (contract operationIds) a host credential may call; every other one answers it 403
     * insufficient_scope.
     */
    public static final Set<String> HOST_OPERATIONS = Set.of("getVolume", "listVolumes", "reportUnreachable");
    /** The allow-list entry that admits any host. */
    public static final String ANY_HOST = io.rdmablock.mgmt.client.Limits.ANY_HOST;
    private static final Pattern SHAPE = Pattern.compile("^rbh1:([a-z0-9][a-z0-9._-]{0,62}):[A-Za-z0-9_-]{43}$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private HostCredentials() {
    }

    /** @return the caller of a host credential (not yet verified), or null when {@code token} lacks its shape */
    public static NodeCredentials.Caller parse(String token) {
        var m = SHAPE.matcher(token);
        return m.matches() ? new NodeCredentials.Caller(NodeCredentials.Scope.HOST, m.group(1),
                NodeCredentials.hash(token), false) : null;
    }

    /** @return a new id: 16 lowercase hex digits (8 random bytes) */
    static String newId() {
        byte[] id = new byte[8];
        RANDOM.nextBytes(id);
        return HexFormat.of().formatHex(id);
    }

    /** @return a new credential with that id (the caller stores {@link NodeCredentials#hash} of it, answers it once) */
    static String issue(String id) {
        byte[] secret = new byte[NodeCredentials.SECRET_BYTES];
        RANDOM.nextBytes(secret);
        return PREFIX + id + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    /**
     * Verifies a host credential against its record (constant-time comparison of the hashes).
     *
     * @return the caller, verified, with the record's host NQN
     * @throws ApiException 401 {@link ProblemTypes#UNAUTHORIZED} with {@code WWW-Authenticate ... invalid_token}
     *                      when no record has its id (never issued, revoked) or the secret differs
     */
    static NodeCredentials.Caller verify(MetadataStore store, NodeCredentials.Caller caller) {
        HostCredentialRecord r = store.hostCredential(caller.id()).orElse(null);
        boolean ok = r != null && r.credentialHash() != null && MessageDigest.isEqual(
                r.credentialHash().getBytes(StandardCharsets.US_ASCII),
                caller.credentialHash().getBytes(StandardCharsets.US_ASCII));
        if (!ok) {
            throw new ApiException(401, ProblemTypes.UNAUTHORIZED, "Unauthorized", "the host credential "
                    + caller.id() + " is not valid (not issued, or revoked): ask the operator for a new one")
                    .withWwwAuthenticate(NodeCredentials.INVALID);
        }
        return new NodeCredentials.Caller(NodeCredentials.Scope.HOST, caller.id(), caller.credentialHash(), true,
                r.hostNqn());
    }

    /** @return whether the allow-list admits {@code hostNqn}: it lists that NQN or {@value #ANY_HOST} */
    static boolean admits(List<String> allowedHosts, String hostNqn) {
        return allowedHosts != null && (allowedHosts.contains(hostNqn) || allowedHosts.contains(ANY_HOST));
    }

    /**
     * @return {@code v} when {@code caller} may see it: any caller but a host credential, which sees only the volumes
     *         that admit its NQN
     * @throws ApiException 404 {@link ProblemTypes#VOLUME_NOT_FOUND} (as for an absent volume) otherwise
     */
    public static Volume visible(NodeCredentials.Caller caller, Volume v) {
        if (caller != null && caller.host() && !admits(v.allowedHosts(), caller.hostNqn())) {
            throw ApiException.volumeNotFound(v.name());
        }
        return v;
    }

    /** @return the volumes {@code caller} may see ({@link #visible}), in their order */
    public static List<Volume> visible(NodeCredentials.Caller caller, List<Volume> volumes) {
        return caller != null && caller.host()
                ? volumes.stream().filter(v -> admits(v.allowedHosts(), caller.hostNqn())).toList() : volumes;
    }

    /**
     * Checks an unreachable report sent with a host credential: the volume must admit its NQN ({@link #visible}) and
     * the report must name that NQN as its reporter.
     *
     * @throws ApiException 404 for a volume that does not admit it; 403 {@link ProblemTypes#FORBIDDEN} for another
     *                      reporter
     */
    public static void checkReport(NodeCredentials.Caller caller, Volume v, String reporter) {
        visible(caller, v);
        if (!caller.hostNqn().equals(reporter)) {
            throw new ApiException(403, ProblemTypes.FORBIDDEN, "Forbidden", "the host credential " + caller.id()
                    + " reports only as " + caller.hostNqn() + ", not as " + reporter);
        }
    }
}
