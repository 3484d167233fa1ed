package io.rdmablock.node.metrics;

import java.util.List;

/**
 * Where the capacity gauges of {@link NodeMetrics#capacity} read their values, at scrape time (never on the I/O
 * path). All values in bytes.
 */
public interface CapacitySource {
    /**
     * One volume as the gauges show it: its name, its size, the bytes its data file holds (written at least once,
     * snapshots' clusters included), its snapshots and the bytes they hold alone (docs/snapshots.md).
     */
    record VolumeUsage(String volume, long sizeBytes, long usedBytes, int snapshots, long snapshotExclusiveBytes) {
        /** A volume without snapshots. */
        public VolumeUsage(String volume, long sizeBytes, long usedBytes) {
            this(volume, sizeBytes, usedBytes, 0, 0);
        }
    }

    /** How long the last snapshot held its volume's writes (the barrier), ns; 0 when none was taken. */
    default long lastSnapshotBarrierNs() {
        return 0;
    }

    /** Capacity offered for volumes. */
    long capacityBytes();

    /** Capacity a new volume may still be promised. */
    long freeBytes();

    /** Every volume held now. */
    List<VolumeUsage> volumes();
}
