package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.metrics.ApiMetrics;
import io.rdmablock.mgmt.client.Volume;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import static io.rdmablock.mgmt.api.http.ApiHarness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The management server's per-node, per-volume and per-copy state gauges and its leader gauge on {@code /metrics}
 * (ops/grafana's alert rules name the node, volume and copy from them): a copy going stale then syncing with
 * progress, nodes going down, the volume degraded then unavailable; the leader gauge following its supplier.
 */
@ExtendWith(VertxExtension.class)
class ClusterStateMetricsTest {
    private static final long MIB = 1L << 20;
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");
    private ApiHarness api;

    @BeforeEach
    void deploy(Vertx vertx) throws Exception {
        api = new ApiHarness().deploy(vertx);
        api.register("n1", 1024 * MIB);
        api.register("n2", 2048 * MIB);
        api.register("n3", 4096 * MIB);
    }

    /** @return the value of the sample {@code name} whose labels are exactly {@code labels}, null when absent */
    static Double sample(String exposition, String name, Map<String, String> labels) {
        for (String line : exposition.split("\n")) {
            var m = SAMPLE.matcher(line);
            if (!m.matches() || !m.group(1).equals(name)) {
                continue;
            }
            var got = new HashMap<String, String>();
            var l = LABEL.matcher(m.group(2) == null ? "" : m.group(2));
            while (l.find()) {
                got.put(l.group(1), l.group(2));
            }
            if (got.equals(labels)) {
                return Double.parseDouble(m.group(3));
            }
        }
        return null;
    }

    private String metrics() throws Exception {
        var r = api.get("/metrics");
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    private void move(String nodeId, String to, long epoch) throws Exception {
        var r = api.send("POST", "/v1/volumes/a/copies/" + nodeId + "/" + to,
                "{\"epoch\":" + epoch + ",\"reporter\":\"n3\"}");
        assertEquals(200, r.statusCode(), r.body());
    }

    @Test
    void shouldNameEachVolumeCopyAndNodeWithItsState() throws Exception {
        Volume v = api.createReady("a", 3);
        assertEquals("n3", v.nodeId(), "primary on the node with the most room");
        String m = metrics();
        assertEquals(1.0, sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "ready")), m);
        assertEquals(1.0, sample(m, "rdmablock_volume_copy_state",
                Map.of("volume", "a", "node", "n1", "role", "secondary", "state", "in_sync")), m);
        assertEquals(1.0, sample(m, "rdmablock_volume_copy_state",
                Map.of("volume", "a", "node", "n3", "role", "primary", "state", "in_sync")), m);
        for (String n : new String[]{"n1", "n2", "n3"}) {
            assertEquals(1.0, sample(m, "rdmablock_node_state", Map.of("node", n, "state", "up")), m);
        }
        assertEquals(1.0, sample(m, "rdmablock_mgmt_leader", Map.of()), "a single server leads: " + m);

        move("n1", "stale", 1);
        m = metrics();
        assertEquals(1.0, sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "degraded")), m);
        assertNull(sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "ready")), m);
        assertEquals(1.0, sample(m, "rdmablock_volume_copy_state",
                Map.of("volume", "a", "node", "n1", "role", "secondary", "state", "stale")), m);
        assertNull(sample(m, "rdmablock_volume_copy_state",
                Map.of("volume", "a", "node", "n1", "role", "secondary", "state", "in_sync")), m);

        move("n1", "syncing", 2);
        assertNull(sample(metrics(), "rdmablock_volume_copy_resync_copied_bytes", Map.of("volume", "a", "node", "n1")),
                "no progress reported yet: absent");
        api.heartbeat("n3", ready(v, "\"resyncs\":[{\"nodeId\":\"n1\",\"full\":true,\"syncedBytes\":" + MIB / 2
                + ",\"totalBytes\":" + 2 * MIB + ",\"bytesPerSecond\":0}],\"verify\":null"));
        m = metrics();
        assertEquals(1.0, sample(m, "rdmablock_volume_copy_state",
                Map.of("volume", "a", "node", "n1", "role", "secondary", "state", "syncing")), m);
        assertEquals((double) (MIB / 2), sample(m, "rdmablock_volume_copy_resync_copied_bytes",
                Map.of("volume", "a", "node", "n1")), m);
        assertEquals((double) (2 * MIB), sample(m, "rdmablock_volume_copy_resync_size_bytes",
                Map.of("volume", "a", "node", "n1")), m);
        assertNull(sample(m, "rdmablock_volume_copy_resync_copied_bytes", Map.of("volume", "a", "node", "n2")),
                "an in-sync copy has no progress: " + m);

        // n1 and n2 fall silent, the primary's node n3 heartbeats: the volume serves, degraded
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1);
        api.heartbeat("n3", ready(v, ""));
        m = metrics();
        assertEquals(1.0, sample(m, "rdmablock_node_state", Map.of("node", "n1", "state", "down")), m);
        assertEquals(1.0, sample(m, "rdmablock_node_state", Map.of("node", "n2", "state", "down")), m);
        assertNull(sample(m, "rdmablock_node_state", Map.of("node", "n2", "state", "up")), m);
        assertEquals(1.0, sample(m, "rdmablock_node_state", Map.of("node", "n3", "state", "up")), m);
        assertEquals(1.0, sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "degraded")), m);

        // the primary's node falls silent too: unavailable
        api.nowMs.addAndGet(ApiHarness.NODE_TIMEOUT_MS + 1);
        m = metrics();
        assertEquals(1.0, sample(m, "rdmablock_node_state", Map.of("node", "n3", "state", "down")), m);
        assertEquals(1.0, sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "unavailable")), m);
        assertNull(sample(m, "rdmablock_volume_state", Map.of("volume", "a", "state", "degraded")), m);
    }

    @Test
    void shouldExposeOneOnlyWhileLeading() {
        var leading = new AtomicBoolean(true);
        var metrics = new ApiMetrics(api.cluster, leading::get);
        String m = new String(metrics.scrape(), StandardCharsets.UTF_8);
        assertEquals(1.0, sample(m, "rdmablock_mgmt_leader", Map.of()), m);
        leading.set(false);
        m = new String(metrics.scrape(), StandardCharsets.UTF_8);
        assertEquals(0.0, sample(m, "rdmablock_mgmt_leader", Map.of()), "a follower: " + m);
    }
}
