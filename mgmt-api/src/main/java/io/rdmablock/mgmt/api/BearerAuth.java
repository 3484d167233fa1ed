package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.PlatformHandler;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * Bearer-token check (RFC 6750) on every mutating request (POST, PUT, PATCH, DELETE), run before validation:
 * no or malformed {@code Authorization} header → 401 with {@code WWW-Authenticate: Bearer realm="rdmablock"};
 * a token that is not the cluster token → 401 with {@code error="invalid_token"} (RFC 6750 section 3.1: 403 is for a
 * valid token lacking scope, which does not exist here). Tokens are compared in constant time. GET/HEAD pass.
 * A platform handler (Vert.x Web's first class), so it answers before the body is read or validated.
 */
final class BearerAuth implements PlatformHandler {
    private final byte[] token;

    BearerAuth(String token) {
        Objects.requireNonNull(token, "token");
        if (token.isEmpty()) {
            throw new IllegalArgumentException("invalid token: token=\"\", min length=1");
        }
        this.token = token.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void handle(RoutingContext ctx) {
        HttpMethod method = ctx.request().method();
        if (!(method == HttpMethod.POST || method == HttpMethod.PUT || method == HttpMethod.PATCH
                || method == HttpMethod.DELETE)) {
            ctx.next();
            return;
        }
        String header = ctx.request().getHeader("Authorization");
        if (header == null || header.length() < 8 || !header.regionMatches(true, 0, "Bearer ", 0, 7)
                || header.substring(7).isBlank()) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"rdmablock\"");
            Problems.send(ctx, 401, ProblemTypes.UNAUTHORIZED, "Unauthorized",
                    method + " needs header Authorization: Bearer <cluster token>");
            return;
        }
        byte[] given = header.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(given, token)) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"rdmablock\", error=\"invalid_token\"");
            Problems.send(ctx, 401, ProblemTypes.UNAUTHORIZED, "Unauthorized",
                    "the bearer token is not the cluster token");
            return;
        }
        ctx.next();
    }
}
