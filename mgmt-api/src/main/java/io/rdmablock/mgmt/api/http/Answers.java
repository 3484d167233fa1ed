package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.client.Json;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;

import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * The JSON answers of the operation handlers ({@link VolumeRoutes}, {@link NodeRoutes}, {@link HostRoutes},
 * {@link MgmtVerticle}): a call's result is answered as JSON, or its failure fails the context so the verticle's
 * failure handler answers problem+json ({@link Problems}).
 */
final class Answers {
    private Answers() {
    }

    /**
     * Runs {@code work} on a worker (the store fsyncs), unordered (volume writes are compare-and-sets; the locks they need are taken inside), and answers its
     * result as JSON with {@code status}.
     */
    static <T> void answer(Vertx vertx, RoutingContext ctx, int status, Callable<T> work) {
        then(ctx, vertx.executeBlocking(work, false), value -> json(ctx, status, value));
    }

    /** Answers with {@code answer} once {@code result} succeeded; fails the context with its cause otherwise. */
    static <T> void then(RoutingContext ctx, Future<T> result, Consumer<T> answer) {
        result.onComplete(ar -> {
            if (ar.succeeded()) {
                answer.accept(ar.result());
            } else {
                ctx.fail(ar.cause());
            }
        });
    }

    /** Answers 204 (no body) once {@code done} succeeded; fails the context with its cause otherwise. */
    static void noContent(RoutingContext ctx, Future<?> done) {
        then(ctx, done, ignored -> ctx.response().setStatusCode(204).end());
    }

    static void json(RoutingContext ctx, int status, Object value) {
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(Json.write(value));
    }
}
