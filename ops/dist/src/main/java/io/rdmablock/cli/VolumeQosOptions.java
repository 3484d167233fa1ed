package io.rdmablock.cli;

import io.rdmablock.mgmt.client.VolumeQos;
import picocli.CommandLine.Option;

/**
 * The limit options of {@code volume create} ({@code --qos-iops N}, ...) and {@code volume qos NAME} ({@code --iops
 * N}, ... or the same {@code --qos-} names), a picocli mixin (docs/qos.md). Rates per second; 0 or absent = no
 * limit; bytes/s accept K/M/G/T suffixes (powers of 1024). Bounds: {@link VolumeQos#check()}.
 */
final class VolumeQosOptions {
    @Option(names = {"--qos-iops", "--iops"}, paramLabel = "N", description = "I/Os per second, total (0..10000000).")
    long iops;
    @Option(names = {"--qos-read-iops", "--read-iops"}, paramLabel = "N", description = "READs per second.")
    long readIops;
    @Option(names = {"--qos-write-iops", "--write-iops"}, paramLabel = "N",
            description = "WRITEs (and WRITE ZEROES) per second.")
    long writeIops;
    @Option(names = {"--qos-bytes-per-sec", "--bytes-per-sec"}, paramLabel = "BYTES",
            description = "Payload bytes per second, total (K/M/G/T suffixes; at most 1T).")
    String bytesPerSec;
    @Option(names = {"--qos-read-bytes-per-sec", "--read-bytes-per-sec"}, paramLabel = "BYTES",
            description = "READ payload bytes per second.")
    String readBytesPerSec;
    @Option(names = {"--qos-write-bytes-per-sec", "--write-bytes-per-sec"}, paramLabel = "BYTES",
            description = "WRITE payload bytes per second.")
    String writeBytesPerSec;
    @Option(names = {"--qos-burst-seconds", "--burst-seconds"}, paramLabel = "S",
            description = "Seconds' worth of each limit an idle volume may use in its first second, 0..3600 "
                    + "(0 = 1: no saved credit); needs a limit.")
    int burstSeconds;
    @Option(names = {"--qos-iops-per-gib", "--iops-per-gib"}, paramLabel = "N",
            description = "A total IOPS limit of N per GiB of the volume's size.")
    long iopsPerGiB;
    @Option(names = {"--qos-iops-per-gib-min", "--iops-per-gib-min"}, paramLabel = "N",
            description = "Floor of the size-scaled limit, IOPS.")
    long iopsPerGiBMin;
    @Option(names = {"--qos-iops-per-gib-max", "--iops-per-gib-max"}, paramLabel = "N",
            description = "Cap of the size-scaled limit, IOPS.")
    long iopsPerGiBMax;

    /**
     * @return the limits given (unchecked: the caller runs {@link VolumeQos#check()})
     * @throws IllegalArgumentException when a bytes value is not a size
     */
    VolumeQos limits() {
        return new VolumeQos(iops, readIops, writeIops, bytes("--qos-bytes-per-sec", bytesPerSec),
                bytes("--qos-read-bytes-per-sec", readBytesPerSec),
                bytes("--qos-write-bytes-per-sec", writeBytesPerSec), burstSeconds, iopsPerGiB, iopsPerGiBMin,
                iopsPerGiBMax);
    }

    private static long bytes(String option, String text) {
        return text == null ? 0 : Sizes.parse(option, text);
    }

    /** @return the limits as one line, e.g. {@code iops=5000, writeBytesPerSec=100 MiB, burstSeconds=2}; {@code (none)} */
    static String describe(VolumeQos q) {
        if (q == null || q.unlimited()) {
            return "(none)";
        }
        var parts = new java.util.ArrayList<String>();
        add(parts, "iops", q.iops(), false);
        add(parts, "readIops", q.readIops(), false);
        add(parts, "writeIops", q.writeIops(), false);
        add(parts, "bytesPerSec", q.bytesPerSec(), true);
        add(parts, "readBytesPerSec", q.readBytesPerSec(), true);
        add(parts, "writeBytesPerSec", q.writeBytesPerSec(), true);
        add(parts, "iopsPerGiB", q.iopsPerGiB(), false);
        add(parts, "iopsPerGiBMin", q.iopsPerGiBMin(), false);
        add(parts, "iopsPerGiBMax", q.iopsPerGiBMax(), false);
        parts.add("burstSeconds=" + q.effectiveBurstSeconds());
        return String.join(", ", parts);
    }

    private static void add(java.util.List<String> parts, String name, long value, boolean bytes) {
        if (value != 0) {
            parts.add(name + "=" + (bytes ? Sizes.format(value) : Long.toString(value)));
        }
    }
}
