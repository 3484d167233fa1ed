package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.cluster.HostCredentials;
import io.rdmablock.mgmt.api.cluster.NodeCredentials;
import io.rdmablock.mgmt.client.CopyTransition;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.MarkCopyStaleRequest;
import io.rdmablock.mgmt.client.PromoteRequest;
import io.rdmablock.mgmt.client.UnreachableReport;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.mgmt.api.state.ApiException;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import java.util.ArrayList;
import java.util.List;

import static io.rdmablock.mgmt.api.http.Answers.answer;
import static io.rdmablock.mgmt.api.http.Answers.json;
import static io.rdmablock.mgmt.api.http.Answers.then;

/**
 * The handlers of {@code /v1/volumes} (volumes, their copies' transitions, verify, failover reports and promotion)
 * and the reading of their bodies: each runs its {@link ClusterService} call on a worker (the store fsyncs) and
 * answers JSON, or fails the context so the verticle's failure handler answers problem+json. Bodies reach here
 * validated by the contract. A copy report (stale, syncing, in-sync, unreachable) sent with a node credential must
 * name that node as its {@code reporter} ({@link ClusterService#authorize}; docs/authentication.md, "Credentials
 * and scopes"). A host credential sees only the volumes that admit its NQN (others answer 404, listings leave them
 * out) and reports unreachable only as that NQN ({@link HostCredentials}).
 */
final class VolumeRoutes {
    private VolumeRoutes() {
    }

    static void mount(RouterBuilder builder, Vertx vertx, ClusterService cluster) {
        builder.getRoute("createVolume").addHandler(ctx -> {
            var request = createRequest(ctx.body().asJsonObject());
            then(ctx, vertx.executeBlocking(() -> cluster.createVolume(request), false), v -> {
                ctx.response().putHeader("Location", "/v1/volumes/" + v.name());
                json(ctx, 201, v);
            });
        });
        builder.getRoute("listVolumes").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> HostCredentials.visible(caller(ctx), cluster.listVolumes())));
        builder.getRoute("getVolume").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> HostCredentials.visible(caller(ctx), cluster.getVolume(name(ctx)))));
        builder.getRoute("resizeVolume").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            Long sizeBytes = body.getLong("sizeBytes");
            Boolean requireAuth = body.getBoolean("requireAuth");
            var hosts = body.getJsonArray("allowedHosts");
            VolumeQos limits = body.containsKey("qos") ? qos(body.getJsonObject("qos")) : null;
            answer(vertx, ctx, 200, () -> {
                if (limits != null) {
                    ApiException.check(limits::check); // before anything changes: a bad qos changes nothing
                }
                Volume v = sizeBytes == null ? null : cluster.resizeVolume(name(ctx), sizeBytes);
                v = requireAuth == null ? v : cluster.requireAuth(name(ctx), requireAuth);
                v = limits == null ? v : cluster.qos(name(ctx), limits);
                return hosts == null ? v : cluster.allowedHosts(name(ctx), strings(hosts));
            });
        });
        builder.getRoute("deleteVolume").addHandler(ctx -> answer(vertx, ctx, 202,
                () -> cluster.deleteVolume(name(ctx), "true".equals(ctx.request().getParam("force")))));
        builder.getRoute("markCopyStale").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            var request = new MarkCopyStaleRequest(body.getLong("epoch"), body.getString("reporter"));
            answer(vertx, ctx, 200, () -> {
                cluster.authorize(caller(ctx), request.reporter());
                return cluster.markCopyStale(name(ctx), ctx.pathParam("nodeId"), request);
            });
        });
        builder.getRoute("markCopySyncing").addHandler(ctx -> {
            CopyTransition request = transition(ctx);
            answer(vertx, ctx, 200, () -> {
                cluster.authorize(caller(ctx), request.reporter());
                return cluster.markCopySyncing(name(ctx), ctx.pathParam("nodeId"), request);
            });
        });
        builder.getRoute("markCopyInSync").addHandler(ctx -> {
            CopyTransition request = transition(ctx);
            answer(vertx, ctx, 200, () -> {
                cluster.authorize(caller(ctx), request.reporter());
                return cluster.markCopyInSync(name(ctx), ctx.pathParam("nodeId"), request);
            });
        });
        builder.getRoute("startVerify").addHandler(ctx -> answer(vertx, ctx, 202, () -> {
            String snap = ctx.queryParams().get("snapshot"); // docs/snapshots.md, "Verify of a snapshot"
            return cluster.startVerify(name(ctx), snap == null ? null : cluster.snapshots().readyId(name(ctx), snap));
        }));
        builder.getRoute("getVerify").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> cluster.verifyStatus(name(ctx))));
        builder.getRoute("reportUnreachable").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            var request = new UnreachableReport(body.getLong("epoch"), body.getString("reporter"));
            answer(vertx, ctx, 200, () -> {
                NodeCredentials.Caller caller = caller(ctx);
                if (caller != null && caller.host()) { // a volume that admits its NQN, reported as that NQN
                    HostCredentials.checkReport(caller, cluster.getVolume(name(ctx)), request.reporter());
                } else {
                    cluster.authorize(caller, request.reporter());
                }
                return cluster.reportUnreachable(name(ctx), ctx.pathParam("nodeId"), request);
            });
        });
        builder.getRoute("promoteVolume").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            var request = new PromoteRequest(body.getString("nodeId"), body.getBoolean("acceptDataLoss", false));
            answer(vertx, ctx, 200, () -> cluster.promote(name(ctx), request));
        });
    }

    /** @return the create request of a body the contract accepted; an absent minInSync is the default */
    static CreateVolumeRequest createRequest(JsonObject body) {
        int replicas = body.getInteger("replicas", 1);
        Integer minInSync = body.getInteger("minInSync");
        return new CreateVolumeRequest(body.getString("name"), body.getLong("sizeBytes"),
                body.getInteger("lbaSize", 4096), replicas,
                minInSync == null ? Limits.defaultMinInSync(replicas) : minInSync,
                strings(body.getJsonArray("allowedHosts")), body.getBoolean("requireAuth", false),
                qos(body.getJsonObject("qos")));
    }

    /**
     * @return the limits of a {@code qos} object (absent fields 0 = no limit; null: {@link VolumeQos#NONE}), not yet
     *         checked ({@link VolumeQos#check()})
     * @throws IllegalArgumentException when a field is not a number of its type
     */
    static VolumeQos qos(JsonObject qos) {
        return qos == null ? VolumeQos.NONE : io.rdmablock.mgmt.client.Json.read(qos.encode(), VolumeQos.class);
    }

    /** @return the body of {@code .../syncing} or {@code .../in-sync}, as the contract accepted it */
    private static CopyTransition transition(RoutingContext ctx) {
        JsonObject body = ctx.body().asJsonObject();
        return new CopyTransition(body.getLong("epoch"), body.getString("reporter"));
    }

    /** @return who sent the request ({@link BearerAuth}); a node credential acts only as its node's reporter */
    private static NodeCredentials.Caller caller(RoutingContext ctx) {
        return ctx.get(NodeCredentials.CALLER);
    }

    private static String name(RoutingContext ctx) {
        return ctx.pathParam("name");
    }

    private static List<String> strings(JsonArray array) {
        var out = new ArrayList<String>();
        if (array != null) {
            for (Object o : array) {
                out.add(o == null ? null : o.toString());
            }
        }
        return out;
    }
}
