package io.rdmablock.node.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * The node's foreground latency signal: host commands completed on volumes this node serves as primary (or not
 * replicated), and the sum of their latencies (volume I/O started to completed, ns; time held for a volume's QoS
 * budget excluded). Written on the data path by the pollers ({@code qos.QosVolumeIo}) with two striped
 * {@link LongAdder} adds per command (no lock, no allocation); read by the background budget
 * ({@code qos.BackgroundBudget}), which differences the sums over its windows. Thread-safe.
 */
public final class ForegroundLatency {
    private final LongAdder commands = new LongAdder();
    private final LongAdder latencyNs = new LongAdder();

    /** Data path: one foreground command completed after {@code ns} (negative counts as 0). */
    public void record(long ns) {
        commands.increment();
        latencyNs.add(Math.max(0, ns));
    }

    /** Foreground commands completed so far. */
    public long commands() {
        return commands.sum();
    }

    /** Their latencies summed, ns (may lag {@link #commands()} by the commands being recorded right now). */
    public long latencyNs() {
        return latencyNs.sum();
    }
}
