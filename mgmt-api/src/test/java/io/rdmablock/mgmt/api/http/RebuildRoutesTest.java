package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.cluster.ClusterService;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.ready;
import static io.rdmablock.mgmt.api.http.ApiHarness.roles;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rebuild and drain (docs/resync.md, "Rebuild") with a short {@code rebuildAfterMs} on the harness's manual clock:
 * a down node's copy, a removed node's, a drained primary, undrain. The test drives {@link ClusterService#sweep}.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class RebuildRoutesTest {
    /** The metadata store this run uses (the contract suite runs on each). */
    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private static final long MIB = 1L << 20;
    private static final long REBUILD_AFTER_MS = 3_000;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind, REBUILD_AFTER_MS).deploy(vertx);
        api.nowMs.addAndGet(ClusterService.DEFAULT_LEASE_MS + 1); // past the first lease after the start
        api.register("n1", 1024 * MIB);
        api.register("n2", 2048 * MIB);
        api.register("n3", 4096 * MIB);
        api.register("n4", 1000 * MIB);
    }

    /** Steps the clock by {@code ms}; the given nodes heartbeat after it. */
    private void advance(long ms, Volume v, String... alive) throws Exception {
        api.nowMs.addAndGet(ms);
        for (String n : alive) { // a node reports the volume only once it holds a copy
            boolean holds = api.volume(v.name()).copies().stream().anyMatch(c -> c.nodeId().equals(n));
            api.heartbeat(n, holds ? ready(v, "") : "[]");
        }
    }

    private void resync(String node, long epoch, String primary) throws Exception {
        for (String to : List.of("syncing", "in-sync")) {
            var r = api.send("POST", "/v1/volumes/a/copies/" + node + "/" + to,
                    "{\"epoch\":" + epoch + ",\"reporter\":\"" + primary + "\"}");
            assertEquals(200, r.statusCode(), r.body());
        }
    }

    @Test
    void shouldRebuildTheCopyOfANodeDownPastTheDelayThenHaveItDeletedWhenItReturns() throws Exception {
        Volume v = api.createReady("a", 3); // n3 primary, n2, n1
        advance(REBUILD_AFTER_MS / 2, v, "n3", "n2", "n4");
        api.cluster.sweep();
        assertEquals(3, api.volume("a").copies().size(), "not yet past the delay");
        advance(REBUILD_AFTER_MS / 2 + 1, v, "n3", "n2", "n4");
        api.cluster.sweep();
        Volume added = api.volume("a");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n1 secondary in_sync",
                "n4 secondary stale"), roles(added), "replicas + 1 copies while rebuilding");
        assertEquals(1, added.epoch(), "adding a stale copy keeps the epoch");
        DesiredVolume onN4 = api.heartbeat("n4", "[]").volumes().getFirst();
        assertEquals(false, onN4.provisioned(), "the new node creates it empty");
        assertEquals(CopyRole.SECONDARY, onN4.role());
        api.cluster.sweep();
        assertEquals(4, api.volume("a").copies().size(), "the replaced copy stays until the replacement is in sync");
        resync("n4", 1, "n3");
        api.cluster.sweep();
        Volume done = api.volume("a");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n4 secondary in_sync"), roles(done));
        assertEquals(3, done.epoch(), "in-sync (epoch + 1), then the removal (epoch + 1)");
        assertEquals(VolumeState.READY, done.state());
        var back = api.heartbeat("n1", ready(v, "")).volumes();
        assertEquals(1, back.size());
        assertEquals(VolumeState.DELETING, back.getFirst().state(), "the returning node deletes its old copy");
        assertEquals(List.of(), api.heartbeat("n1", "[]").volumes(), "deleted: forgotten");
        assertEquals(List.of(), api.heartbeat("n1", ready(v, "")).volumes());
    }

    @Test
    void shouldSwitchOverAPrimaryOnARemovedNodeAndRebuildIt() throws Exception {
        Volume v = api.createReady("a", 2); // n3 primary, n2
        assertEquals(204, api.send("DELETE", "/v1/nodes/n3", null).statusCode());
        advance(ClusterService.DEFAULT_LEASE_MS / 4, v, "n2", "n1", "n4");
        api.cluster.sweep();
        Volume switched = api.volume("a");
        assertEquals(List.of("n2 primary in_sync", "n3 secondary stale"), roles(switched));
        assertEquals(2, switched.epoch());
        Long wait = api.heartbeat("n2", ready(v, "")).volumes().getFirst().leaseWaitMs();
        assertTrue(wait != null && wait > 0 && wait <= ClusterService.DEFAULT_LEASE_MS,
                "the removed node was told it was primary a moment ago: its lease is waited out, " + wait);
        api.cluster.sweep();
        assertEquals(List.of("n2 primary in_sync", "n3 secondary stale", "n1 secondary stale"),
                roles(api.volume("a")), "replacement on the most free node up holding no copy");
        resync("n1", 2, "n2");
        api.cluster.sweep();
        assertEquals(List.of("n2 primary in_sync", "n1 secondary in_sync"), roles(api.volume("a")));
    }

    @Test
    void shouldDrainAPrimaryBySwitchingOverOnceItsReplacementIsInSync() throws Exception {
        Volume v = api.createReady("a", 2); // n3 primary, n2
        assertEquals(200, api.send("POST", "/v1/nodes/n3/drain", null).statusCode());
        api.cluster.sweep();
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n1 secondary stale"),
                roles(api.volume("a")));
        api.cluster.sweep();
        assertEquals("n3", api.volume("a").nodeId(), "no switchover before the replacement is in sync");
        resync("n1", 1, "n3");
        api.heartbeat("n3", ready(v, "")); // told primary just now
        api.nowMs.addAndGet(100);
        api.heartbeat("n1", ready(v, ""));
        api.heartbeat("n2", ready(v, ""));
        api.cluster.sweep();
        Volume switched = api.volume("a"); // the verticle's own sweep may already have removed n3's copy too
        assertEquals("n1 primary in_sync", roles(switched).getFirst(), "the lowest-id in-sync staying secondary");
        assertTrue(switched.epoch() >= 3, "switchover: epoch + 1");
        assertEquals(ClusterService.DEFAULT_LEASE_MS - 100,
                api.heartbeat("n1", ready(v, "")).volumes().getFirst().leaseWaitMs(),
                "the old primary is alive: the new one waits out its lease from the last answer that told it");
        assertEquals(CopyRole.SECONDARY, api.heartbeat("n3", ready(v, "")).volumes().getFirst().role());
        api.cluster.sweep();
        assertEquals(List.of("n1 primary in_sync", "n2 secondary in_sync"), roles(api.volume("a")));
        assertEquals(VolumeState.DELETING, api.heartbeat("n3", ready(v, "")).volumes().getFirst().state());
        var removed = api.send("DELETE", "/v1/nodes/n3", null);
        assertEquals(204, removed.statusCode(), "a drained node holding nothing can be removed");
    }

    @Test
    void shouldRemoveReplacementsNotYetInSyncOnUndrain() throws Exception {
        api.createReady("a", 3);
        assertEquals(200, api.send("POST", "/v1/nodes/n1/drain", null).statusCode());
        api.cluster.sweep();
        assertEquals(4, api.volume("a").copies().size());
        assertEquals(200, api.send("POST", "/v1/nodes/n1/undrain", null).statusCode());
        api.cluster.sweep();
        Volume v = api.volume("a");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync", "n1 secondary in_sync"), roles(v));
        assertEquals(2, v.epoch());
        assertTrue(api.get("/metrics").body().contains("rdmablock_volume_copies{state=\"in_sync\"} 3"));
        assertEquals(Json.read(api.get("/v1/nodes").body(), io.rdmablock.mgmt.client.Node[].class).length, 4);
    }

    @Test
    void shouldRemoveAnInSyncReplacementOnUndrainBeforeTheSwitchover() throws Exception {
        api.createReady("a", 2); // n3 primary, n2
        assertEquals(200, api.send("POST", "/v1/nodes/n3/drain", null).statusCode());
        api.cluster.sweep();
        resync("n1", 1, "n3");
        assertEquals(200, api.send("POST", "/v1/nodes/n3/undrain", null).statusCode());
        api.cluster.sweep();
        Volume v = api.volume("a");
        assertEquals(List.of("n3 primary in_sync", "n2 secondary in_sync"), roles(v), "the replacement goes");
        assertEquals(3, v.epoch());
        api.cluster.sweep();
        assertEquals(3, api.volume("a").epoch(), "nothing more to do");
    }

    @Test
    void shouldCountADeletingVolumesCopyOnARemovedNodeAsDeleted() throws Exception {
        Volume v = api.createReady("a", 2); // n3 primary, n2
        assertEquals(202, api.send("DELETE", "/v1/volumes/a", null).statusCode());
        api.heartbeat("n3", "[]");
        assertEquals(204, api.send("DELETE", "/v1/nodes/n2", null).statusCode());
        assertEquals(404, api.get("/v1/volumes/" + v.name()).statusCode(), "no copy left to wait for");
    }

    @Test
    void shouldNotAddAReplacementWithoutAPrimaryToResyncIt() throws Exception {
        Volume v = api.createReady("one", 1); // n3
        advance(REBUILD_AFTER_MS + 1, v, "n1", "n2", "n4");
        api.cluster.sweep();
        assertEquals(List.of("n3 primary in_sync"), roles(api.volume("one")), "nothing to copy from");
        assertEquals(200, api.send("POST", "/v1/nodes/n2/drain", null).statusCode()); // a live single copy moves
        Volume two = api.createReady("two", 1);
        assertEquals("n1", two.nodeId(), "n3 is down, n2 draining: the most free up node");
        assertEquals(200, api.send("POST", "/v1/nodes/n1/drain", null).statusCode());
        api.cluster.sweep();
        assertEquals(List.of("n1 primary in_sync", "n4 secondary stale"), roles(api.volume("two")));
        api.heartbeat("n4", "[]");
        var r = api.send("POST", "/v1/volumes/two/copies/n4/syncing", "{\"epoch\":1,\"reporter\":\"n1\"}");
        assertEquals(200, r.statusCode(), r.body());
        r = api.send("POST", "/v1/volumes/two/copies/n4/in-sync", "{\"epoch\":1,\"reporter\":\"n1\"}");
        assertEquals(200, r.statusCode(), r.body());
        api.cluster.sweep();
        assertEquals(List.of("n4 primary in_sync", "n1 secondary stale"), roles(api.volume("two")),
                "a single copy on a draining node is switched over to its in-sync replacement");
        api.cluster.sweep();
        assertEquals(List.of("n4 primary in_sync"), roles(api.volume("two")));
    }
}
