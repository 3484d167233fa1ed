package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Replicated volumes over REST: placement, the copies in answers and heartbeats, the stale-copy CAS. */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class ReplicationRoutesTest {
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

    private Volume create(String name, int replicas) throws Exception {
        var r = api.send("POST", "/v1/volumes", """
                {"name":"%s","sizeBytes":%d,"replicas":%d}""".formatted(name, 2 * MIB, replicas));
        assertEquals(201, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    private HeartbeatResponse heartbeat(String nodeId, String volumesJson) throws Exception {
        var r = api.send("POST", "/v1/nodes/" + nodeId + "/heartbeat",
                "{\"freeBytes\":1048576000,\"volumes\":" + volumesJson + "}");
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), HeartbeatResponse.class);
    }

    private static String ready(Volume v, long sizeBytes) {
        return "[{\"id\":\"" + v.id() + "\",\"sizeBytes\":" + sizeBytes + ",\"state\":\"ready\"}]";
    }

    private String stale(String volume, String nodeId, long epoch, String reporter) {
        return "/v1/volumes/" + volume + "/copies/" + nodeId + "/stale";
    }

    private java.net.http.HttpResponse<String> markStale(String volume, String nodeId, long epoch, String reporter)
            throws Exception {
        return api.send("POST", stale(volume, nodeId, epoch, reporter),
                "{\"epoch\":" + epoch + ",\"reporter\":\"" + reporter + "\"}");
    }

    private Volume get(String name) throws Exception {
        return Json.read(api.get("/v1/volumes/" + name).body(), Volume.class);
    }

    @Test
    void shouldPlaceCopiesOnDistinctNodesMostFreeFirstAsPrimary() throws Exception {
        Volume v = create("a", 3);
        assertEquals(3, v.replicas());
        assertEquals(1, v.epoch());
        assertEquals(2, v.minInSync(), "default max(1, replicas - 1)");
        assertEquals(List.of("n3", "n2", "n1"), v.copies().stream().map(VolumeCopy::nodeId).toList());
        assertEquals(List.of(CopyRole.PRIMARY, CopyRole.SECONDARY, CopyRole.SECONDARY),
                v.copies().stream().map(VolumeCopy::role).toList());
        assertTrue(v.copies().stream().allMatch(c -> c.state() == CopyState.IN_SYNC), v.copies().toString());
        assertTrue(v.copies().stream().allMatch(c -> c.fabricAddress().startsWith("127.0.0.1:")), v.toString());
        assertEquals("n3", v.nodeId(), "nodeId stays the primary's");
        assertEquals(v.copies().getFirst().fabricAddress(), v.fabricAddress());
    }

    @Test
    void shouldKeepSingleCopyVolumesAsBefore() throws Exception {
        Volume v = create("a", 1);
        assertEquals(List.of(new VolumeCopy("n3", CopyRole.PRIMARY, CopyState.IN_SYNC, v.fabricAddress())),
                v.copies());
        assertEquals(1, v.minInSync());
        assertEquals(1, v.epoch());
    }

    @Test
    void shouldAnswerInsufficientNodesNamingNeededAndAvailable() throws Exception {
        api.send("POST", "/v1/nodes/n3/drain", null);
        var p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":3}"),
                409, ProblemTypes.INSUFFICIENT_NODES);
        assertEquals(3, p.needed());
        assertEquals(2, p.available());
        assertTrue(p.detail().contains("replicas=3"), p.detail());
        var tooBig = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"a\",\"sizeBytes\":1610612736,\"replicas\":2}"), 409, ProblemTypes.INSUFFICIENT_NODES);
        assertEquals(2, tooBig.needed());
        assertEquals(1, tooBig.available(), "only n2 has room for 1.5 GiB");
        assertEquals("[]", api.get("/v1/volumes").body(), "nothing written");
    }

    @Test
    void shouldRejectMinInSyncAboveReplicas() throws Exception {
        var p = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":2,\"minInSync\":3}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid minInSync: minInSync=3, min=1, max=replicas=2", p.detail());
        var zero = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":2,\"minInSync\":0}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid minInSync: minInSync=0, min=1, max=replicas=2", zero.detail());
        assertEquals("[]", api.get("/v1/volumes").body(), "nothing written");
    }

    @Test
    void shouldRejectReplicasOutsideOneToFive() throws Exception {
        var zero = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":0}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid replicas: replicas=0, min=1, max=5", zero.detail());
        var six = assertProblem(api.send("POST", "/v1/volumes",
                "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":6}"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid replicas: replicas=6, min=1, max=5", six.detail());
    }

    @Test
    void shouldKeepAnExplicitMinInSync() throws Exception {
        var r = api.send("POST", "/v1/volumes", "{\"name\":\"a\",\"sizeBytes\":1048576,\"replicas\":3,\"minInSync\":3}");
        assertEquals(201, r.statusCode(), r.body());
        assertEquals(3, Json.read(r.body(), Volume.class).minInSync());
    }

    @Test
    void shouldListTheVolumeInTheHeartbeatAnswerOfEveryCopyNodeWithItsRole() throws Exception {
        Volume v = create("a", 2);
        DesiredVolume onPrimary = heartbeat("n3", "[]").volumes().getFirst();
        DesiredVolume onSecondary = heartbeat("n2", "[]").volumes().getFirst();
        assertEquals(List.of(), heartbeat("n1", "[]").volumes(), "n1 holds no copy");
        assertEquals(CopyRole.PRIMARY, onPrimary.role());
        assertEquals(CopyRole.SECONDARY, onSecondary.role());
        for (DesiredVolume dv : List.of(onPrimary, onSecondary)) {
            assertEquals(v.id(), dv.id());
            assertEquals(1, dv.epoch());
            assertEquals(1, dv.minInSync());
            assertEquals(v.subnqn(), dv.subnqn());
            assertEquals(List.of(
                    new DesiredCopy("n3", CopyRole.PRIMARY, CopyState.IN_SYNC, v.copies().get(0).fabricAddress(),
                            "nqn.2026-11.io.rdmablock:node:n3"),
                    new DesiredCopy("n2", CopyRole.SECONDARY, CopyState.IN_SYNC, v.copies().get(1).fabricAddress(),
                            "nqn.2026-11.io.rdmablock:node:n2")), dv.copies());
        }
    }

    @Test
    void shouldBecomeReadyOnlyWhenEveryCopyReportedTheDesiredSize() throws Exception {
        Volume v = create("a", 2);
        heartbeat("n3", ready(v, 2 * MIB));
        assertEquals(VolumeState.CREATING, get("a").state(), "the secondary has not reported");
        heartbeat("n2", ready(v, MIB));
        assertEquals(VolumeState.CREATING, get("a").state(), "the secondary is not at the desired size");
        heartbeat("n2", ready(v, 2 * MIB));
        assertEquals(VolumeState.READY, get("a").state());
    }

    @Test
    void shouldNotWaitForACopyWhoseNodeIsDown() throws Exception {
        Volume v = create("a", 2);
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1); // n2 (secondary) silent from now on
        heartbeat("n3", ready(v, 2 * MIB));
        assertEquals(VolumeState.READY, get("a").state());
    }

    @Test
    void shouldProvisionEachCopyOnItsOwnReport() throws Exception {
        Volume v = create("a", 2);
        heartbeat("n3", ready(v, 2 * MIB));
        assertTrue(heartbeat("n3", ready(v, 2 * MIB)).volumes().getFirst().provisioned());
        assertEquals(false, heartbeat("n2", "[]").volumes().getFirst().provisioned(),
                "the secondary never held it: it must create it");
    }

    @Test
    void shouldMarkASecondaryStaleByCompareAndSetAndRaiseTheEpoch() throws Exception {
        Volume v = create("a", 3);
        heartbeat("n3", ready(v, 2 * MIB));
        heartbeat("n2", ready(v, 2 * MIB));
        heartbeat("n1", ready(v, 2 * MIB));
        assertEquals(VolumeState.READY, get("a").state());
        var r = markStale("a", "n2", 1, "n3");
        assertEquals(200, r.statusCode(), r.body());
        Volume after = Json.read(r.body(), Volume.class);
        assertEquals(2, after.epoch());
        assertEquals(CopyState.STALE, after.copies().get(1).state());
        assertEquals(CopyState.IN_SYNC, after.copies().get(2).state());
        assertEquals(VolumeState.DEGRADED, after.state(), "ready, 2 of 3 copies in sync");
        assertEquals(after, get("a"));
        DesiredVolume dv = heartbeat("n1", ready(v, 2 * MIB)).volumes().getFirst();
        assertEquals(2, dv.epoch());
        assertEquals(CopyState.STALE, dv.copies().get(1).state());
    }

    @Test
    void shouldAnswerTheCurrentVolumeForAnAlreadyStaleCopy() throws Exception {
        create("a", 2);
        assertEquals(200, markStale("a", "n2", 1, "n3").statusCode());
        var retried = markStale("a", "n2", 1, "n3"); // the primary lost the first answer
        assertEquals(200, retried.statusCode(), retried.body());
        assertEquals(2, Json.read(retried.body(), Volume.class).epoch(), "no second epoch change");
        var current = markStale("a", "n2", 2, "n3");
        assertEquals(200, current.statusCode(), current.body());
        assertEquals(2, Json.read(current.body(), Volume.class).epoch());
    }

    @Test
    void shouldAnswerEpochMismatchWithTheCurrentEpoch() throws Exception {
        create("a", 3);
        assertEquals(200, markStale("a", "n2", 1, "n3").statusCode());
        var p = assertProblem(markStale("a", "n1", 1, "n3"), 409, ProblemTypes.EPOCH_MISMATCH);
        assertEquals(2L, p.epoch());
        assertEquals(CopyState.IN_SYNC, get("a").copies().get(2).state(), "nothing written");
        assertProblem(markStale("a", "n1", 7, "n3"), 409, ProblemTypes.EPOCH_MISMATCH);
    }

    @Test
    void shouldRefuseAReporterThatIsNotThePrimary() throws Exception {
        create("a", 3);
        var p = assertProblem(markStale("a", "n1", 1, "n2"), 409, ProblemTypes.NOT_PRIMARY);
        assertTrue(p.detail().contains("n3"), p.detail());
        assertEquals(1, get("a").epoch(), "nothing written");
    }

    @Test
    void shouldRefuseANodeThatHoldsNoSecondaryCopy() throws Exception {
        create("a", 2);
        var primary = assertProblem(markStale("a", "n3", 1, "n3"), 409, ProblemTypes.NOT_A_SECONDARY);
        assertTrue(primary.detail().startsWith("invalid nodeId: nodeId=n3"), primary.detail());
        assertProblem(markStale("a", "n1", 1, "n3"), 409, ProblemTypes.NOT_A_SECONDARY);
        assertProblem(markStale("b", "n2", 1, "n3"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertEquals(1, get("a").epoch());
    }

    @Test
    void shouldRejectBadStaleReports() throws Exception {
        create("a", 2);
        var zero = assertProblem(markStale("a", "n2", 0, "n3"), 400, ProblemTypes.VALIDATION);
        assertEquals("invalid epoch: epoch=0, min=1", zero.detail());
        var missing = assertProblem(api.send("POST", "/v1/volumes/a/copies/n2/stale", "{\"epoch\":1}"), 400,
                ProblemTypes.VALIDATION);
        assertTrue(missing.detail().contains("reporter"), missing.detail());
        var badReporter = assertProblem(markStale("a", "n2", 1, "N 3"), 400, ProblemTypes.VALIDATION);
        assertTrue(badReporter.detail().startsWith("invalid reporter"), badReporter.detail());
        assertProblem(api.send("POST", "/v1/volumes/a/copies/n2/stale", "{\"epoch\":1,\"reporter\":\"n3\"}", null,
                "application/json"), 401, ProblemTypes.UNAUTHORIZED);
        assertEquals(1, get("a").epoch());
    }

    @Test
    void shouldCountStaleReportsInTheRouteMetrics() throws Exception {
        create("a", 2);
        markStale("a", "n2", 1, "n3");
        String metrics = api.get("/metrics").body();
        assertTrue(metrics.contains("rdmablock_mgmt_requests_total{operation=\"markCopyStale\",status=\"200\"} 1"),
                metrics);
        assertTrue(metrics.contains("rdmablock_volume_copies{state=\"in_sync\"} 1"), metrics);
        assertTrue(metrics.contains("rdmablock_volume_copies{state=\"stale\"} 1"), metrics);
    }

    @Test
    void shouldResizeEveryCopyAndCheckRoomOnEach() throws Exception {
        Volume v = create("a", 2);
        var p = assertProblem(api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":3221225472}"), 409,
                ProblemTypes.NO_CAPACITY); // n3 (primary) has room for 3 GiB, n2 (2 GiB) has not
        assertTrue(p.detail().startsWith("node n2 (secondary copy)"), p.detail());
        var grown = api.send("PATCH", "/v1/volumes/a", "{\"sizeBytes\":4194304}");
        assertEquals(200, grown.statusCode(), grown.body());
        assertEquals(4 * MIB, heartbeat("n3", ready(v, 2 * MIB)).volumes().getFirst().sizeBytes());
        assertEquals(4 * MIB, heartbeat("n2", ready(v, 2 * MIB)).volumes().getFirst().sizeBytes());
    }

    @Test
    void shouldDeleteOnEveryCopyNodeAndForgetWhenNoneReportsIt() throws Exception {
        Volume v = create("a", 2);
        heartbeat("n3", ready(v, 2 * MIB));
        heartbeat("n2", ready(v, 2 * MIB));
        assertEquals(202, api.send("DELETE", "/v1/volumes/a", null).statusCode());
        assertEquals(VolumeState.DELETING, heartbeat("n3", ready(v, 2 * MIB)).volumes().getFirst().state());
        assertEquals(VolumeState.DELETING, heartbeat("n2", ready(v, 2 * MIB)).volumes().getFirst().state());
        heartbeat("n3", "[]");
        assertEquals(200, api.get("/v1/volumes/a").statusCode(), "n2 still holds its copy");
        heartbeat("n2", "[]");
        assertProblem(api.get("/v1/volumes/a"), 404, ProblemTypes.VOLUME_NOT_FOUND);
    }

    @Test
    void shouldRefuseToRemoveANodeHoldingTheOnlyInSyncCopy() throws Exception {
        create("a", 2);
        assertEquals(200, api.send("POST", "/v1/volumes/a/copies/n2/stale", "{\"epoch\":1,\"reporter\":\"n3\"}")
                .statusCode());
        var p = assertProblem(api.send("DELETE", "/v1/nodes/n3", null), 409, ProblemTypes.NODE_IN_USE);
        assertTrue(p.detail().contains("a"), p.detail());
        assertEquals(204, api.send("DELETE", "/v1/nodes/n2", null).statusCode(),
                "a copy that can be rebuilt from an in-sync copy elsewhere does not hold its node (docs/resync.md)");
    }

    @Test
    void shouldAnswerARecordOfAnOlderServerAsOnePrimaryCopy() throws Exception {
        api.store.putVolume(Json.read("""
                {"id":"id-old","name":"old","sizeBytes":1048576,"lbaSize":4096,"replicas":1,"allowedHosts":[],
                 "nodeId":"n1","state":"ready","connectedHosts":[],"createdAtMs":1234,"provisioned":true}""",
                VolumeRecord.class));
        Volume v = get("old");
        assertEquals(1, v.epoch());
        assertEquals(1, v.minInSync());
        assertEquals(List.of(new VolumeCopy("n1", CopyRole.PRIMARY, CopyState.IN_SYNC, v.fabricAddress())),
                v.copies());
        assertEquals(VolumeState.READY, v.state());
        DesiredVolume dv = heartbeat("n1", "[{\"id\":\"id-old\",\"sizeBytes\":1048576,\"state\":\"ready\"}]")
                .volumes().getFirst();
        assertTrue(dv.provisioned());
        assertEquals(CopyRole.PRIMARY, dv.role());
    }
}
