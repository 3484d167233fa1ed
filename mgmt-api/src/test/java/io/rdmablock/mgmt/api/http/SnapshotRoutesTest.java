package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.SnapshotRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.Volume;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /v1/volumes/{name}/snapshots}: the test plays the volume's primary (its heartbeats report the snapshots it
 * holds), which drives creating → ready and deleting → gone; the routes' wait is shortened
 * ({@code SnapshotLedger#waitMs}).
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class SnapshotRoutesTest {
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.cluster.snapshots().waitMs(200);
    }

    private static String snap(String name) {
        return "{\"name\":\"" + name + "\"}";
    }

    /** The primary's heartbeat: {@code v} ready, holding {@code snapshots} (JSON array of SnapshotReport). */
    private HeartbeatResponse report(Volume v, String snapshots) throws Exception {
        return api.heartbeat(v.nodeId(), ApiHarness.ready(v, "\"snapshots\":" + snapshots));
    }

    private static String held(long id, String name, long exclusive) {
        return "{\"id\":%d,\"name\":\"%s\",\"createdMs\":1,\"sizeBytes\":%d,\"exclusiveBytes\":%d}"
                .formatted(id, name, 2 * MIB, exclusive);
    }

    private static DesiredVolume desired(HeartbeatResponse r, Volume v) {
        return r.volumes().stream().filter(d -> d.id().equals(v.id())).findFirst().orElseThrow();
    }

    /** Polls GET until the snapshot is in {@code state}. */
    private Snapshot awaitState(String volume, String name, SnapshotState state) throws Exception {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            var r = api.get("/v1/volumes/" + volume + "/snapshots/" + name);
            if (r.statusCode() == 200) {
                Snapshot s = Json.read(r.body(), Snapshot.class);
                if (s.state() == state) {
                    return s;
                }
            }
            assertTrue(System.nanoTime() < deadline, "no " + state + " snapshot " + name + ": " + r.body());
            Thread.sleep(20);
        }
    }

    private CompletableFuture<HttpResponse<String>> async(String method, String path, String body) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return api.send(method, path, body);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void shouldAnswer201ReadyOnceThePrimaryReportsIt() throws Exception {
        Volume v = api.createReady("vol", 1);
        api.cluster.snapshots().waitMs(8_000);
        var created = async("POST", "/v1/volumes/vol/snapshots", snap("s1"));
        Snapshot creating = awaitState("vol", "s1", SnapshotState.CREATING);
        assertEquals(1, creating.id());
        assertEquals(v.epoch(), creating.epoch());
        assertEquals(api.nowMs.get(), creating.createdAtMs());

        DesiredVolume d = desired(report(v, "[]"), v); // not yet taken: still creating, still desired
        assertEquals(List.of(new DesiredSnapshot(1, "s1", false)), d.snapshots());
        assertEquals(SnapshotState.CREATING, awaitState("vol", "s1", SnapshotState.CREATING).state());
        report(v, "[" + held(1, "s1", 4096) + "]");

        var r = created.get(10, TimeUnit.SECONDS);
        assertEquals(201, r.statusCode(), r.body());
        assertEquals(new Snapshot("vol", "s1", 1, api.nowMs.get(), v.epoch(), SnapshotState.READY, 2 * MIB, 4096),
                Json.read(r.body(), Snapshot.class));

        // taken: no longer in the answer (the node keeps what is not mentioned); exclusive bytes grow with overwrites
        assertEquals(List.of(), desired(report(v, "[" + held(1, "s1", 8192) + "]"), v).snapshots());
        assertEquals(8192, awaitState("vol", "s1", SnapshotState.READY).exclusiveBytes());
        var list = api.get("/v1/volumes/vol/snapshots");
        assertEquals(200, list.statusCode(), list.body());
        assertEquals(List.of("s1"), List.of(Json.read(list.body(), Snapshot[].class)).stream().map(Snapshot::name)
                .toList());
    }

    @Test
    void shouldAnswer202CreatingWhenThePrimaryDoesNotReportInTime() throws Exception {
        api.createReady("vol", 1);
        var r = api.send("POST", "/v1/volumes/vol/snapshots", snap("s1"));
        assertEquals(202, r.statusCode(), r.body());
        assertEquals("/v1/volumes/vol/snapshots/s1", r.headers().firstValue("Location").orElse(""));
        assertEquals(SnapshotState.CREATING, Json.read(r.body(), Snapshot.class).state());
        assertEquals(SnapshotState.CREATING, awaitState("vol", "s1", SnapshotState.CREATING).state());
    }

    @Test
    void shouldNotCountASnapshotThePrimaryHoldsUnderACopysNameAsTaken() throws Exception {
        Volume v = api.createReady("vol", 1);
        api.cluster.snapshots().waitMs(0);
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s1")).statusCode());
        // held as "_1": a secondary's, or a cut not confirmed on every copy (a primary killed during it)
        assertEquals(List.of(new DesiredSnapshot(1, "s1", false)),
                desired(report(v, "[" + held(1, "_1", 0) + "]"), v).snapshots(), "still asked of the primary");
        assertEquals(SnapshotState.CREATING, api.store.volume("vol").orElseThrow().snapshots().getFirst().state());
        assertEquals(List.of(), desired(report(v, "[" + held(1, "s1", 0) + "]"), v).snapshots());
        assertEquals(SnapshotState.READY, api.store.volume("vol").orElseThrow().snapshots().getFirst().state());
    }

    @Test
    void shouldListOldestFirstWithIdsNeverReused() throws Exception {
        Volume v = api.createReady("vol", 1);
        api.cluster.snapshots().waitMs(0);
        for (String n : List.of("b", "a", "c")) {
            assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap(n)).statusCode());
        }
        report(v, "[" + held(1, "b", 0) + "," + held(2, "a", 0) + "]"); // c not yet taken
        assertEquals(202, api.send("DELETE", "/v1/volumes/vol/snapshots/a", null).statusCode());
        report(v, "[" + held(1, "b", 0) + "]"); // a deleted on the node: its record goes
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("a")).statusCode());
        var list = List.of(Json.read(api.get("/v1/volumes/vol/snapshots").body(), Snapshot[].class));
        assertEquals(List.of("b 1 ready", "c 3 creating", "a 4 creating"), list.stream()
                .map(s -> s.name() + " " + s.id() + " " + s.state().name().toLowerCase()).toList());
    }

    @Test
    void shouldDeleteOnceThePrimaryNoLongerReportsIt() throws Exception {
        Volume v = api.createReady("vol", 1);
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s1")).statusCode());
        report(v, "[" + held(1, "s1", 0) + "]");
        awaitState("vol", "s1", SnapshotState.READY);

        api.cluster.snapshots().waitMs(8_000);
        var deleted = async("DELETE", "/v1/volumes/vol/snapshots/s1", null);
        awaitState("vol", "s1", SnapshotState.DELETING);
        DesiredVolume d = desired(report(v, "[" + held(1, "s1", 0) + "]"), v); // still held: told to delete
        assertEquals(List.of(new DesiredSnapshot(1, "s1", true)), d.snapshots());
        awaitState("vol", "s1", SnapshotState.DELETING);
        report(v, "[]");

        var r = deleted.get(10, TimeUnit.SECONDS);
        assertEquals(204, r.statusCode(), r.body());
        assertProblem(api.get("/v1/volumes/vol/snapshots/s1"), 404, ProblemTypes.SNAPSHOT_NOT_FOUND);
        assertEquals(List.of(), desired(report(v, "[]"), v).snapshots());
    }

    @Test
    void shouldAnswer202DeletingWhenThePrimaryStillHoldsIt() throws Exception {
        Volume v = api.createReady("vol", 1);
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s1")).statusCode());
        report(v, "[" + held(1, "s1", 0) + "]");
        var r = api.send("DELETE", "/v1/volumes/vol/snapshots/s1", null);
        assertEquals(202, r.statusCode(), r.body());
        assertEquals(SnapshotState.DELETING, Json.read(r.body(), Snapshot.class).state());
        assertEquals(202, api.send("DELETE", "/v1/volumes/vol/snapshots/s1", null).statusCode()); // idempotent
    }

    @Test
    void shouldRefuseBadNamesUnknownVolumesAndSnapshots() throws Exception {
        api.createReady("vol", 1);
        for (String bad : List.of("-s", "", "a b", "x".repeat(65))) {
            var p = assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap(bad)), 400,
                    ProblemTypes.VALIDATION);
            assertTrue(p.detail().contains("name"), p.detail());
        }
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("Daily.2026-12_07")).statusCode());
        assertProblem(api.send("POST", "/v1/volumes/nope/snapshots", snap("s")), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.get("/v1/volumes/nope/snapshots"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.get("/v1/volumes/vol/snapshots/nope"), 404, ProblemTypes.SNAPSHOT_NOT_FOUND);
        assertProblem(api.send("DELETE", "/v1/volumes/vol/snapshots/nope", null), 404,
                ProblemTypes.SNAPSHOT_NOT_FOUND);
    }

    @Test
    void shouldRefuseACopyNotInSyncNotReadyExistingAndOverTheLimit() throws Exception {
        api.register("n2", 1024 * MIB);
        Volume rep = api.createReady("rep", 2);
        api.cluster.snapshots().waitMs(0);
        assertEquals(202, api.send("POST", "/v1/volumes/rep/snapshots", snap("every-copy")).statusCode(),
                "a replicated volume with every copy in sync takes one");
        String secondary = rep.copies().get(1).nodeId();
        assertEquals(200, api.send("POST", "/v1/volumes/rep/copies/" + secondary + "/stale",
                "{\"epoch\":" + rep.epoch() + ",\"reporter\":\"" + rep.nodeId() + "\"}").statusCode());
        var p = assertProblem(api.send("POST", "/v1/volumes/rep/snapshots", snap("s")), 409,
                ProblemTypes.VOLUME_NOT_READY);
        assertTrue(p.detail().contains(secondary + " stale") && p.detail().contains("every copy in sync"),
                p.detail());
        assertEquals(1, api.store.volume("rep").orElseThrow().snapshots().size(), "nothing recorded for the refusal");

        assertEquals(201, api.send("POST", "/v1/volumes", "{\"name\":\"new\",\"sizeBytes\":1048576}").statusCode());
        assertProblem(api.send("POST", "/v1/volumes/new/snapshots", snap("s")), 409, ProblemTypes.VOLUME_NOT_READY);

        api.createReady("vol", 1);
        api.cluster.snapshots().waitMs(0);
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s0")).statusCode());
        assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap("s0")), 409, ProblemTypes.SNAPSHOT_EXISTS);
        for (int i = 1; i < 32; i++) {
            assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s" + i)).statusCode());
        }
        p = assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap("s32")), 409,
                ProblemTypes.SNAPSHOT_LIMIT);
        assertTrue(p.detail().contains("32"), p.detail());

        assertEquals(202, api.send("DELETE", "/v1/volumes/vol", null).statusCode());
        assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap("s")), 409, ProblemTypes.VOLUME_DELETING);
    }

    @Test
    void shouldNeedTheClusterTokenToWriteAndTheReadTokenToRead() throws Exception {
        api.createReady("vol", 1);
        assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap("s"), ApiHarness.READ_TOKEN,
                "application/json"), 403, ProblemTypes.FORBIDDEN);
        assertProblem(api.send("POST", "/v1/volumes/vol/snapshots", snap("s"), null, "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertProblem(api.send("DELETE", "/v1/volumes/vol/snapshots/s", null, ApiHarness.READ_TOKEN, null), 403,
                ProblemTypes.FORBIDDEN);
        assertProblem(api.send("GET", "/v1/volumes/vol/snapshots", null, api.credentials.get("n1"), null), 403,
                ProblemTypes.FORBIDDEN);
        assertEquals(200, api.get("/v1/volumes/vol/snapshots").statusCode());
    }

    @Test
    void shouldSendSnapshotsOnlyToThePrimary() throws Exception {
        api.register("n2", 1024 * MIB);
        Volume v = api.createReady("rep", 2);
        // put it in the record directly: who is told, whatever the API's checks
        var current = api.store.volumeVersioned("rep").orElseThrow();
        VolumeRecord rec = current.value().withSnapshots(List.of(
                new SnapshotRecord(1, "s1", 1, 1, SnapshotState.CREATING, 0, 0)), 2);
        assertTrue(api.store.replaceVolume("rep", current.revision(), rec));
        String secondary = v.copies().get(1).nodeId();
        assertEquals(List.of(new DesiredSnapshot(1, "s1", false)),
                desired(api.heartbeat(v.nodeId(), ApiHarness.ready(v, "")), v).snapshots());
        assertEquals(List.of(), desired(api.heartbeat(secondary, ApiHarness.ready(v, "")), v).snapshots());
    }

    @Test
    void shouldDeleteTheSnapshotsWithTheVolume() throws Exception {
        Volume v = api.createReady("vol", 1);
        assertEquals(202, api.send("POST", "/v1/volumes/vol/snapshots", snap("s1")).statusCode());
        report(v, "[" + held(1, "s1", 0) + "]");
        assertEquals(202, api.send("DELETE", "/v1/volumes/vol", null).statusCode());
        assertEquals(List.of(), desired(report(v, "[" + held(1, "s1", 0) + "]"), v).snapshots()); // the volume goes
        api.heartbeat(v.nodeId(), "[]");
        assertTrue(api.store.volume("vol").isEmpty());
        Volume again = api.createReady("vol", 1);
        assertEquals("[]", api.get("/v1/volumes/vol/snapshots").body());
        assertTrue(api.store.volume("vol").orElseThrow().snapshots().isEmpty(), again.name());
        assertEquals(1, api.store.volume("vol").orElseThrow().nextSnapshotId());
    }
}
