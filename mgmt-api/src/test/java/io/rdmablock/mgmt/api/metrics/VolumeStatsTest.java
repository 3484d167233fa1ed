package io.rdmablock.mgmt.api.metrics;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class VolumeStatsTest {
    private static String text(String volume, long reads, long writes, long readBytes, double latencySumS,
                               long latencyCount) {
        return """
                # HELP rdmablock_volume_commands_total Commands completed by the target, by volume and opcode
                # TYPE rdmablock_volume_commands_total counter
                rdmablock_volume_commands_total{opcode="read",volume="%1$s"} %2$d
                rdmablock_volume_commands_total{opcode="write",volume="%1$s"} %3$d
                rdmablock_volume_commands_total{opcode="flush",volume="%1$s"} 99
                rdmablock_volume_bytes_total{opcode="read",volume="%1$s"} %4$d
                rdmablock_volume_command_duration_seconds_bucket{opcode="read",volume="%1$s",le="+Inf"} 1
                rdmablock_volume_command_duration_seconds_sum{opcode="read",volume="%1$s"} %5$s
                rdmablock_volume_command_duration_seconds_count{opcode="read",volume="%1$s"} %6$d
                rdmablock_target_commands_total{opcode="read"} 12345
                """.formatted(volume, reads, writes, readBytes, Double.toString(latencySumS), latencyCount);
    }

    @Test
    void shouldComputeRatesBetweenTwoScrapes() {
        var stats = new VolumeStats(10, 2000);
        stats.record("n1", 10_000, text("v1", 100, 50, 409_600, 0.001, 100));
        assertTrue(stats.snapshot().volumes().getFirst().samples().isEmpty(), "one scrape: no interval yet");
        stats.record("n1", 12_000, text("v1", 300, 150, 1_228_800, 0.005, 300));
        var series = stats.snapshot().volumes().getFirst();
        assertEquals("v1", series.volume());
        assertEquals("n1", series.nodeId());
        var s = series.samples().getFirst();
        assertEquals(12_000, s.timeMs());
        assertEquals(100.0, s.readIops(), 1e-9);
        assertEquals(50.0, s.writeIops(), 1e-9);
        assertEquals(409_600.0, s.readBytesPerSec(), 1e-9);
        assertEquals(20.0, s.latencyUs(), 1e-6); // 4 ms over 200 commands
    }

    @Test
    void shouldKeepOnlyTheLastSamples() {
        var stats = new VolumeStats(3, 1000);
        for (int i = 0; i < 10; i++) {
            stats.record("n1", 1000L * i, text("v1", 10L * i, 0, 0, 0, 0));
        }
        var samples = stats.snapshot().volumes().getFirst().samples();
        assertEquals(3, samples.size());
        assertEquals(9000, samples.getLast().timeMs());
    }

    @Test
    void shouldCountFromZeroAfterANodeRestart() {
        var stats = new VolumeStats(10, 1000);
        stats.record("n1", 1000, text("v1", 1000, 0, 0, 0, 0));
        stats.record("n1", 2000, text("v1", 5, 0, 0, 0, 0));
        assertEquals(5.0, stats.snapshot().volumes().getFirst().samples().getFirst().readIops(), 1e-9);
    }

    @Test
    void shouldDropVolumesTheNodeNoLongerReports() {
        var stats = new VolumeStats(10, 1000);
        stats.record("n1", 1000, text("v1", 1, 0, 0, 0, 0) + text("v2", 1, 0, 0, 0, 0));
        stats.record("n2", 1000, text("v3", 1, 0, 0, 0, 0));
        stats.record("n1", 2000, text("v2", 2, 0, 0, 0, 0));
        assertEquals(java.util.List.of("v2", "v3"),
                stats.snapshot().volumes().stream().map(VolumeStats.Series::volume).toList());
        stats.forgetNode("n2");
        assertEquals(1, stats.snapshot().volumes().size());
    }

    @Test
    void shouldReportUsedBytesOfNodesAndVolumes() {
        var stats = new VolumeStats(10, 1000);
        stats.record("n1", 1000, "rdmablock_node_capacity_bytes 1.0E9\nrdmablock_node_used_bytes 2097152.0\n"
                + "rdmablock_node_provisioned_bytes 1.073741824E9\n"
                + "rdmablock_volume_used_bytes{volume=\"v1\"} 1048576.0\n");
        var snap = stats.snapshot();
        assertEquals(java.util.List.of(new VolumeStats.NodeUsage("n1", 2_097_152, 1_073_741_824)), snap.nodes());
        assertEquals(1_048_576, snap.volumes().getFirst().usedBytes());
    }

    @Test
    void shouldReadEscapedLabelValues() {
        var parsed = VolumeStats.parse("rdmablock_volume_commands_total{opcode=\"read\",volume=\"a\\\"b\"} 7\n");
        assertTrue(parsed.containsKey("a\"b"), parsed.keySet().toString());
    }
}
