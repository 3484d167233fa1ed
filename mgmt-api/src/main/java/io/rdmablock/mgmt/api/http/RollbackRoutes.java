package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.api.store.RollbackRecord;
import io.rdmablock.mgmt.client.RollbackRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import java.util.Optional;

import static io.rdmablock.mgmt.api.http.Answers.json;
import static io.rdmablock.mgmt.api.http.Answers.then;

/**
 * The handler of {@code POST /v1/volumes/{name}/rollback} (docs/snapshots.md, "Rollback"), over
 * {@link ClusterService#rollbacks()}: the request is recorded on a worker, then the answer waits for every copy to
 * report it done by re-reading the record every {@value SnapshotRoutes#POLL_MS} ms from a Vert.x timer (the event
 * loop never blocks), for at most {@code RollbackLedger#waitMs()}: 200 with the volume (no {@code rollback} left)
 * when every copy did; else 202 with the volume showing {@code rollback} ({@code rolling-back}, or {@code failed})
 * and its Location. Errors are the service's (problem+json through the verticle's failure handler).
 */
final class RollbackRoutes {
    private RollbackRoutes() {
    }

    static void mount(RouterBuilder builder, Vertx vertx, ClusterService cluster) {
        builder.getRoute("rollbackVolume").addHandler(ctx -> {
            JsonObject body = ctx.body().asJsonObject();
            var request = new RollbackRequest(body.getString("snapshot"), body.getBoolean("force", false));
            String volume = ctx.pathParam("name");
            Future<RollbackRecord> recorded = vertx.executeBlocking(
                    () -> cluster.rollbacks().request(volume, request), false);
            then(ctx, recorded, rec -> {
                long deadline = System.nanoTime() + cluster.rollbacks().waitMs() * 1_000_000L;
                Promise<Optional<RollbackRecord>> waited = Promise.promise();
                poll(vertx, cluster, volume, rec.requestId(), deadline, waited);
                then(ctx, waited.future(), left -> then(ctx, vertx.executeBlocking(
                        () -> cluster.getVolume(volume), false), v -> {
                    if (left.isEmpty()) {
                        json(ctx, 200, v);
                    } else {
                        ctx.response().putHeader("Location", "/v1/volumes/" + volume);
                        json(ctx, 202, v);
                    }
                }));
            });
        });
    }

    /** Re-reads until the rollback is gone (done), no longer rolling back (failed) or the deadline passed. */
    private static void poll(Vertx vertx, ClusterService cluster, String volume, String requestId, long deadline,
                             Promise<Optional<RollbackRecord>> result) {
        vertx.executeBlocking(() -> cluster.rollbacks().find(volume, requestId), false).onComplete(ar -> {
            if (ar.failed()) {
                result.fail(ar.cause());
            } else if (ar.result().isEmpty() || !ar.result().get().rollingBack()
                    || System.nanoTime() - deadline >= 0) {
                result.complete(ar.result());
            } else {
                vertx.setTimer(SnapshotRoutes.POLL_MS, t -> poll(vertx, cluster, volume, requestId, deadline, result));
            }
        });
    }
}
