package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.HostCredentialRegistry;
import io.rdmablock.mgmt.client.Json;
import io.vertx.core.Vertx;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import static io.rdmablock.mgmt.api.http.Answers.answer;
import static io.rdmablock.mgmt.api.http.Answers.noContent;
import static io.rdmablock.mgmt.api.http.Answers.then;

/**
 * The handlers of {@code /v1/host-credentials} (operations issueHostCredential, listHostCredentials,
 * revokeHostCredential of the contract; {@link HostCredentialRegistry}): each runs on a worker (the store fsyncs) and
 * answers JSON, or fails the context so the verticle's failure handler answers problem+json. An issue answers the
 * credential once, 201 with {@code Cache-Control: no-store}; a listing never carries one.
 */
final class HostCredentialRoutes {
    private HostCredentialRoutes() {
    }

    static void mount(RouterBuilder builder, Vertx vertx, HostCredentialRegistry credentials) {
        builder.getRoute("issueHostCredential").addHandler(ctx -> {
            String hostNqn = ctx.body().asJsonObject().getString("hostNqn");
            then(ctx, vertx.executeBlocking(() -> credentials.issue(hostNqn), false), issued -> ctx.response()
                    .setStatusCode(201).putHeader("Content-Type", "application/json")
                    .putHeader("Cache-Control", "no-store")
                    .putHeader("Location", "/v1/host-credentials/" + issued.id())
                    .end(Json.write(issued)));
        });
        builder.getRoute("listHostCredentials").addHandler(ctx -> answer(vertx, ctx, 200, credentials::list));
        builder.getRoute("revokeHostCredential").addHandler(ctx -> noContent(ctx, vertx.executeBlocking(() -> {
            credentials.revoke(ctx.pathParam("id"));
            return null;
        }, false)));
    }
}
