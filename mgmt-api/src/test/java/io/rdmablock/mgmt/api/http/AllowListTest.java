package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeState;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.rdmablock.mgmt.api.http.ApiHarness.assertProblem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A volume admits the hosts its allow-list names, none when it is empty (as Linux nvmet and SPDK), any with
 * {@code ["*"]}; the list can be replaced (PATCH); a record stored when empty meant any host still admits any.
 */
@ExtendWith(VertxExtension.class)
class AllowListTest {
    private static final long MIB = 1L << 20;
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(StoreKind.ROCKSDB).deploy(vertx);
        api.register("n1", 1024 * MIB);
    }

    private Volume create(String body) throws Exception {
        var r = api.send("POST", "/v1/volumes", body);
        assertEquals(201, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    @Test
    void shouldAdmitNoHostByDefaultAndTellTheNodeSo() throws Exception {
        assertEquals(List.of(), create("{\"name\":\"v\",\"sizeBytes\":1048576}").allowedHosts());
        assertEquals(List.of(), api.heartbeat("n1", "[]").volumes().getFirst().allowedHosts(),
                "the node is given the empty list (it admits no host)");
    }

    @Test
    void shouldAcceptAnyHostOnlyAsTheOnlyEntry() throws Exception {
        assertEquals(List.of("*"), create("{\"name\":\"any\",\"sizeBytes\":1048576,\"allowedHosts\":[\"*\"]}")
                .allowedHosts());
        var p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"mixed\",\"sizeBytes\":1048576,"
                + "\"allowedHosts\":[\"*\",\"" + HOST + "\"]}"), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("allowedHosts[0]") && p.detail().contains("only entry"), p.detail());
        p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"bad\",\"sizeBytes\":1048576,"
                + "\"allowedHosts\":[\"**\"]}"), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("allowedHosts"), p.detail());
    }

    @Test
    void shouldReplaceTheAllowListWithPatch() throws Exception {
        create("{\"name\":\"v\",\"sizeBytes\":1048576}");
        var r = api.send("PATCH", "/v1/volumes/v", "{\"allowedHosts\":[\"" + HOST + "\"]}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(List.of(HOST), Json.read(r.body(), Volume.class).allowedHosts());
        assertEquals(List.of(HOST), api.heartbeat("n1", "[]").volumes().getFirst().allowedHosts());
        r = api.send("PATCH", "/v1/volumes/v", "{\"allowedHosts\":[]}");
        assertEquals(List.of(), Json.read(r.body(), Volume.class).allowedHosts(), r.body());
        assertProblem(api.send("PATCH", "/v1/volumes/nope", "{\"allowedHosts\":[\"*\"]}"), 404,
                ProblemTypes.VOLUME_NOT_FOUND);
    }

    @Test
    void shouldReadARecordStoredWhenEmptyMeantAnyHostAsAnyHost() {
        VolumeRecord now = new VolumeRecord("id", "v", MIB, 4096, 1, List.of(), "n1", VolumeState.READY, List.of(),
                1, true, 1, 1, List.of(new CopyRecord("n1", io.rdmablock.mgmt.client.CopyRole.PRIMARY,
                io.rdmablock.mgmt.client.CopyState.IN_SYNC, true)), false, VolumeRecord.HOSTS_VERSION);
        JsonObject stored = new JsonObject(Json.write(now));
        assertEquals(VolumeRecord.HOSTS_VERSION, stored.getInteger("hostsVersion"));
        assertEquals(List.of(), Json.read(stored.encode(), VolumeRecord.class).allowedHosts(), "made now: none");
        stored.remove("hostsVersion"); // as a server before 2026-12 wrote it
        VolumeRecord old = Json.read(stored.encode(), VolumeRecord.class);
        assertEquals(List.of("*"), old.allowedHosts(), "stored when empty meant any host: any host, said so");
        assertEquals(VolumeRecord.HOSTS_VERSION, old.hostsVersion());
        stored.put("allowedHosts", List.of(HOST));
        assertEquals(List.of(HOST), Json.read(stored.encode(), VolumeRecord.class).allowedHosts());
    }
}
