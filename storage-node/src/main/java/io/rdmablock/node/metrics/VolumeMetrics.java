package io.rdmablock.node.metrics;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;

/**
 * The per-volume data points of one volume, one per opcode index of {@link NodeMetrics}, resolved once when a queue
 * connects ({@link NodeMetrics#volume}), so a completion on the I/O path indexes arrays and looks up no label:
 *
 * <pre>
 * rdmablock_volume_commands_total{volume,opcode}
 * rdmablock_volume_bytes_total{volume,opcode}
 * rdmablock_volume_command_duration_seconds{volume,opcode}
 * </pre>
 *
 * <p>A queue keeps its instance for its life; when the volume is deleted its series are removed from the families
 * ({@link NodeMetrics#removeVolume}) and what a still-draining queue records goes nowhere.
 */
public final class VolumeMetrics {
    private final String volume;
    final CounterDataPoint[] ops;
    final CounterDataPoint[] bytes;
    final DistributionDataPoint[] latency;

    VolumeMetrics(String volume, CounterDataPoint[] ops, CounterDataPoint[] bytes, DistributionDataPoint[] latency) {
        this.volume = volume;
        this.ops = ops;
        this.bytes = bytes;
        this.latency = latency;
    }

    /** The volume name (the {@code volume} label). */
    public String volume() {
        return volume;
    }

    /** Commands completed on this volume for opcode index {@code op}, for tests. */
    public long commandsCompleted(int op) {
        return ops[op].getLongValue();
    }

    void complete(int op, long payloadBytes, double latencySeconds, int status) {
        ops[op].inc();
        latency[op].observe(latencySeconds);
        if (status == 0 && payloadBytes > 0) {
            bytes[op].inc(payloadBytes);
        }
    }
}
