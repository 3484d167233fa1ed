package io.rdmablock.node.metrics;

import java.util.List;

/**
 * Where the capacity gauges of {@link NodeMetrics#capacity} read their values, at scrape time (never on the I/O
 * path). All values in bytes.
 */
public interface CapacitySource {
    /** One volume as the gauges show it: its name, its size, and the bytes written at least once (thin). */
    record VolumeUsage(String volume, long sizeBytes, long usedBytes) {
    }

    /** Capacity offered for volumes. */
    long capacityBytes();

    /** Capacity a new volume may still be promised. */
    long freeBytes();

    /** Every volume held now. */
    List<VolumeUsage> volumes();
}
