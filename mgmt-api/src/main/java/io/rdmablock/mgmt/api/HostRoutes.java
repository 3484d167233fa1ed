package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import java.util.concurrent.Callable;

/**
 * The handlers of {@code /v1/hosts} (operations setHost, listHosts, getHost, removeHost of the contract): each runs
 * its {@link ManagedHosts} call on a worker (the store fsyncs) and answers JSON, or fails the context so the
 * verticle's failure handler answers problem+json. Bodies reach here validated by the contract; no answer carries a
 * secret.
 */
final class HostRoutes {
    private HostRoutes() {
    }

    static void mount(RouterBuilder builder, Vertx vertx, ManagedHosts hosts) {
        builder.getRoute("setHost").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            var request = new SetHostRequest(body.getString("dhchapSecret"), body.getString("dhchapCtrlSecret"));
            String hostNqn = ctx.pathParam("hostNqn");
            vertx.executeBlocking(() -> hosts.set(hostNqn, request), false).onComplete(ar -> {
                if (ar.succeeded()) {
                    json(ctx, ar.result().created() ? 201 : 200, ar.result().host());
                } else {
                    ctx.fail(ar.cause());
                }
            });
        });
        builder.getRoute("listHosts").addHandler(ctx -> answer(vertx, ctx, hosts::list));
        builder.getRoute("getHost").addHandler(ctx -> answer(vertx, ctx, () -> hosts.get(ctx.pathParam("hostNqn"))));
        builder.getRoute("removeHost").addHandler(ctx -> vertx.executeBlocking(() -> {
            hosts.remove(ctx.pathParam("hostNqn"));
            return null;
        }, false).onComplete(ar -> {
            if (ar.succeeded()) {
                ctx.response().setStatusCode(204).end();
            } else {
                ctx.fail(ar.cause());
            }
        }));
    }

    private static <T> void answer(Vertx vertx, RoutingContext ctx, Callable<T> work) {
        vertx.executeBlocking(work, false).onComplete(ar -> {
            if (ar.succeeded()) {
                json(ctx, 200, ar.result());
            } else {
                ctx.fail(ar.cause());
            }
        });
    }

    private static void json(RoutingContext ctx, int status, Object value) {
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(Json.write(value));
    }
}
