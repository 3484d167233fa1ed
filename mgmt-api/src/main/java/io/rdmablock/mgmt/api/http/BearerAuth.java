package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.HostCredentials;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.PlatformHandler;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.Set;

/**
 * Bearer-token check (RFC 6750) on every request, run before the body is read and before validation. Two tokens:
 * the admin (cluster) token, good for every route, and an optional read-only token, good for GET and HEAD only.
 * <ul>
 * <li>no or malformed {@code Authorization} header → 401, {@code WWW-Authenticate: Bearer realm="rdmablock"};</li>
 * <li>a token that is neither → 401, {@code WWW-Authenticate: Bearer realm="rdmablock", error="invalid_token"};</li>
 * <li>the read token on a mutating route (POST, PUT, PATCH, DELETE) → 403,
 *     {@code WWW-Authenticate: Bearer realm="rdmablock", error="insufficient_scope", scope="admin"}.</li>
 * </ul>
 * Open without a token ({@link #isOpen}): {@code GET /health}, {@code GET /metrics} (Prometheus: counters by state
 * and operation, the state of each node, volume and copy by name, no host NQNs or allow-lists), {@code GET /openapi.yaml} and the dashboard's static files
 * ({@code /}, {@code /ui}, {@code /ui/*}; the page then sends the operator's token on every call). An accepted
 * request's answer carries {@value #SCOPE_HEADER}: {@code admin}, {@code read} or {@code node} (the dashboard shows
 * its actions only for {@code admin}). Tokens are compared in constant time.
 *
 * <p>A third kind: a token of a node credential's shape ({@link NodeCredentials}, {@code rbn1:<nodeId>:<secret>})
 * passes here with its {@link NodeCredentials.Caller} in the context under {@link NodeCredentials#CALLER}; the
 * route then answers 403 when no node credential may call it ({@link NodeCredentials#NODE_OPERATIONS}), and
 * otherwise verifies it against the node's record and checks it acts as its own node (401 / 403,
 * {@link NodeCredentials#authorize}). The admin and read tokens put {@code Caller.ADMIN} / {@code Caller.READ}.
 * A fourth: a host credential ({@link HostCredentials}, {@code rbh1:<id>:<secret>}) passes the same way, scope HOST;
 * the verticle answers 403 on a route outside {@link HostCredentials#HOST_OPERATIONS} and verifies it against its
 * record (401 when revoked or unknown) before any other route; accepted answers carry {@code host}.
 */
final class BearerAuth implements PlatformHandler {
    /** Answer header naming the scope of the token a request was accepted with: {@code admin} or {@code read}. */
    static final String SCOPE_HEADER = "X-Rdmablock-Token-Scope";
    private static final Set<String> OPEN_PATHS = Set.of("/health", "/metrics", "/openapi.yaml", "/", "/ui", "/ui/");
    private final byte[] adminToken;
    private final byte[] readToken;

    /**
     * @param adminToken the cluster token (non-empty): every route
     * @param readToken  the read-only token, or null for none (then reads need the admin token too); non-empty and
     *                   different from the admin token
     * @throws IllegalArgumentException on an empty token or equal tokens
     */
    BearerAuth(String adminToken, String readToken) {
        Objects.requireNonNull(adminToken, "adminToken");
        if (adminToken.isEmpty()) {
            throw new IllegalArgumentException("invalid token: token=\"\", min length=1");
        }
        if (readToken != null && readToken.isEmpty()) {
            throw new IllegalArgumentException("invalid readToken: readToken=\"\", min length=1");
        }
        if (adminToken.equals(readToken)) {
            throw new IllegalArgumentException("invalid readToken: equal to the admin token, must differ");
        }
        this.adminToken = adminToken.getBytes(StandardCharsets.UTF_8);
        this.readToken = readToken == null ? null : readToken.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param path the normalized request path (dot segments removed, as the router matches it)
     * @return whether {@code GET path} is answered without a token (see the class comment)
     */
    static boolean isOpen(String path) {
        return path != null && (OPEN_PATHS.contains(path)
                || path.startsWith("/ui/") && path.indexOf('/', 4) < 0 && path.indexOf('%') < 0);
    }

    @Override
    public void handle(RoutingContext ctx) {
        HttpMethod method = ctx.request().method();
        boolean read = method == HttpMethod.GET || method == HttpMethod.HEAD;
        String path;
        try {
            path = ctx.normalizedPath();
        } catch (IllegalArgumentException undecodable) { // e.g. /v1/volumes/%: no route can match it
            Problems.badPath(ctx);
            return;
        }
        if (read && isOpen(path)) {
            ctx.next();
            return;
        }
        String header = ctx.request().getHeader("Authorization");
        if (header == null || header.length() < 8 || !header.regionMatches(true, 0, "Bearer ", 0, 7)
                || header.substring(7).isBlank()) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"rdmablock\"");
            Problems.send(ctx, 401, ProblemTypes.UNAUTHORIZED, "Unauthorized", method + " "
                    + ctx.request().path() + " needs header Authorization: Bearer <token> ("
                    + (read ? "the read token or the cluster token" : "the cluster token") + ")");
            return;
        }
        String token = header.substring(7).trim();
        byte[] given = token.getBytes(StandardCharsets.UTF_8);
        // both comparisons always run: the time taken does not tell which token was close
        boolean admin = MessageDigest.isEqual(given, adminToken);
        boolean reader = readToken != null && MessageDigest.isEqual(given, readToken);
        NodeCredentials.Caller node = admin || reader ? null : NodeCredentials.parse(token);
        if (node == null && !admin && !reader) {
            node = HostCredentials.parse(token);
        }
        if (node != null) { // verified against the store by the route, which knows whom it acts for
            ctx.put(NodeCredentials.CALLER, node); // SCOPE_HEADER "node" or "host" once verified (MgmtVerticle)
            ctx.next();
            return;
        }
        if (!admin && !reader) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"rdmablock\", error=\"invalid_token\"");
            Problems.send(ctx, 401, ProblemTypes.UNAUTHORIZED, "Unauthorized",
                    "the bearer token is neither the cluster token nor the read token");
            return;
        }
        if (!admin && !read) {
            insufficientScope(ctx, method + " " + ctx.request().path()
                    + " needs the cluster token; the read token allows GET only");
            return;
        }
        ctx.put(NodeCredentials.CALLER, admin ? NodeCredentials.Caller.ADMIN : NodeCredentials.Caller.READ);
        ctx.response().putHeader(SCOPE_HEADER, admin ? "admin" : "read");
        ctx.next();
    }

    /** Answers 403 {@link ProblemTypes#FORBIDDEN} with {@code error="insufficient_scope", scope="admin"}. */
    static void insufficientScope(RoutingContext ctx, String detail) {
        ctx.response().putHeader("WWW-Authenticate",
                "Bearer realm=\"rdmablock\", error=\"insufficient_scope\", scope=\"admin\"");
        Problems.send(ctx, 403, ProblemTypes.FORBIDDEN, "Forbidden", detail);
    }
}
