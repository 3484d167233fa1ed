package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ManagedHosts;
import io.rdmablock.mgmt.client.SetHostRequest;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import static io.rdmablock.mgmt.api.http.Answers.answer;
import static io.rdmablock.mgmt.api.http.Answers.json;
import static io.rdmablock.mgmt.api.http.Answers.noContent;
import static io.rdmablock.mgmt.api.http.Answers.then;

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
            then(ctx, vertx.executeBlocking(() -> hosts.set(hostNqn, request), false),
                    written -> json(ctx, written.created() ? 201 : 200, written.host()));
        });
        builder.getRoute("listHosts").addHandler(ctx -> answer(vertx, ctx, 200, hosts::list));
        builder.getRoute("getHost").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> hosts.get(ctx.pathParam("hostNqn"))));
        builder.getRoute("removeHost").addHandler(ctx -> noContent(ctx, vertx.executeBlocking(() -> {
            hosts.remove(ctx.pathParam("hostNqn"));
            return null;
        }, false)));
    }
}
