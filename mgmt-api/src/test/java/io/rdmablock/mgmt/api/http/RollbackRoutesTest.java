package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.SnapshotRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.DesiredRollback;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeRollback;
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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code POST /v1/volumes/{name}/rollback}: the test plays the copies' nodes (their heartbeats report the connected
 * hosts and their word on the rollback), which drive rolling-back → done (record gone) or failed; the route's wait is
 * shortened ({@code RollbackLedger#waitMs}).
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class RollbackRoutesTest {
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.register("n2", 1024 * MIB);
        api.cluster.rollbacks().waitMs(200);
    }

    /** A ready volume of {@code replicas} copies holding snapshots s1 (id 1, ready), s2 (creating), s3 (ready). */
    private Volume withSnapshots(String name, int replicas) throws Exception {
        Volume v = api.createReady(name, replicas);
        var current = api.store.volumeVersioned(name).orElseThrow();
        VolumeRecord rec = current.value().withSnapshots(List.of(
                new SnapshotRecord(1, "s1", 1, 1, SnapshotState.READY, 2 * MIB, 0),
                new SnapshotRecord(2, "s2", 2, 1, SnapshotState.CREATING, 0, 0),
                new SnapshotRecord(3, "s3", 3, 1, SnapshotState.READY, 2 * MIB, 0)), 4);
        assertTrue(api.store.replaceVolume(name, current.revision(), rec));
        return v;
    }

    private static String body(String snapshot, boolean force) {
        return "{\"snapshot\":\"" + snapshot + "\",\"force\":" + force + "}";
    }

    /** The heartbeat of the copy on {@code node}: ready, with extra report members. */
    private DesiredVolume beat(Volume v, String node, String extra) throws Exception {
        HeartbeatResponse r = api.heartbeat(node, ApiHarness.ready(v, extra));
        return r.volumes().stream().filter(d -> d.id().equals(v.id())).findFirst().orElseThrow();
    }

    private static String word(String requestId, String state) {
        return "\"rollback\":{\"requestId\":\"" + requestId + "\",\"state\":\"" + state + "\",\"detail\":\"why\"}";
    }

    private Volume volume(String name) throws Exception {
        var r = api.get("/v1/volumes/" + name);
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    private CompletableFuture<HttpResponse<String>> async(String path, String body) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return api.send("POST", path, body);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private VolumeRollback awaitRollingBack(String name) throws Exception {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            VolumeRollback r = volume(name).rollback();
            if (r != null) {
                return r;
            }
            assertTrue(System.nanoTime() < deadline, "no rollback recorded on " + name);
            Thread.sleep(20);
        }
    }

    @Test
    void shouldRefuseWhileAHostIsConnectedAndFenceHostsWithForce() throws Exception {
        Volume v = withSnapshots("vol", 1);
        DesiredVolume before = beat(v, v.nodeId(), "\"connectedHosts\":[\"nqn.2026-11.io.example:h1\"]");
        var p = assertProblem(api.send("POST", "/v1/volumes/vol/rollback", body("s1", false)), 409,
                ProblemTypes.VOLUME_IN_USE);
        assertTrue(p.detail().contains("nqn.2026-11.io.example:h1") && p.detail().contains("force"), p.detail());
        assertNull(volume("vol").rollback(), "nothing recorded on a refusal");
        DesiredVolume d = beat(v, v.nodeId(), "\"connectedHosts\":[\"nqn.2026-11.io.example:h1\"]");
        assertNull(d.rollback());
        assertEquals(before.allowedHosts(), d.allowedHosts());

        var r = api.send("POST", "/v1/volumes/vol/rollback", body("s1", true));
        assertEquals(202, r.statusCode(), r.body());
        assertEquals("/v1/volumes/vol", r.headers().firstValue("Location").orElse(""));
        VolumeRollback rb = Json.read(r.body(), Volume.class).rollback();
        assertEquals(VolumeRollback.ROLLING_BACK, rb.state());
        assertEquals("s1", rb.snapshot());
        assertEquals(true, rb.force());
        assertEquals(List.of(v.nodeId()), rb.pending());
        d = beat(v, v.nodeId(), "\"connectedHosts\":[\"nqn.2026-11.io.example:h1\"]");
        assertEquals(new DesiredRollback(rb.requestId(), 1, "s1"), d.rollback());
        assertEquals(List.of(), d.allowedHosts(), "hosts are disconnected and refused while it rolls back");

        // the same snapshot again: the same request; another snapshot, or deleting this one: refused
        assertEquals(rb.requestId(), Json.read(api.send("POST", "/v1/volumes/vol/rollback", body("s1", true))
                .body(), Volume.class).rollback().requestId());
        assertProblem(api.send("DELETE", "/v1/volumes/vol/snapshots/s1", null), 409,
                ProblemTypes.ROLLBACK_IN_PROGRESS);

        d = beat(v, v.nodeId(), word(rb.requestId(), "done"));
        assertNull(d.rollback(), "done: no longer asked");
        assertEquals(before.allowedHosts(), d.allowedHosts(), "hosts admitted again");
        assertNull(volume("vol").rollback());
    }

    @Test
    void shouldAnswer200OnceEveryCopyReportedItDone() throws Exception {
        Volume v = withSnapshots("rep", 2);
        String primary = v.nodeId();
        String secondary = v.copies().get(1).nodeId();
        api.cluster.rollbacks().waitMs(8_000);
        var answer = async("/v1/volumes/rep/rollback", body("s1", false));
        VolumeRollback rb = awaitRollingBack("rep");
        assertEquals(List.of(primary, secondary), rb.pending());
        String id = rb.requestId();

        // every copy is asked, whatever its role; each reports for itself
        assertEquals(new DesiredRollback(id, 1, "s1"), beat(v, secondary, "").rollback());
        assertNull(beat(v, primary, word(id, "done")).rollback(), "the primary is done: no longer asked");
        assertEquals(List.of(secondary), volume("rep").rollback().pending());
        assertEquals(List.of(), beat(v, primary, "").allowedHosts(), "hosts refused until every copy is done");
        assertNotNull(beat(v, secondary, word(id, "waiting")).rollback());
        assertNotNull(beat(v, secondary, word("another-request", "done")).rollback(), "another request's word");
        assertEquals(VolumeRollback.ROLLING_BACK, volume("rep").rollback().state());
        beat(v, secondary, word(id, "done"));

        var r = answer.get(10, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), r.body());
        assertNull(Json.read(r.body(), Volume.class).rollback());
        assertNull(beat(v, secondary, "").rollback());
        assertEquals(v.allowedHosts(), beat(v, primary, "").allowedHosts());
    }

    @Test
    void shouldShowAFailedCopyAndAdmitHostsAgain() throws Exception {
        Volume v = withSnapshots("vol", 1);
        api.cluster.rollbacks().waitMs(8_000);
        var answer = async("/v1/volumes/vol/rollback", body("s1", false));
        String id = awaitRollingBack("vol").requestId();
        DesiredVolume d = beat(v, v.nodeId(), word(id, "failed"));
        assertNull(d.rollback());
        assertEquals(v.allowedHosts(), d.allowedHosts());
        var r = answer.get(10, TimeUnit.SECONDS);
        assertEquals(202, r.statusCode(), r.body());
        VolumeRollback rb = Json.read(r.body(), Volume.class).rollback();
        assertEquals(VolumeRollback.FAILED, rb.state());
        assertTrue(rb.detail().contains(v.nodeId()) && rb.detail().contains("why"), rb.detail());
        // a new request replaces a failed one
        api.cluster.rollbacks().waitMs(200);
        var again = api.send("POST", "/v1/volumes/vol/rollback", body("s1", false));
        assertEquals(202, again.statusCode(), again.body());
        assertTrue(!Json.read(again.body(), Volume.class).rollback().requestId().equals(id));
    }

    @Test
    void shouldRefuseBadBodiesUnknownNamesAndSnapshotsNotReady() throws Exception {
        withSnapshots("vol", 1);
        for (String bad : List.of("{}", "{\"snapshot\":\"-s\"}", "{\"snapshot\":\"s1\",\"extra\":1}",
                "{\"snapshot\":\"s1\",\"force\":\"yes\"}", "{\"snapshot\":\"s1\",\"snapshot\":\"s2\"}", "[]")) {
            var r = api.send("POST", "/v1/volumes/vol/rollback", bad);
            assertEquals(400, r.statusCode(), bad + " -> " + r.body());
        }
        assertProblem(api.send("POST", "/v1/volumes/nope/rollback", body("s1", false)), 404,
                ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.send("POST", "/v1/volumes/vol/rollback", body("nope", false)), 404,
                ProblemTypes.SNAPSHOT_NOT_FOUND);
        assertProblem(api.send("POST", "/v1/volumes/vol/rollback", body("s2", false)), 409,
                ProblemTypes.SNAPSHOT_NOT_READY);
        assertNull(volume("vol").rollback(), "nothing recorded by a refusal");
        assertProblem(api.send("POST", "/v1/volumes/vol/rollback", body("s1", false), ApiHarness.READ_TOKEN,
                "application/json"), 403, ProblemTypes.FORBIDDEN);

        assertEquals(202, api.send("POST", "/v1/volumes/vol/rollback", body("s1", false)).statusCode());
        assertProblem(api.send("POST", "/v1/volumes/vol/rollback", body("s3", true)), 409,
                ProblemTypes.ROLLBACK_IN_PROGRESS);
    }
}
