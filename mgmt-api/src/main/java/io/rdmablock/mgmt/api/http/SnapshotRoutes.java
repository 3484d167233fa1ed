package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.CreateSnapshotRequest;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.openapi.router.RouterBuilder;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

import static io.rdmablock.mgmt.api.http.Answers.answer;
import static io.rdmablock.mgmt.api.http.Answers.json;
import static io.rdmablock.mgmt.api.http.Answers.then;

/**
 * The handlers of {@code /v1/volumes/{name}/snapshots} (docs/snapshots.md): create, list, get, delete, over
 * {@link ClusterService#snapshots()}. Store calls run on a worker; a create or delete then waits for the volume's
 * primary to report the change (its heartbeat, {@code SnapshotLedger#reconcile}) by re-reading the record every
 * {@value #POLL_MS} ms from a Vert.x timer (the event loop never blocks), for at most
 * {@link SnapshotLedger#waitMs()}: a create answers 201 with the snapshot {@code ready}, or 202 with it still
 * {@code creating} and its Location; a delete answers 204 once the record is gone, or 202 with it {@code deleting}.
 * Errors are the service's (problem+json through the verticle's failure handler).
 */
final class SnapshotRoutes {
    /** Interval of the re-reads while a create or delete waits for the primary, ms. */
    static final long POLL_MS = 50;

    private SnapshotRoutes() {
    }

    static void mount(RouterBuilder builder, Vertx vertx, ClusterService cluster) {
        builder.getRoute("createSnapshot").addHandler(ctx -> {
            var request = new CreateSnapshotRequest(ctx.body().asJsonObject().getString("name"));
            String volume = volume(ctx);
            Future<Snapshot> created = vertx.executeBlocking(
                    () -> cluster.snapshots().create(volume, request), false);
            then(ctx, created, snap -> {
                long deadline = System.nanoTime() + cluster.snapshots().waitMs() * 1_000_000L;
                then(ctx, await(vertx, () -> cluster.snapshots().find(volume, snap.name(), snap.id()),
                        found -> found.isEmpty() || found.get().state() != SnapshotState.CREATING, deadline), found -> {
                    Snapshot now = found.orElse(snap);
                    if (now.state() == SnapshotState.CREATING) {
                        ctx.response().putHeader("Location", location(volume, now.name()));
                        json(ctx, 202, now);
                    } else {
                        json(ctx, 201, now);
                    }
                });
            });
        });
        builder.getRoute("listSnapshots").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> cluster.snapshots().list(volume(ctx))));
        builder.getRoute("getSnapshot").addHandler(ctx -> answer(vertx, ctx, 200,
                () -> cluster.snapshots().get(volume(ctx), ctx.pathParam("snap"))));
        builder.getRoute("deleteSnapshot").addHandler(ctx -> {
            String volume = volume(ctx);
            String name = ctx.pathParam("snap");
            then(ctx, vertx.executeBlocking(() -> cluster.snapshots().markDeleting(volume, name), false), snap -> {
                long deadline = System.nanoTime() + cluster.snapshots().waitMs() * 1_000_000L;
                then(ctx, await(vertx, () -> cluster.snapshots().find(volume, name, snap.id()), Optional::isEmpty,
                        deadline), found -> {
                    if (found.isEmpty()) {
                        ctx.response().setStatusCode(204).end();
                    } else {
                        ctx.response().putHeader("Location", location(volume, name));
                        json(ctx, 202, found.get());
                    }
                });
            });
        });
    }

    /**
     * Re-reads with {@code poll} (on a worker) every {@value #POLL_MS} ms until {@code done} holds or
     * {@code deadlineNanos} ({@link System#nanoTime()}) passed.
     *
     * @return the last read; failed with the read's failure
     */
    static Future<Optional<Snapshot>> await(Vertx vertx, Callable<Optional<Snapshot>> poll,
                                            Predicate<Optional<Snapshot>> done, long deadlineNanos) {
        Promise<Optional<Snapshot>> result = Promise.promise();
        poll(vertx, poll, done, deadlineNanos, result);
        return result.future();
    }

    private static void poll(Vertx vertx, Callable<Optional<Snapshot>> poll, Predicate<Optional<Snapshot>> done,
                             long deadlineNanos, Promise<Optional<Snapshot>> result) {
        vertx.executeBlocking(poll, false).onComplete(ar -> {
            if (ar.failed()) {
                result.fail(ar.cause());
            } else if (done.test(ar.result()) || System.nanoTime() - deadlineNanos >= 0) {
                result.complete(ar.result());
            } else {
                vertx.setTimer(POLL_MS, t -> poll(vertx, poll, done, deadlineNanos, result));
            }
        });
    }

    private static String location(String volume, String snapshot) {
        return "/v1/volumes/" + volume + "/snapshots/" + snapshot;
    }

    private static String volume(RoutingContext ctx) {
        return ctx.pathParam("name");
    }
}
