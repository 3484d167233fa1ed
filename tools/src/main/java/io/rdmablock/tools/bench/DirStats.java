package io.rdmablock.tools.bench;

import org.HdrHistogram.PackedHistogram;

/**
 * Completed I/O of one direction (read or write): counts, bytes and latency histograms in nanoseconds
 * (3 significant digits, 1 ns .. 600 s; longer values are clamped). Written by one thread at a time; merged after.
 * slat = time inside the submit call, clat = submit return to completion, lat = slat + clat (fio's definitions).
 * Packed histograms: memory grows with the distinct values recorded (a few KiB), not with the 600 s range (about
 * 0.5 MiB each for a plain {@code Histogram}), since a job keeps one set per in-flight I/O slot (up to 4096).
 */
final class DirStats {
    static final long MAX_TRACKABLE_NS = 600_000_000_000L;

    final PackedHistogram slat = new PackedHistogram(MAX_TRACKABLE_NS, 3);
    final PackedHistogram clat = new PackedHistogram(MAX_TRACKABLE_NS, 3);
    final PackedHistogram lat = new PackedHistogram(MAX_TRACKABLE_NS, 3);
    long ios;
    long bytes;

    void record(long slatNs, long clatNs, int lengthBytes) {
        slat.recordValue(clamp(slatNs));
        clat.recordValue(clamp(clatNs));
        lat.recordValue(clamp(slatNs + clatNs));
        ios++;
        bytes += lengthBytes;
    }

    private static long clamp(long v) {
        return v < 1 ? 1 : Math.min(v, MAX_TRACKABLE_NS);
    }

    void add(DirStats o) {
        slat.add(o.slat);
        clat.add(o.clat);
        lat.add(o.lat);
        ios += o.ios;
        bytes += o.bytes;
    }
}
