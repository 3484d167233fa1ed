package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.api.cluster.NodeRegistry;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.NodeKeyRotation;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import static io.rdmablock.mgmt.api.http.Answers.answer;
import static io.rdmablock.mgmt.api.http.Answers.noContent;
import static io.rdmablock.mgmt.api.http.Answers.then;

/**
 * The handlers of {@code /v1/nodes} (registration, heartbeat, list, get, background budget ({@code PATCH}), drain,
 * undrain, key rotation, removal): each
 * runs its {@link NodeRegistry} or {@link ClusterService} call on a worker (the store fsyncs) and answers JSON, or
 * fails the context so the verticle's failure handler answers problem+json. Bodies reach here validated by the contract.
 * Registration and heartbeat check who acts ({@link ClusterService#authorize}: the cluster token, or the node's own
 * credential; docs/authentication.md, "Credentials and scopes"); a registration that issues a credential answers it
 * once, in member {@code credential}, with {@code Cache-Control: no-store}. A heartbeat answer to the node's own
 * credential carries its secrets only when the {@link SecretChannel} allows it (TLS, loopback, or the operator's
 * {@code --allow-plaintext-secrets}); else it says why they are withheld. The credential answered at registration
 * is not withheld: that request carried the cluster token over the same connection, which can do more than the
 * credential (docs/authentication.md, "Secrets only over TLS").
 */
final class NodeRoutes {
    private NodeRoutes() {
    }

    /** @param channel decides whether a heartbeat answer may carry the node's secrets */
    static void mount(RouterBuilder builder, Vertx vertx, ClusterService cluster, SecretChannel channel) {
        NodeRegistry nodes = cluster.nodes();
        builder.getRoute("registerNode").addHandler(ctx -> {
            var request = Json.read(ctx.body().asString(), RegisterNodeRequest.class);
            NodeCredentials.Caller caller = ctx.get(NodeCredentials.CALLER);
            then(ctx, vertx.executeBlocking(() -> nodes.registerNode(request, caller), false), r -> {
                ctx.response().putHeader("Location", "/v1/nodes/" + r.node().nodeId());
                var body = new JsonObject(Json.write(r.node()));
                if (r.credential() != null) {
                    body.put("credential", r.credential()); // answered once; the store keeps its hash only
                    ctx.response().putHeader("Cache-Control", "no-store");
                }
                ctx.response().setStatusCode(r.created() ? 201 : 200).putHeader("Content-Type", "application/json")
                        .end(body.encode());
            });
        });
        builder.getRoute("listNodes").addHandler(ctx -> answer(vertx, ctx, 200, nodes::listNodes));
        builder.getRoute("heartbeat").addHandler(ctx -> {
            String nodeId = ctx.pathParam("nodeId");
            var request = Json.read(ctx.body().asString(), HeartbeatRequest.class);
            NodeCredentials.Caller caller = ctx.get(NodeCredentials.CALLER);
            var connection = ctx.request().connection(); // the TCP peer itself, never a forwarded-for header
            answer(vertx, ctx, 200, () -> {
                boolean own = cluster.authorize(caller, nodeId);
                return cluster.heartbeat(nodeId, request, own, own ? channel.withheld(nodeId, connection) : null);
            });
        });
        builder.getRoute("getNode").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> nodes.node(ctx.pathParam("nodeId"))));
        builder.getRoute("updateNode").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject(); // the contract: {"background": {...} | null}
            JsonObject b = body.getJsonObject("background");
            NodeBackground bounds = b == null ? null
                    : new NodeBackground(b.getInteger("maxMiBps"), b.getInteger("minMiBps"));
            answer(vertx, ctx, 200, () -> nodes.setBackground(ctx.pathParam("nodeId"), bounds));
        });
        builder.getRoute("drainNode").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> nodes.drainNode(ctx.pathParam("nodeId"))));
        builder.getRoute("undrainNode").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> nodes.undrainNode(ctx.pathParam("nodeId"))));
        builder.getRoute("rotateNodeKey").addHandler(ctx -> {
            String nodeId = ctx.pathParam("nodeId");
            answer(vertx, ctx, 200, () -> new NodeKeyRotation(nodeId, nodes.rotateKey(nodeId)));
        });
        builder.getRoute("removeNode").addHandler(ctx -> noContent(ctx, vertx.executeBlocking(() -> {
            nodes.removeNode(ctx.pathParam("nodeId"));
            return null;
        }))); // ordered (executeBlocking's default), unlike the other node calls
    }
}
