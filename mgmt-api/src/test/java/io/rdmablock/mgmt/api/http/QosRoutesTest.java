package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeQos;
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
 * A volume's limits (docs/qos.md): set at create, shown by GET, replaced by PATCH, sent to every copy's node in the
 * heartbeat answer, kept in the stored record; bad input is 400 problem+json naming the field and changes nothing.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.params.ParameterizedClass
@org.junit.jupiter.params.provider.EnumSource(StoreKind.class)
class QosRoutesTest {
    private static final long MIB = 1L << 20;

    @org.junit.jupiter.params.Parameter
    StoreKind kind;
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness(kind).deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.register("n2", 1024 * MIB);
    }

    private Volume create(String name, String qos) throws Exception {
        var r = api.send("POST", "/v1/volumes", "{\"name\":\"" + name + "\",\"sizeBytes\":1048576,\"replicas\":2"
                + (qos == null ? "" : ",\"qos\":" + qos) + "}");
        assertEquals(201, r.statusCode(), r.body());
        return Json.read(r.body(), Volume.class);
    }

    @Test
    void shouldSetLimitsAtCreateShowThemAndSendThemToEveryCopy() throws Exception {
        Volume v = create("v", "{\"iops\":5000,\"writeBytesPerSec\":104857600,\"burstSeconds\":2}");
        VolumeQos want = new VolumeQos(5000, 0, 0, 0, 0, 100L << 20, 2);
        assertEquals(want, v.qos());
        assertEquals(want, api.volume("v").qos(), "GET shows them");
        JsonObject raw = new JsonObject(api.get("/v1/volumes/v").body());
        assertEquals(5000, raw.getJsonObject("qos").getLong("iops"));
        for (String node : List.of("n1", "n2")) { // the primary and the copy that may succeed it
            assertEquals(want, api.heartbeat(node, "[]").volumes().getFirst().qos(), node);
        }
        assertEquals(VolumeQos.NONE, create("plain", null).qos(), "no qos: no limits");
    }

    @Test
    void shouldReplaceLimitsWithPatch() throws Exception {
        create("v", "{\"iops\":5000}");
        var r = api.send("PATCH", "/v1/volumes/v", "{\"qos\":{\"iops\":20000,\"readBytesPerSec\":1048576}}");
        assertEquals(200, r.statusCode(), r.body());
        VolumeQos want = new VolumeQos(20000, 0, 0, 0, 1L << 20, 0, 0);
        assertEquals(want, Json.read(r.body(), Volume.class).qos());
        assertEquals(want, api.volume("v").qos());
        assertEquals(want, api.heartbeat("n1", "[]").volumes().getFirst().qos(), "the node gets them next beat");
        r = api.send("PATCH", "/v1/volumes/v", "{\"qos\":{}}");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals(VolumeQos.NONE, api.volume("v").qos(), "{} lifts them");
        assertProblem(api.send("PATCH", "/v1/volumes/nope", "{\"qos\":{\"iops\":1}}"), 404,
                ProblemTypes.VOLUME_NOT_FOUND);
    }

    @Test
    void shouldRefuseBadLimitsNamingTheFieldAndChangeNothing() throws Exception {
        create("v", "{\"iops\":5000}");
        String[][] bad = {
                {"{\"iops\":-1}", "qos.iops"},
                {"{\"iops\":10000001}", "qos.iops"},
                {"{\"readIops\":-5}", "qos.readIops"},
                {"{\"bytesPerSec\":1099511627777}", "qos.bytesPerSec"},
                {"{\"iops\":1,\"burstSeconds\":3601}", "qos.burstSeconds"},
                {"{\"burstSeconds\":2}", "qos.burstSeconds"},
                {"{\"iopsPerGiB\":10,\"iopsPerGiBMin\":500,\"iopsPerGiBMax\":100}", "qos.iopsPerGiBMin"},
                {"{\"iopsPerGiBMax\":100}", "qos.iopsPerGiBMax"},
        };
        for (String[] b : bad) {
            var p = assertProblem(api.send("PATCH", "/v1/volumes/v", "{\"qos\":" + b[0] + "}"), 400,
                    ProblemTypes.VALIDATION);
            assertTrue(p.detail().contains(b[1]), b[0] + " -> " + p.detail());
            p = assertProblem(api.send("POST", "/v1/volumes", "{\"name\":\"w\",\"sizeBytes\":1048576,\"qos\":"
                    + b[0] + "}"), 400, ProblemTypes.VALIDATION);
            assertTrue(p.detail().contains(b[1]), "create " + b[0] + " -> " + p.detail());
        }
        // a PATCH that also grows the volume changes nothing when its qos is refused
        var p = assertProblem(api.send("PATCH", "/v1/volumes/v",
                "{\"sizeBytes\":2097152,\"qos\":{\"burstSeconds\":1}}"), 400, ProblemTypes.VALIDATION);
        assertTrue(p.detail().contains("qos.burstSeconds"), p.detail());
        Volume v = api.volume("v");
        assertEquals(VolumeQos.ofIops(5000), v.qos(), "nothing changed");
        assertEquals(MIB, v.sizeBytes(), "nothing changed");
        assertEquals(404, api.get("/v1/volumes/w").statusCode(), "no volume created");
    }

    @Test
    void shouldKeepLimitsInTheStoredRecord() {
        VolumeQos q = new VolumeQos(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        VolumeRecord r = VolumeRecord.created("id", "v", MIB, 4096, 1, List.of(), List.of("n1"), 1, false, q);
        assertEquals(q, Json.read(Json.write(r), VolumeRecord.class).qos());
        assertEquals(q, r.withState(io.rdmablock.mgmt.client.VolumeState.READY).withAllowedHosts(List.of("*"))
                .withRequireAuth(true).qos(), "kept by every change");
        JsonObject old = new JsonObject(Json.write(r));
        old.remove("qos"); // as a server before limits wrote it
        assertEquals(VolumeQos.NONE, Json.read(old.encode(), VolumeRecord.class).qos());
    }

    @Test
    void shouldShowThePrimarysHeldCommandsFromItsLastHeartbeatOnly() throws Exception {
        Volume v = create("v", "{\"iops\":100}");
        String primary = v.nodeId();
        String secondary = v.copies().stream().map(c -> c.nodeId()).filter(n -> !n.equals(primary)).findFirst()
                .orElseThrow();
        assertEquals(null, api.volume("v").qosActivity(), "nothing reported yet");
        assertEquals(false, new JsonObject(api.get("/v1/volumes/v").body()).containsKey("qosActivity"),
                "absent from the JSON");
        api.heartbeat(primary, ApiHarness.ready(v, "\"qosActivity\":{\"heldCommands\":7,\"delayedSeconds\":1.5}"));
        api.heartbeat(secondary, ApiHarness.ready(v, "\"qosActivity\":{\"heldCommands\":3,\"delayedSeconds\":9}"));
        assertEquals(new io.rdmablock.mgmt.client.QosActivity(7, 1.5), api.volume("v").qosActivity(),
                "the primary's, not the secondary's");
        assertEquals(7, new JsonObject(api.get("/v1/volumes/v").body()).getJsonObject("qosActivity")
                .getInteger("heldCommands"));
        api.heartbeat(primary, ApiHarness.ready(v, ""));
        assertEquals(null, api.volume("v").qosActivity(), "the last heartbeat's: none now");
        var bad = api.send("POST", "/v1/nodes/" + primary + "/heartbeat", "{\"freeBytes\":1,\"volumes\":"
                + ApiHarness.ready(v, "\"qosActivity\":{\"heldCommands\":-1,\"delayedSeconds\":0}") + "}",
                api.credentials.getOrDefault(primary, ApiHarness.TOKEN), "application/json");
        assertEquals(400, bad.statusCode(), bad.body());
    }
}
