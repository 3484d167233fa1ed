package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover in the management plane (docs/failover.md, "Promotion"): the lease, unreachable reports, the liveness
 * sweep's promotion by compare-and-set, the operator's promote, node ordinals. The clock is the harness's manual one;
 * the test runs {@link ClusterService#sweep} itself (the verticle's periodic sweep sees the same clock).
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class FailoverRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private static final long LEASE_MS = ClusterService.DEFAULT_LEASE_MS;
    private static final String HOST = "nqn.2026-11.io.example:host1";
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = ApiHarness.manualSweep(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.register("n2", 2048 * MIB);
        api.register("n3", 4096 * MIB);
    }

    /** R copies: n3 primary, then n2, n1 (most free first); every copy reported ready. */
    private Volume create(String name, int replicas) throws Exception {
        var r = api.send("POST", "/v1/volumes", """
                {"name":"%s","sizeBytes":%d,"replicas":%d}""".formatted(name, 2 * MIB, replicas));
        assertEquals(201, r.statusCode(), r.body());
        Volume v = Json.read(r.body(), Volume.class);
        for (VolumeCopy c : v.copies()) {
            heartbeat(c.nodeId(), "[{\"id\":\"" + v.id() + "\",\"sizeBytes\":" + 2 * MIB + ",\"state\":\"ready\"}]");
        }
        return v;
    }

    private HeartbeatResponse heartbeat(String nodeId, String volumesJson) throws Exception {
        var r = api.send("POST", "/v1/nodes/" + nodeId + "/heartbeat",
                "{\"freeBytes\":1048576000,\"volumes\":" + volumesJson + "}");
        assertEquals(200, r.statusCode(), r.body());
        return Json.read(r.body(), HeartbeatResponse.class);
    }

    /** Steps the clock past the lease; the given nodes heartbeat after it (the others stay silent). */
    private void silenceAllBut(String... alive) throws Exception {
        api.nowMs.addAndGet(LEASE_MS + 1);
        for (String n : alive) {
            heartbeat(n, "[]");
        }
    }

    private HttpResponse<String> report(String volume, String nodeId, String body) throws Exception {
        return api.send("POST", "/v1/volumes/" + volume + "/copies/" + nodeId + "/unreachable", body);
    }

    private HttpResponse<String> reportUnreachable(String volume, String nodeId, long epoch) throws Exception {
        api.nowMs.incrementAndGet(); // a report strictly after the last heartbeat
        return report(volume, nodeId, "{\"epoch\":" + epoch + ",\"reporter\":\"" + HOST + "\"}");
    }

    private HttpResponse<String> promote(String volume, String body) throws Exception {
        return api.send("POST", "/v1/volumes/" + volume + "/promote", body);
    }

    private Volume get(String name) throws Exception {
        return Json.read(api.get("/v1/volumes/" + name).body(), Volume.class);
    }

    private static List<String> roles(Volume v) {
        return v.copies().stream().map(c -> c.nodeId() + " " + c.role().wireName() + " " + c.state().wireName())
                .toList();
    }

    @Test
    void shouldSendTheLeaseInEveryHeartbeatAnswer() throws Exception {
        assertEquals(LEASE_MS, heartbeat("n1", "[]").leaseMs());
    }

    @Test
    void shouldNotPromoteOnAMissedHeartbeatAlone() throws Exception {
        create("a", 3);
        silenceAllBut("n1", "n2");
        assertEquals(0, api.cluster.sweep());
        Volume v = get("a");
        assertEquals(1, v.epoch());
        assertEquals("n3", v.nodeId());
        assertEquals(VolumeState.READY, v.state(), "not reported: the primary is not lost");
    }

    @Test
    void shouldNotPromoteOnAReportAlone() throws Exception {
        create("a", 3);
        var r = reportUnreachable("a", "n3", 1);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("a", Json.read(r.body(), Volume.class).name());
        assertEquals(0, api.cluster.sweep(), "n3 heartbeated within the lease");
        // n3 heartbeats after the report: the report is superseded; then the lease lapses without a new report
        api.nowMs.incrementAndGet();
        heartbeat("n3", "[]");
        silenceAllBut("n1", "n2");
        assertEquals(0, api.cluster.sweep(), "the report is older than n3's last heartbeat");
        assertEquals(1, get("a").epoch());
        assertEquals("n3", get("a").nodeId());
    }

    @Test
    void shouldPromoteTheLowestInSyncSecondaryOnBothSignalsByOneCas() throws Exception {
        Volume before = create("a", 3);
        String n1Address = before.copies().stream().filter(c -> c.nodeId().equals("n1")).findFirst().orElseThrow()
                .fabricAddress();
        silenceAllBut("n1", "n2");
        assertEquals(200, reportUnreachable("a", "n3", 1).statusCode());
        assertEquals(VolumeState.UNAVAILABLE, get("a").state(), "lost primary: unavailable until promoted");
        assertEquals(1, api.cluster.sweep());
        Volume v = get("a");
        assertEquals(2, v.epoch(), "one CAS, epoch + 1");
        assertEquals(List.of("n1 primary in_sync", "n3 secondary stale", "n2 secondary in_sync"), roles(v));
        assertEquals("n1", v.nodeId(), "nodeId follows the new primary");
        assertEquals(n1Address, v.fabricAddress(), "fabricAddress follows the new primary");
        assertEquals(0, api.cluster.sweep(), "the new primary is alive: nothing more");
        assertEquals(2, get("a").epoch());
        DesiredVolume onN1 = heartbeat("n1", "[]").volumes().getFirst();
        assertEquals(CopyRole.PRIMARY, onN1.role());
        assertEquals(2, onN1.epoch());
        assertEquals(0L, onN1.leaseWaitMs(), "the old primary's heartbeats lapsed for a lease: nothing left to wait");
        assertNull(heartbeat("n2", "[]").volumes().getFirst().leaseWaitMs(), "a secondary gets no lease wait");
        DesiredVolume onN3 = heartbeat("n3", "[]").volumes().getFirst();
        assertEquals(CopyRole.SECONDARY, onN3.role(), "the old primary learns it is a stale secondary");
        assertEquals(CopyState.STALE, onN3.copies().stream().filter(c -> c.nodeId().equals("n3")).findFirst()
                .orElseThrow().state());
        assertTrue(api.get("/metrics").body().contains("rdmablock_volume_promotions_total 1"),
                "promotion counter");
        api.nowMs.addAndGet(100);
        assertEquals(0L, heartbeat("n1", "[]").volumes().getFirst().leaseWaitMs(),
                "n3 heartbeated 100 ms ago but was answered it is a secondary: it holds no lease (docs/resync.md)");
    }

    /** n2's heartbeat reporting volume {@code v} with the primary's silence as the copy saw it. */
    private void silent(String reporter, Volume v, String primary, long epoch) throws Exception {
        api.nowMs.incrementAndGet(); // strictly after the primary's last heartbeat
        heartbeat(reporter, "[{\"id\":\"" + v.id() + "\",\"sizeBytes\":" + v.sizeBytes() + ",\"state\":\"ready\","
                + "\"primarySilence\":{\"nodeId\":\"" + primary + "\",\"epoch\":" + epoch + ",\"silentMs\":2500}}]");
    }

    @Test
    void shouldPromoteOnASecondarysSilenceReportOnceThePrimarysLeaseLapsed() throws Exception {
        Volume v = create("a", 3);
        silent("n2", v, "n3", 1);
        assertEquals(0, api.cluster.sweep(), "n3 heartbeated within the lease: a cut from the peers alone");
        silenceAllBut("n1", "n2");
        silent("n2", v, "n3", 1);
        assertEquals(1, api.cluster.sweep(), "both signals: lease lapsed, a copy in sync heard no renewal");
        assertEquals(List.of("n1 primary in_sync", "n3 secondary stale", "n2 secondary in_sync"), roles(get("a")));
    }

    @Test
    void shouldIgnoreASilenceReportOfAnotherPrimaryOrEpochOrFromAStaleCopy() throws Exception {
        Volume v = create("a", 3);
        silenceAllBut("n1", "n2");
        silent("n2", v, "n1", 1); // not the primary
        silent("n2", v, "n3", 7); // another epoch
        assertEquals(0, api.cluster.sweep());
        var stale = api.send("POST", "/v1/volumes/a/copies/n2/stale", "{\"epoch\":1,\"reporter\":\"n3\"}");
        assertEquals(200, stale.statusCode(), stale.body());
        Volume atTwo = get("a");
        silenceAllBut("n1", "n2");
        silent("n2", atTwo, "n3", atTwo.epoch()); // a stale copy gets no renewals: its silence says nothing
        assertEquals(0, api.cluster.sweep(), roles(get("a")).toString());
        silent("n1", atTwo, "n3", atTwo.epoch());
        assertEquals(1, api.cluster.sweep(), "the in-sync copy's report counts");
    }

    @Test
    void shouldNeverPromoteAStaleCopy() throws Exception {
        create("a", 3);
        assertEquals(200, api.send("POST", "/v1/volumes/a/copies/n1/stale", "{\"epoch\":1,\"reporter\":\"n3\"}")
                .statusCode());
        silenceAllBut("n1", "n2");
        assertEquals(200, reportUnreachable("a", "n3", 2).statusCode());
        assertEquals(1, api.cluster.sweep());
        assertEquals(List.of("n2 primary in_sync", "n3 secondary stale", "n1 secondary stale"), roles(get("a")),
                "n2, not the stale n1 (lower id)");
        assertEquals(3, get("a").epoch());
    }

    @Test
    void shouldNotPromoteACopyOnANodeOutsideTheLease() throws Exception {
        create("a", 3);
        silenceAllBut("n2"); // n1 silent too
        assertEquals(200, reportUnreachable("a", "n3", 1).statusCode());
        assertEquals(1, api.cluster.sweep());
        assertEquals("n2", get("a").nodeId(), "n1 has the lower id but no heartbeat within the lease");
    }

    @Test
    void shouldWaitForAFreshCandidateRatherThanPromoteOneThatDiedWithThePrimary() throws Exception {
        create("a", 2); // n3 primary, n2 secondary
        api.nowMs.addAndGet(LEASE_MS / 2 + 1); // both silent: killed together
        heartbeat("n1", "[]");
        api.nowMs.addAndGet(LEASE_MS / 2);
        assertEquals(200, reportUnreachable("a", "n3", 1).statusCode());
        assertEquals(0, api.cluster.sweep(), "n2 heartbeated within the lease but not within half of it");
        assertEquals(1, get("a").epoch());
        heartbeat("n2", "[]"); // n2 restarted
        assertEquals(1, api.cluster.sweep());
        assertEquals("n2", get("a").nodeId());
        assertEquals(2, get("a").epoch());
    }

    @Test
    void shouldLeaveTheVolumeUnavailableWithoutAnInSyncCopyOnAnUpNode() throws Exception {
        create("a", 2);
        assertEquals(200, api.send("POST", "/v1/volumes/a/copies/n2/stale", "{\"epoch\":1,\"reporter\":\"n3\"}")
                .statusCode());
        silenceAllBut("n1", "n2");
        assertEquals(200, reportUnreachable("a", "n3", 2).statusCode());
        assertEquals(0, api.cluster.sweep());
        assertEquals(0, api.cluster.sweep(), "still nothing (logged once)");
        Volume v = get("a");
        assertEquals(VolumeState.UNAVAILABLE, v.state());
        assertEquals(2, v.epoch(), "nothing written");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary stale"), roles(v));
    }

    @Test
    void shouldIgnoreAReportAboutAnOlderEpoch() throws Exception {
        create("a", 3);
        assertEquals(200, api.send("POST", "/v1/volumes/a/copies/n1/stale", "{\"epoch\":1,\"reporter\":\"n3\"}")
                .statusCode());
        silenceAllBut("n1", "n2");
        assertEquals(200, reportUnreachable("a", "n3", 1).statusCode(), "answered");
        assertEquals(0, api.cluster.sweep(), "not recorded: the reporter saw epoch 1, the record is at 2");
    }

    @Test
    void shouldPromoteExplicitlyOnlyWithAcceptDataLossForACopyNotInSync() throws Exception {
        create("a", 3);
        assertEquals(200, api.send("POST", "/v1/volumes/a/copies/n1/stale", "{\"epoch\":1,\"reporter\":\"n3\"}")
                .statusCode());
        var alive = assertProblem(promote("a", "{\"nodeId\":\"n2\"}"), 409, ProblemTypes.PRIMARY_ALIVE);
        assertTrue(alive.detail().contains("n3"), alive.detail());
        silenceAllBut("n1"); // n2 and n3 silent: nothing in sync on an up node
        var refused = assertProblem(promote("a", "{\"nodeId\":\"n1\"}"), 409, ProblemTypes.PROMOTE_REFUSED);
        assertTrue(refused.detail().startsWith("invalid acceptDataLoss") && refused.detail().contains("stale"),
                refused.detail());
        assertProblem(promote("a", "{\"nodeId\":\"n1\",\"acceptDataLoss\":false}"), 409,
                ProblemTypes.PROMOTE_REFUSED);
        assertEquals(2, get("a").epoch(), "nothing written");
        var r = promote("a", "{\"nodeId\":\"n1\",\"acceptDataLoss\":true}");
        assertEquals(200, r.statusCode(), r.body());
        Volume v = Json.read(r.body(), Volume.class);
        assertEquals(3, v.epoch());
        assertEquals(List.of("n1 primary in_sync", "n3 secondary stale", "n2 secondary stale"), roles(v),
                "every other copy may hold writes n1 lacks: stale");
        assertEquals("n1", v.nodeId());
        assertEquals(v, get("a"));
    }

    @Test
    void shouldPromoteAnInSyncCopyExplicitlyWithoutAcceptDataLoss() throws Exception {
        create("a", 3);
        silenceAllBut("n1", "n2");
        var r = promote("a", "{\"nodeId\":\"n2\"}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(List.of("n2 primary in_sync", "n3 secondary stale", "n1 secondary in_sync"),
                roles(Json.read(r.body(), Volume.class)));
    }

    @Test
    void shouldRejectBadPromotes() throws Exception {
        create("a", 2);
        assertProblem(promote("b", "{\"nodeId\":\"n2\"}"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        assertProblem(promote("a", "{\"nodeId\":\"n1\"}"), 404, ProblemTypes.COPY_NOT_FOUND);
        assertProblem(promote("a", "{\"nodeId\":\"n3\"}"), 409, ProblemTypes.PROMOTE_REFUSED);
        var missing = assertProblem(promote("a", "{\"acceptDataLoss\":true}"), 400, ProblemTypes.VALIDATION);
        assertTrue(missing.detail().startsWith("invalid nodeId"), missing.detail());
        var wrongType = assertProblem(promote("a", "{\"nodeId\":\"n2\",\"acceptDataLoss\":\"yes\"}"), 400,
                ProblemTypes.VALIDATION);
        assertTrue(wrongType.detail().startsWith("invalid acceptDataLoss"), wrongType.detail());
        assertProblem(api.send("POST", "/v1/volumes/a/promote", "{\"nodeId\":\"n2\"}", null, "application/json"), 401,
                ProblemTypes.UNAUTHORIZED);
        assertEquals(1, get("a").epoch());
    }

    @Test
    void shouldRejectBadReports() throws Exception {
        create("a", 2);
        var missing = assertProblem(report("a", "n3", "{\"epoch\":1}"), 400, ProblemTypes.VALIDATION);
        assertTrue(missing.detail().startsWith("invalid reporter"), missing.detail());
        var negative = assertProblem(report("a", "n3", "{\"epoch\":-1,\"reporter\":\"h\"}"), 400,
                ProblemTypes.VALIDATION);
        assertEquals("invalid epoch: epoch=-1, min=0", negative.detail());
        var badReporter = assertProblem(report("a", "n3", "{\"epoch\":1,\"reporter\":\"a b\"}"), 400,
                ProblemTypes.VALIDATION);
        assertTrue(badReporter.detail().startsWith("invalid reporter"), badReporter.detail());
        var unknown = assertProblem(report("a", "n3", "{\"epoch\":1,\"reporter\":\"h\",\"x\":1}"), 400,
                ProblemTypes.VALIDATION);
        assertTrue(unknown.detail().startsWith("invalid x"), unknown.detail());
        assertProblem(report("b", "n3", "{\"epoch\":1,\"reporter\":\"h\"}"), 404, ProblemTypes.VOLUME_NOT_FOUND);
        var noCopy = assertProblem(report("a", "n1", "{\"epoch\":1,\"reporter\":\"h\"}"), 404,
                ProblemTypes.COPY_NOT_FOUND);
        assertTrue(noCopy.detail().contains("n1"), noCopy.detail());
        assertProblem(api.send("POST", "/v1/volumes/a/copies/n3/unreachable", "{\"epoch\":1,\"reporter\":\"h\"}",
                null, "application/json"), 401, ProblemTypes.UNAUTHORIZED);
        assertEquals(200, report("a", "n3", "{\"epoch\":0,\"reporter\":\"n2\"}").statusCode(), "epoch 0: unknown");
    }

    @Test
    void shouldGiveEachNodeAStableOrdinal() throws Exception {
        List<Node> nodes = Arrays.asList(Json.read(api.get("/v1/nodes").body(), Node[].class));
        assertEquals(List.of(1, 2, 3), nodes.stream().map(Node::ordinal).toList(), "first free, in registration order");
        api.register("n1", 1024 * MIB);
        assertEquals(1, ordinalOf("n1"), "stable across re-registrations");
        assertEquals(204, api.send("DELETE", "/v1/nodes/n2", null).statusCode());
        api.register("n9", 1024 * MIB);
        assertEquals(2, ordinalOf("n9"), "the freed ordinal is reused");
        assertEquals(1, api.store.node("n1").orElseThrow().ordinal(), "persisted in the node record");
        var r = api.send("POST", "/v1/nodes", """
                {"nodeId":"n7","fabricAddress":"127.0.0.1:4420","metricsUrl":"","capacityBytes":1,"freeBytes":1}""");
        assertEquals(4, Json.read(r.body(), Node.class).ordinal(), "the registration answer carries it");
    }

    private int ordinalOf(String nodeId) throws Exception {
        return Arrays.stream(Json.read(api.get("/v1/nodes").body(), Node[].class))
                .filter(n -> n.nodeId().equals(nodeId)).findFirst().orElseThrow().ordinal();
    }
}
