package io.rdmablock.node.metrics;

import java.util.List;

/**
 * The per-volume QoS figures of a node, read at scrape time ({@link NodeMetrics#qos}): one sample per exported volume.
 */
@FunctionalInterface
public interface QosSource {

    /** The samples now; called on the scrape thread, must not block. */
    List<Sample> volumes();

    /**
     * One volume's figures.
     *
     * @param volume         the volume name (the {@code volume} label)
     * @param heldCommands   commands of the volume held for budget now (over all its queues), &gt;= 0
     * @param delayedSeconds total time its held commands waited, seconds (a counter)
     */
    record Sample(String volume, long heldCommands, double delayedSeconds) {
    }
}
