package io.rdmablock.node.metrics;

/**
 * Where the background-budget metrics of {@link NodeMetrics#background} read their values, at scrape time
 * (docs/qos.md, "Background budget").
 */
public interface BackgroundSource {
    /** The rate background work may take now, bytes/s (between the floor and the ceiling). */
    long rateBytesPerSecond();

    /** Bytes granted to background work (resync, rebuild, verify) since the node started. */
    long grantedBytes();

    /** The foreground latency the budget compares against (its idle baseline), ns; 0 before one was measured. */
    long baselineNs();

    /** The smoothed foreground latency of the last windows, ns; 0 before one was measured. */
    long signalNs();
}
