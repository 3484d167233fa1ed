package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.vertx.ext.web.RoutingContext;

/** Writes {@code application/problem+json} answers (RFC 9457) with the request path as instance. */
final class Problems {
    private Problems() {
    }

    static void send(RoutingContext ctx, Problem problem) {
        if (ctx.response().ended() || ctx.response().headWritten()) {
            return;
        }
        var withInstance = problem.withInstance(ctx.request().path());
        if (!ctx.request().isEnded()) {
            closeAfterAnswer(ctx.request());
        }
        ctx.response()
                .setStatusCode(problem.status())
                .putHeader("Content-Type", Problem.MEDIA_TYPE)
                .end(Json.write(withInstance));
    }

    /**
     * Answered before the body was read (401, 413, 408): on HTTP/1.x the rest of the body would be taken for the next
     * request, or hold the connection, so it is closed after the answer. (HTTP/2 forbids the header; its stream ends
     * with the answer.)
     */
    static void closeAfterAnswer(io.vertx.core.http.HttpServerRequest request) {
        if (request.version() != io.vertx.core.http.HttpVersion.HTTP_2) {
            request.response().putHeader("Connection", "close");
        }
    }

    static void send(RoutingContext ctx, int status, String type, String title, String detail) {
        send(ctx, Problem.of(type, title, status, detail));
    }

    /** 400: a request path that cannot be percent-decoded. */
    static void badPath(RoutingContext ctx) {
        send(ctx, 400, ProblemTypes.VALIDATION, "Invalid request",
                "the request path could not be decoded (malformed percent-escape?): " + ctx.request().uri());
    }

    static void notFound(RoutingContext ctx) {
        send(ctx, 404, ProblemTypes.NOT_FOUND, "Not found",
                "no route " + ctx.request().method() + " " + ctx.request().path() + " (see /openapi.yaml)");
    }

    static void methodNotAllowed(RoutingContext ctx) {
        send(ctx, 405, ProblemTypes.METHOD_NOT_ALLOWED, "Method not allowed",
                "method " + ctx.request().method() + " is not allowed on " + ctx.request().path()
                        + " (see /openapi.yaml)");
    }
}
