package io.rdmablock.tools.bench;

/**
 * How much I/O a job clone does and where (fio HOWTO "I/O size", "Block size"): {@code bsrange}, {@code
 * offset_increment}, {@code io_size} ({@code io_limit}) and {@code number_ios}. Parsed by {@link JobSpec}, used by
 * {@link Worker} (region of a clone) and {@link IoChooser} (lengths, byte limit).
 * <ul>
 * <li>{@code bsrange=min-max[,min-max]} (read, write; one range is both): each I/O's length is fio's
 * {@code get_next_buflen}: {@code min + floor(max * u)}, u uniform in [0, 1), rounded down to a multiple of min (fio's
 * {@code bs_unaligned=0}), at most max. Bytes, 1 .. 256 MiB each, min <= max.</li>
 * <li>{@code offset_increment=N} (bytes, or % of the device): clone k (0-based, of {@code numjobs}) starts at
 * {@code offset + k * N} (fio's {@code get_start_offset} with {@code subjob_number}). A clone whose region would
 * start at or beyond the device's end fails before any I/O naming the option, the job and the bounds.</li>
 * <li>{@code io_size=N} (alias {@code io_limit}; bytes or %): the clone does N bytes of I/O per loop, independent of
 * {@code size} (the region): more wraps around the region, less ends early.</li>
 * <li>{@code number_ios=N} (1 .. 2^63-1): the clone ends after issuing N I/Os, if nothing else ended it before
 * (fio: "this does not extend the amount of I/O that will be done").</li>
 * </ul>
 */
final class IoLimits {
    /** bsrange {readMin, readMax, writeMin, writeMax}, or null. */
    int[] bsRange;
    String offsetIncrement;
    String ioSize;
    long numberIos;

    void set(String job, String k, String v) {
        switch (k) {
            case "bsrange", "blocksize_range" -> bsRange = bsRange(job, k, v);
            case "offset_increment" -> offsetIncrement = checkSize(job, k, v);
            case "io_size", "io_limit" -> ioSize = checkSize(job, k, v);
            case "number_ios" -> {
                numberIos = FioValues.unsigned(k, v);
                if (numberIos < 1) {
                    throw new IllegalArgumentException("invalid number_ios: number_ios=" + v + " (job '" + job
                            + "'): min=1, max=" + Long.MAX_VALUE);
                }
            }
            default -> throw new IllegalStateException(k);
        }
    }

    private static String checkSize(String job, String k, String v) {
        try {
            if (FioValues.percent(k, v) < 0) {
                FioValues.size(k, v);
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (job '" + job + "')");
        }
        return v;
    }

    private static int[] bsRange(String job, String k, String v) {
        String[] dirs = v.split(",", -1);
        int[] r = new int[4];
        for (int d = 0; d < 2; d++) {
            String part = d < dirs.length && !dirs[d].isBlank() ? dirs[d] : dirs[0];
            String[] mm = part.split("[-:]");
            if (mm.length != 2) {
                throw new IllegalArgumentException("invalid " + k + ": '" + v + "' (job '" + job + "'): want"
                        + " min-max[,min-max], e.g. 4k-64k");
            }
            long min = FioValues.size(k, mm[0]);
            long max = FioValues.size(k, mm[1]);
            if (min < 1 || max < min || max > (256 << 20)) {
                throw new IllegalArgumentException("invalid " + k + ": '" + v + "' (job '" + job + "'): min=1,"
                        + " max=256m, and the range's min at most its max");
            }
            r[2 * d] = (int) min;
            r[2 * d + 1] = (int) max;
        }
        return r;
    }

    /** The largest length of the range, 0 without bsrange. */
    int maxBs() {
        return bsRange == null ? 0 : Math.max(bsRange[1], bsRange[3]);
    }

    /** The smallest length of direction {@code write}'s range (fio's min_bs), or {@code bs} without bsrange. */
    int minBs(boolean write, int bs) {
        return bsRange == null ? bs : bsRange[write ? 2 : 0];
    }

    /** fio's get_next_buflen for a range: {@code u} uniform in [0, 1). */
    int length(boolean write, double u) {
        int min = bsRange[write ? 2 : 0];
        int max = bsRange[write ? 3 : 1];
        long len = min + (long) (max * u);
        len -= len % min;
        return (int) Math.min(len, max);
    }

    /**
     * Start of clone {@code clone}'s region: {@code base + clone * offset_increment}, aligned down to {@code lbaSize}.
     *
     * @throws IllegalArgumentException when it is at or beyond the device's end, naming option, job and bounds
     */
    long cloneStart(String job, long base, int clone, long capacity, int lbaSize) {
        if (offsetIncrement == null || clone == 0) {
            return base;
        }
        double pct = FioValues.percent("offset_increment", offsetIncrement);
        long inc = pct >= 0 ? (long) (capacity * pct / 100) : FioValues.size("offset_increment", offsetIncrement);
        long start;
        try {
            start = Math.addExact(base, Math.multiplyExact(inc, clone)) / lbaSize * lbaSize;
        } catch (ArithmeticException e) {
            start = Long.MAX_VALUE;
        }
        if (start >= capacity) {
            throw new IllegalArgumentException("invalid offset_increment: job '" + job + "' clone " + clone + " would"
                    + " start at offset + " + clone + " x " + offsetIncrement + " = " + start + ", beyond the device:"
                    + " min=0, max=" + (capacity - 1 - base) / clone + " for " + (clone + 1) + " clones (device size "
                    + capacity + ")");
        }
        return start;
    }

    /**
     * Length of the region of a clone starting at {@code start}: the job's region length, but at most up to the
     * device's end (the rest of the device without {@code size}).
     */
    long cloneLength(JobSpec spec, long start, long capacity, int lbaSize) {
        long base = spec.regionOffset(capacity, lbaSize);
        long len = spec.regionLength(capacity, lbaSize);
        if (start == base) {
            return len;
        }
        long avail = capacity - start;
        if (spec.size == null || len > avail) {
            if (spec.size != null) {
                spec.warnings.add("offset_increment: clone region from " + start + " clamped to the device's end ("
                        + avail + " bytes)");
            }
            len = avail / lbaSize * lbaSize;
        }
        if (len < spec.maxBlockSize()) {
            throw new IllegalArgumentException("invalid offset_increment: job '" + spec.name + "': a clone's region"
                    + " from " + start + " holds " + len + " bytes, less than the block size " + spec.maxBlockSize());
        }
        return len;
    }

    /** Bytes of one loop: io_size resolved against the device, or {@code regionLength} without it. */
    long bytesPerLoop(long regionLength, long capacity) {
        if (ioSize == null) {
            return regionLength;
        }
        double pct = FioValues.percent("io_size", ioSize);
        return pct >= 0 ? (long) (capacity * pct / 100) : FioValues.size("io_size", ioSize);
    }
}
