package io.rdmablock.node.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NodeMetricsTest {

    private static String scrape(NodeMetrics m) throws Exception {
        var out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, m.registry().scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldServeMetricsOnlyOnGetMetrics() throws Exception {
        var m = new NodeMetrics();
        var server = m.serve(new java.net.InetSocketAddress("127.0.0.1", 0));
        try {
            var http = java.net.http.HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + server.getPort();
            var ok = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ok.statusCode());
            assertTrue(ok.body().contains("rdmablock_"), ok.body());
            for (String path : List.of("/", "/foo", "/-/healthy", "/admin/metrics")) {
                var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + path)).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
                assertEquals(404, r.statusCode(), path + ": " + r.body());
                assertFalse(r.body().contains("rdmablock_"), path);
            }
            for (String path : List.of("/metrics/x", "/metricsfoo")) {
                var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + path)).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
                assertEquals(404, r.statusCode(), path + ": " + r.body());
                assertFalse(r.body().contains("rdmablock_"), path);
            }
            for (String method : List.of("POST", "PUT", "DELETE")) {
                var r = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/metrics"))
                        .method(method, java.net.http.HttpRequest.BodyPublishers.ofString("x")).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
                assertEquals(405, r.statusCode(), method + ": " + r.body());
                assertEquals("GET, HEAD", r.headers().firstValue("Allow").orElse(""), method);
                assertFalse(r.body().contains("rdmablock_"), method);
            }
        } finally {
            server.close();
        }
    }

    @Test
    void shouldCountCommandsPerVolumeAndNodeWide() throws Exception {
        var m = new NodeMetrics();
        VolumeMetrics v = m.volume("vol1");
        m.started();
        m.complete(v, NodeMetrics.OP_WRITE, 4096, 20_000, 0);
        m.started();
        m.complete(v, NodeMetrics.OP_READ, 8192, 10_000, 0);
        String text = scrape(m);
        assertTrue(text.contains("rdmablock_volume_commands_total{opcode=\"write\",volume=\"vol1\"} 1.0"), text);
        assertTrue(text.contains("rdmablock_volume_bytes_total{opcode=\"read\",volume=\"vol1\"} 8192.0"), text);
        assertTrue(text.contains("rdmablock_volume_command_duration_seconds_count{opcode=\"read\",volume=\"vol1\"} 1"),
                text);
        assertTrue(text.contains("rdmablock_target_commands_total{opcode=\"write\"} 1.0"), text);
        assertEquals(1, v.commandsCompleted(NodeMetrics.OP_WRITE));
    }

    @Test
    void shouldResolveOneInstancePerVolume() {
        var m = new NodeMetrics();
        assertSame(m.volume("a"), m.volume("a"));
    }

    @Test
    void shouldRecordTheLatencyGiven() throws Exception {
        var m = new NodeMetrics();
        m.started();
        m.complete(m.volume("a"), NodeMetrics.OP_ADMIN, 0, 2_000_000, 0);
        String text = scrape(m);
        assertTrue(text.contains("rdmablock_target_command_duration_seconds_sum{opcode=\"admin\"} 0.002"), text);
    }

    @Test
    void shouldDropTheSeriesOfADeletedVolume() throws Exception {
        var m = new NodeMetrics();
        VolumeMetrics v = m.volume("gone");
        m.started();
        m.complete(v, NodeMetrics.OP_WRITE, 512, 1_000, 0);
        m.removeVolume("gone");
        m.started();
        m.complete(v, NodeMetrics.OP_WRITE, 512, 1_000, 0); // a queue still draining: goes nowhere, no failure
        assertFalse(scrape(m).contains("volume=\"gone\""));
    }

    @Test
    void shouldExposeCapacityBuildInfoAndJvmMetrics() throws Exception {
        var m = new NodeMetrics();
        m.capacity(new CapacitySource() {
            @Override
            public long capacityBytes() {
                return 1L << 30;
            }

            @Override
            public long freeBytes() {
                return 1L << 29;
            }

            @Override
            public List<VolumeUsage> volumes() {
                return List.of(new VolumeUsage("v1", 1L << 29, 1L << 20, 3, 2L << 20));
            }

            @Override
            public long lastSnapshotBarrierNs() {
                return 1_500_000;
            }
        });
        String text = scrape(m);
        assertTrue(text.contains("rdmablock_node_capacity_bytes 1.073741824E9"), text);
        assertTrue(text.contains("rdmablock_node_used_bytes 1048576.0"), text);
        assertTrue(text.contains("rdmablock_volume_size_bytes{volume=\"v1\"} 5.36870912E8"), text);
        assertTrue(text.contains("rdmablock_volume_used_bytes{volume=\"v1\"} 1048576.0"), text);
        assertTrue(text.contains("rdmablock_volume_snapshots{volume=\"v1\"} 3.0"), text);
        assertTrue(text.contains("rdmablock_volume_snapshot_exclusive_bytes{volume=\"v1\"} 2097152.0"), text);
        assertTrue(text.contains("rdmablock_snapshot_barrier_seconds 0.0015"), text);
        assertTrue(text.contains("rdmablock_build_info{commit=\""), text);
        assertTrue(text.contains("jvm_memory_used_bytes"), text);
        assertTrue(text.contains("process_cpu_seconds_total"), text);
        assertTrue(text.contains("rdmablock_soft_accept_errors_total "), text);
    }

    @Test
    void shouldExposeTheBackgroundBudget() throws Exception {
        var m = new NodeMetrics();
        m.foregroundLatency().record(250_000);
        m.background(new BackgroundSource() {
            @Override
            public long rateBytesPerSecond() {
                return 4L << 20;
            }

            @Override
            public long grantedBytes() {
                return m.foregroundLatency().commands() << 16;
            }

            @Override
            public long baselineNs() {
                return 100_000;
            }

            @Override
            public long signalNs() {
                return m.foregroundLatency().latencyNs();
            }
        });
        String text = scrape(m);
        assertTrue(text.contains("rdmablock_node_background_rate_bytes_per_second 4194304.0"), text);
        assertTrue(text.contains("rdmablock_node_background_granted_bytes_total 65536.0"), text);
        assertTrue(text.contains("rdmablock_node_background_baseline_latency_seconds 1.0E-4"), text);
        assertTrue(text.contains("rdmablock_node_foreground_latency_seconds 2.5E-4"), text);
    }
}
