package io.rdmablock.mgmt.client;

/**
 * Quality-of-service limits of one volume, enforced on its primary copy across all of the volume's queues and hosts
 * together (docs/qos.md). Each limit is a rate per second; 0 (or absent on the wire) = no limit. An I/O over a
 * limit waits in its queue until the budget allows it; it is never failed.
 *
 * <p>READ counts against {@code iops}, {@code readIops}, {@code bytesPerSec} and {@code readBytesPerSec}; WRITE
 * against {@code iops}, {@code writeIops}, {@code bytesPerSec} and {@code writeBytesPerSec}; WRITE ZEROES against
 * {@code iops} and {@code writeIops} only (no data moves); FLUSH and DATASET MANAGEMENT are not limited.
 *
 * <p>Bounds (checked by {@link #check()}, 400 problem+json on the server naming the field): IOPS fields
 * 0..{@value #MAX_IOPS}; bytes/s fields 0..{@value #MAX_BYTES_PER_SEC} (1 TiB/s); {@code burstSeconds}
 * 0..{@value #MAX_BURST_SECONDS}, given only with some limit; {@code iopsPerGiB} 0..{@value #MAX_IOPS_PER_GIB};
 * {@code iopsPerGiBMin}/{@code iopsPerGiBMax} only with {@code iopsPerGiB}, the floor at most the cap.
 *
 * @param iops             READ + WRITE + WRITE ZEROES commands per second, 0 = no limit
 * @param readIops         READ commands per second, 0 = no limit
 * @param writeIops        WRITE + WRITE ZEROES commands per second, 0 = no limit
 * @param bytesPerSec      READ + WRITE payload bytes per second, 0 = no limit
 * @param readBytesPerSec  READ payload bytes per second, 0 = no limit
 * @param writeBytesPerSec WRITE payload bytes per second, 0 = no limit
 * @param burstSeconds     how many seconds' worth of each limit a volume that was idle may use in its first second
 *                         (it saves up {@code burstSeconds - 1} seconds of credit while below its limits); 0 = the
 *                         default, 1 (no saved credit beyond one 50 ms smoothing window)
 * @param iopsPerGiB       IOPS per GiB of the volume's size (rounded down, at least 1): a total IOPS limit that
 *                         grows with the volume; with {@code iops} as well, the lower of both applies
 * @param iopsPerGiBMin    floor of the size-scaled limit, IOPS, 0 = none
 * @param iopsPerGiBMax    cap of the size-scaled limit, IOPS, 0 = none
 */
public record VolumeQos(long iops, long readIops, long writeIops, long bytesPerSec, long readBytesPerSec,
                        long writeBytesPerSec, int burstSeconds, long iopsPerGiB, long iopsPerGiBMin,
                        long iopsPerGiBMax) {
    /** Highest IOPS limit (10 million). */
    public static final long MAX_IOPS = 10_000_000L;
    /** Highest bytes/s limit (1 TiB/s). */
    public static final long MAX_BYTES_PER_SEC = 1L << 40;
    /** Longest burst, seconds (one hour). */
    public static final int MAX_BURST_SECONDS = 3600;
    /** Highest iopsPerGiB. */
    public static final long MAX_IOPS_PER_GIB = 1_000_000L;
    /** No limit at all. */
    public static final VolumeQos NONE = new VolumeQos(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Limits without size scaling. */
    public VolumeQos(long iops, long readIops, long writeIops, long bytesPerSec, long readBytesPerSec,
                     long writeBytesPerSec, int burstSeconds) {
        this(iops, readIops, writeIops, bytesPerSec, readBytesPerSec, writeBytesPerSec, burstSeconds, 0, 0, 0);
    }

    /** @return a total IOPS limit only ({@code iops}), default burst */
    public static VolumeQos ofIops(long iops) {
        return new VolumeQos(iops, 0, 0, 0, 0, 0, 0);
    }

    /** @return true when no field limits anything (every rate 0) */
    public boolean unlimited() {
        return iops == 0 && readIops == 0 && writeIops == 0 && bytesPerSec == 0 && readBytesPerSec == 0
                && writeBytesPerSec == 0 && iopsPerGiB == 0;
    }

    /** @return {@link #burstSeconds}, 1 when 0 (the default) */
    public int effectiveBurstSeconds() {
        return burstSeconds == 0 ? 1 : burstSeconds;
    }

    /**
     * The total IOPS limit of a volume of {@code sizeBytes}: {@code iops}, or the size-scaled limit
     * ({@code iopsPerGiB} x size in GiB, rounded down, at least 1, then raised to the floor and lowered to the cap),
     * the lower of both when both are set; 0 = no total IOPS limit.
     */
    public long effectiveIops(long sizeBytes) {
        long scaled = 0;
        if (iopsPerGiB > 0) {
            scaled = Math.max(1, (Math.max(0, sizeBytes) >> 20) * iopsPerGiB >> 10); // no overflow: 2^26 x 2^20
            scaled = Math.max(scaled, iopsPerGiBMin);
            if (iopsPerGiBMax > 0) {
                scaled = Math.min(scaled, iopsPerGiBMax);
            }
            scaled = Math.min(scaled, MAX_IOPS);
        }
        if (iops == 0) {
            return scaled;
        }
        return scaled == 0 ? iops : Math.min(iops, scaled);
    }

    /**
     * Checks the bounds (class comment).
     *
     * @throws IllegalArgumentException naming the field ({@code qos.iops}, ...), its value and its bounds
     */
    public void check() {
        range("qos.iops", iops, MAX_IOPS);
        range("qos.readIops", readIops, MAX_IOPS);
        range("qos.writeIops", writeIops, MAX_IOPS);
        range("qos.bytesPerSec", bytesPerSec, MAX_BYTES_PER_SEC);
        range("qos.readBytesPerSec", readBytesPerSec, MAX_BYTES_PER_SEC);
        range("qos.writeBytesPerSec", writeBytesPerSec, MAX_BYTES_PER_SEC);
        range("qos.burstSeconds", burstSeconds, MAX_BURST_SECONDS);
        range("qos.iopsPerGiB", iopsPerGiB, MAX_IOPS_PER_GIB);
        range("qos.iopsPerGiBMin", iopsPerGiBMin, MAX_IOPS);
        range("qos.iopsPerGiBMax", iopsPerGiBMax, MAX_IOPS);
        if (burstSeconds > 0 && unlimited()) {
            throw Limits.invalid("qos.burstSeconds", Integer.toString(burstSeconds),
                    "a burst needs a limit (iops, readIops, writeIops, bytesPerSec, readBytesPerSec, "
                            + "writeBytesPerSec or iopsPerGiB)");
        }
        if (iopsPerGiB == 0 && iopsPerGiBMin > 0) {
            throw Limits.invalid("qos.iopsPerGiBMin", Long.toString(iopsPerGiBMin), "needs qos.iopsPerGiB > 0");
        }
        if (iopsPerGiB == 0 && iopsPerGiBMax > 0) {
            throw Limits.invalid("qos.iopsPerGiBMax", Long.toString(iopsPerGiBMax), "needs qos.iopsPerGiB > 0");
        }
        if (iopsPerGiBMax > 0 && iopsPerGiBMin > iopsPerGiBMax) {
            throw Limits.invalid("qos.iopsPerGiBMin", Long.toString(iopsPerGiBMin),
                    "the floor must be at most the cap, qos.iopsPerGiBMax=" + iopsPerGiBMax);
        }
    }

    private static void range(String field, long value, long max) {
        if (value < 0 || value > max) {
            throw Limits.invalid(field, Long.toString(value), "min=0 (no limit), max=" + max);
        }
    }
}
