package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static io.rdmablock.mgmt.api.http.ApiHarness.ready;
import static io.rdmablock.mgmt.api.http.ApiHarness.roles;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/resync.md over REST: stale → syncing → in_sync (every 409, idempotent retries, authentication), a change of
 * primary moving syncing copies to stale, resync progress on GET and in metrics, verify runs.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class ResyncRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.register("n2", 2048 * MIB);
        api.register("n3", 4096 * MIB);
    }

    private HttpResponse<String> move(String volume, String nodeId, String to, long epoch, String reporter)
            throws Exception {
        return api.send("POST", "/v1/volumes/" + volume + "/copies/" + nodeId + "/" + to,
                "{\"epoch\":" + epoch + ",\"reporter\":\"" + reporter + "\"}");
    }

    private static Volume body(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    /** n3 primary; n1 stale at epoch 2. */
    private Volume withStaleN1() throws Exception {
        api.createReady("a", 3);
        return body(move("a", "n1", "stale", 1, "n3"));
    }

    @Test
    void shouldMoveAStaleCopyToSyncingKeepingTheEpochAndAnswerARetryAsItIs() throws Exception {
        withStaleN1();
        Volume v = body(move("a", "n1", "syncing", 2, "n3"));
        assertEquals(2, v.epoch(), "a syncing copy is not in the in-sync set: epoch unchanged");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n1 secondary syncing"), roles(v));
        assertEquals(v, body(move("a", "n1", "syncing", 2, "n3")), "retry: 200 as it is");
        assertEquals(v, body(move("a", "n1", "syncing", 1, "n3")), "retry under an older epoch too");
    }

    @Test
    void shouldRefuseSyncingWithEveryConflict() throws Exception {
        withStaleN1();
        assertProblem(move("a", "n2", "syncing", 2, "n3"), 409, ProblemTypes.COPY_NOT_STALE);
        assertProblem(move("a", "n3", "syncing", 2, "n3"), 409, ProblemTypes.NOT_A_SECONDARY);
        assertProblem(move("a", "n9", "syncing", 2, "n3"), 409, ProblemTypes.NOT_A_SECONDARY);
        Problem p = assertProblem(move("a", "n1", "syncing", 1, "n3"), 409, ProblemTypes.EPOCH_MISMATCH);
        assertEquals(2L, p.epoch(), "the current epoch");
        assertProblem(move("a", "n1", "syncing", 2, "n2"), 409, ProblemTypes.NOT_PRIMARY);
        assertProblem(move("b", "n1", "syncing", 2, "n3"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        var bad = assertProblem(api.send("POST", "/v1/volumes/a/copies/n1/syncing", "{\"epoch\":0,\"reporter\":\"n3\"}"),
                400, ProblemTypes.VALIDATION);
        assertTrue(bad.detail().contains("epoch"), bad.detail());
        assertEquals(401, api.send("POST", "/v1/volumes/a/copies/n1/syncing", "{\"epoch\":2,\"reporter\":\"n3\"}",
                null, "application/json").statusCode());
        assertEquals(401, api.send("POST", "/v1/volumes/a/copies/n1/syncing", "{\"epoch\":2,\"reporter\":\"n3\"}",
                "wrong", "application/json").statusCode());
        assertEquals(CopyState.STALE, api.volume("a").copies().get(2).state(), "nothing changed");
    }

    @Test
    void shouldDeclareASyncingCopyInSyncWithEpochPlusOneAndAnswerARetry() throws Exception {
        withStaleN1();
        assertProblem(move("a", "n1", "in-sync", 2, "n3"), 409, ProblemTypes.COPY_NOT_SYNCING);
        body(move("a", "n1", "syncing", 2, "n3"));
        assertProblem(move("a", "n1", "in-sync", 2, "n2"), 409, ProblemTypes.NOT_PRIMARY);
        assertProblem(move("a", "n1", "in-sync", 3, "n3"), 409, ProblemTypes.EPOCH_MISMATCH);
        assertEquals(401, api.send("POST", "/v1/volumes/a/copies/n1/in-sync", "{\"epoch\":2,\"reporter\":\"n3\"}",
                null, "application/json").statusCode());
        Volume v = body(move("a", "n1", "in-sync", 2, "n3"));
        assertEquals(3, v.epoch());
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n1 secondary in_sync"), roles(v));
        assertEquals(v, body(move("a", "n1", "in-sync", 2, "n3")), "a retry after a lost answer: 200 as it is");
        assertProblem(move("a", "n1", "syncing", 3, "n3"), 409, ProblemTypes.COPY_NOT_STALE);
    }

    @Test
    void shouldAbortASyncingCopyThroughStale() throws Exception {
        withStaleN1();
        body(move("a", "n1", "syncing", 2, "n3"));
        Volume v = body(move("a", "n1", "stale", 2, "n3"));
        assertEquals(3, v.epoch());
        assertEquals(CopyState.STALE, v.copies().get(2).state());
    }

    @Test
    void shouldMoveSyncingCopiesToStaleOnAChangeOfPrimary() throws Exception {
        withStaleN1();
        body(move("a", "n1", "syncing", 2, "n3"));
        api.nowMs.addAndGet(ClusterService.DEFAULT_LEASE_MS + 1);
        api.heartbeat("n2", "[]");
        var r = api.send("POST", "/v1/volumes/a/promote", "{\"nodeId\":\"n2\"}");
        Volume v = body(r);
        assertEquals(3, v.epoch());
        assertEquals(List.of("n2 primary in_sync", "n3 secondary stale", "n1 secondary stale"), roles(v),
                "the resync's source is gone: syncing -> stale in the same CAS");
    }

    @Test
    void shouldShowTheProgressThePrimaryReportsAndCountResyncBytes() throws Exception {
        Volume before = withStaleN1();
        body(move("a", "n1", "syncing", 2, "n3"));
        String resync = "\"resyncs\":[{\"nodeId\":\"n1\",\"full\":true,\"syncedBytes\":%d,\"totalBytes\":2097152,"
                + "\"bytesPerSecond\":%d}],\"verify\":null";
        api.heartbeat("n3", ready(before, resync.formatted(MIB / 2, 0)));
        VolumeCopy n1 = api.volume("a").copies().get(2);
        assertEquals(MIB / 2, n1.syncedBytes());
        assertEquals(2 * MIB, n1.totalBytes());
        assertNull(n1.etaSeconds(), "rate not known yet");
        api.heartbeat("n3", ready(before, resync.formatted(MIB, MIB / 4)));
        Volume v = api.volume("a");
        assertEquals(MIB, v.copies().get(2).syncedBytes());
        assertEquals(4L, v.copies().get(2).etaSeconds(), "1 MiB left at 256 KiB/s");
        assertNull(v.copies().get(1).syncedBytes(), "an in-sync copy has no progress");
        assertTrue(api.get("/metrics").body().contains("rdmablock_resync_bytes_total 1048576"),
                api.get("/metrics").body());
        assertTrue(api.get("/metrics").body().contains("rdmablock_volume_copies{state=\"syncing\"} 1"));
        // a secondary's report does not count as progress
        api.heartbeat("n2", ready(before, resync.formatted(2 * MIB, 1)));
        assertEquals(MIB, api.volume("a").copies().get(2).syncedBytes());
    }

    @Test
    void shouldRefuseVerifyOnAVolumeThatCannotBeCompared() throws Exception {
        api.createReady("one", 1);
        Problem p = assertProblem(api.send("POST", "/v1/volumes/one/verify", null), 409,
                ProblemTypes.VOLUME_NOT_READY);
        assertTrue(p.detail().contains("in-sync"), p.detail());
        assertProblem(api.get("/v1/volumes/one/verify"), 404, ProblemTypes.NOT_FOUND);
        assertProblem(api.get("/v1/volumes/none/verify"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(api.send("POST", "/v1/volumes/none/verify", null), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertEquals(401, api.send("POST", "/v1/volumes/one/verify", null, null, null).statusCode());
        var r = api.send("POST", "/v1/volumes", "{\"name\":\"new\",\"sizeBytes\":1048576,\"replicas\":2}");
        assertEquals(201, r.statusCode(), r.body());
        assertProblem(api.send("POST", "/v1/volumes/new/verify", null), 409, ProblemTypes.VOLUME_NOT_READY);
    }

    @Test
    void shouldRunAVerifyThroughThePrimarysReports() throws Exception {
        Volume v = api.createReady("a", 3);
        var started = api.send("POST", "/v1/volumes/a/verify", null);
        assertEquals(202, started.statusCode(), started.body());
        VerifyReport run = Json.read(started.body(), VerifyReport.class);
        assertEquals(VerifyState.PENDING, run.state());
        assertEquals(2 * MIB, run.totalBytes());
        assertEquals(run.id(), Json.read(api.send("POST", "/v1/volumes/a/verify", null).body(), VerifyReport.class)
                .id(), "a pending run is answered as it is");
        DesiredVolume onPrimary = api.heartbeat("n3", ready(v, "")).volumes().getFirst();
        assertEquals(run.id(), onPrimary.verifyId(), "the run id travels to the primary");
        assertNull(api.heartbeat("n2", ready(v, "")).volumes().getFirst().verifyId(), "not to a secondary");
        api.heartbeat("n3", ready(v, "\"verify\":{\"id\":\"" + run.id() + "\",\"state\":\"running\","
                + "\"nodeIds\":[\"n3\",\"n2\",\"n1\"],\"checkedBytes\":1048576,\"totalBytes\":2097152,"
                + "\"differences\":[],\"differing\":0,\"error\":null}"));
        VerifyReport running = Json.read(api.get("/v1/volumes/a/verify").body(), VerifyReport.class);
        assertEquals(VerifyState.RUNNING, running.state());
        assertEquals(MIB, running.checkedBytes());
        api.heartbeat("n3", ready(v, "\"verify\":{\"id\":\"other\",\"state\":\"done\",\"differing\":9}"));
        assertEquals(VerifyState.RUNNING, Json.read(api.get("/v1/volumes/a/verify").body(), VerifyReport.class)
                .state(), "a report about another run is ignored");
        api.heartbeat("n3", ready(v, "\"verify\":{\"id\":\"" + run.id() + "\",\"state\":\"done\","
                + "\"nodeIds\":[\"n3\",\"n2\",\"n1\"],\"checkedBytes\":2097152,\"totalBytes\":2097152,"
                + "\"differences\":[{\"offsetBytes\":65536,\"lengthBytes\":65536,\"nodeIds\":[\"n1\"]}],"
                + "\"differing\":1,\"error\":null}"));
        VerifyReport done = Json.read(api.get("/v1/volumes/a/verify").body(), VerifyReport.class);
        assertEquals(VerifyState.DONE, done.state());
        assertEquals(1, done.differences().size());
        assertEquals(List.of("n1"), done.differences().getFirst().nodeIds());
        assertTrue(api.get("/metrics").body().contains("rdmablock_volume_verify_differing_regions{volume=\"a\"} 1"));
        assertNull(api.heartbeat("n3", ready(v, "")).volumes().getFirst().verifyId(), "finished: not sent again");
        VerifyReport again = Json.read(api.send("POST", "/v1/volumes/a/verify", null).body(), VerifyReport.class);
        assertNotEquals(run.id(), again.id(), "a finished run is followed by a new one");
    }
}
