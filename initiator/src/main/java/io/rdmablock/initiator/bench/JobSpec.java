package io.rdmablock.initiator.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One benchmark job, resolved from fio options (fio(1), "JOB PARAMETERS"); the meanings are fio's.
 *
 * <p>Options understood: {@code rw|readwrite} (read, write, randread, randwrite, rw|readwrite, randrw),
 * {@code rwmixread}, {@code rwmixwrite}, {@code bs|blocksize} ("4k" or "4k,64k" for read,write), {@code bssplit},
 * {@code iodepth}, {@code numjobs}, {@code size} (bytes or % of the device; default: device size - offset; clamped to
 * the device with a warning), {@code offset} (bytes or %), {@code runtime}, {@code time_based}, {@code ramp_time},
 * {@code verify} (crc32c, md5, pattern, 0/none), {@code verify_pattern}, {@code do_verify}, {@code verify_fatal},
 * {@code percentile_list}, {@code group_reporting}, {@code name}, {@code description}.
 * Accepted without effect, with the reason: {@code direct} (I/O always bypasses any cache), {@code thread} (jobs are
 * threads), {@code invalidate}, {@code norandommap} (random offsets never use a map). Engine lines
 * ({@code ioengine}, which must say {@code rdmablock}, and target options such as {@code filename}, {@code uri},
 * {@code hostname}) are ignored: the target is the command line's device. Anything else is an error naming it.
 */
final class JobSpec {

    enum Rw {
        READ(false, false, true), WRITE(false, true, false), RANDREAD(true, false, true), RANDWRITE(true, true, false),
        RW(false, true, true), RANDRW(true, true, true);

        final boolean random;
        final boolean writes;
        final boolean reads;

        Rw(boolean random, boolean writes, boolean reads) {
            this.random = random;
            this.writes = writes;
            this.reads = reads;
        }
    }

    enum Verify { NONE, CRC32C, MD5, PATTERN }

    static final Set<String> ENGINE_LINES = Set.of("ioengine", "filename", "uri", "hostname", "port", "spdk_conf",
            "enable_sgl", "clientname", "pool", "rbdname", "namespace", "exportname", "verb", "bindname");
    static final Set<String> NO_EFFECT = Set.of("direct", "thread", "invalidate", "norandommap");
    static final Set<String> WARN_IGNORED = Set.of("cpumask", "verify_backlog");
    static final Set<String> SUBSET = Set.of("rw", "readwrite", "rwmixread", "rwmixwrite", "bs", "blocksize", "bssplit",
            "iodepth", "numjobs", "size", "offset", "runtime", "time_based", "ramp_time", "verify", "verify_pattern",
            "do_verify", "verify_fatal", "percentile_list", "group_reporting", "name", "description");
    static final double[] DEFAULT_PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

    String name = "job";
    String description = "";
    Rw rw = Rw.READ;
    int rwmixread = 50;
    int bsRead = 4096;
    int bsWrite = 4096;
    List<FioValues.Split> bssplit = List.of();
    int iodepth = 1;
    int numjobs = 1;
    String size;      // raw, resolved against the device
    /** The size came from the command line ({@code --size}): an absolute size beyond the device is rejected. */
    boolean sizeStrict;
    String offset = "0";
    long runtimeNs;
    boolean timeBased;
    long rampTimeNs;
    Verify verify = Verify.NONE;
    int verifyPattern = 0xdeadbeef;
    boolean doVerify = true;
    boolean verifyFatal;
    double[] percentiles = DEFAULT_PERCENTILES;
    boolean groupReporting;
    /** The options as given (after [global] merge and command-line overrides), for "job options" in the JSON. */
    final Map<String, String> options = new LinkedHashMap<>();
    final java.util.Set<String> warnings = new java.util.LinkedHashSet<>();

    /** Resolves {@code opts} (fio option name to value; flags have value "" ) into a job. */
    static JobSpec of(String name, Map<String, String> opts) {
        JobSpec j = new JobSpec();
        j.name = name;
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, String> e : opts.entrySet()) {
            String k = e.getKey();
            String v = e.getValue() == null ? "" : e.getValue();
            j.options.put(k, v);
            if (ENGINE_LINES.contains(k)) {
                if (k.equals("ioengine") && !v.equals("rdmablock")) {
                    throw new IllegalArgumentException("invalid ioengine: '" + v + "': change the engine line to"
                            + " ioengine=rdmablock (the target is the command line's --volume/--address/--file)");
                }
                continue;
            }
            if (NO_EFFECT.contains(k)) {
                continue;
            }
            if (WARN_IGNORED.contains(k)) {
                j.warnings.add(k + "=" + v + " ignored (" + (k.equals("cpumask") ? "no CPU pinning"
                        : "verification runs after the write phase and on reads of written blocks") + ")");
                continue;
            }
            if (!SUBSET.contains(k)) {
                unknown.add(k);
                continue;
            }
            j.set(k, v);
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unsupported fio options in job '" + name + "': " + String.join(", ", unknown)
                    + " (rdmablock bench supports: " + String.join(", ", new java.util.TreeSet<>(SUBSET)) + ")");
        }
        if (j.verify != Verify.NONE && (!j.bssplit.isEmpty() || j.bsRead != j.bsWrite)) {
            throw new IllegalArgumentException("invalid verify: verify=" + j.verify.name().toLowerCase()
                    + " needs one block size (no bssplit, same read and write bs)");
        }
        return j;
    }

    private void set(String k, String v) {
        switch (k) {
            case "name" -> name = v;
            case "description" -> description = v.replace("\"", "");
            case "rw", "readwrite" -> rw = switch (v) {
                case "read" -> Rw.READ;
                case "write" -> Rw.WRITE;
                case "randread" -> Rw.RANDREAD;
                case "randwrite" -> Rw.RANDWRITE;
                case "rw", "readwrite" -> Rw.RW;
                case "randrw" -> Rw.RANDRW;
                default -> throw new IllegalArgumentException("invalid rw: '" + v
                        + "', allowed=read|write|randread|randwrite|rw|readwrite|randrw");
            };
            case "rwmixread" -> rwmixread = FioValues.integer(k, v, 0, 100);
            case "rwmixwrite" -> rwmixread = 100 - FioValues.integer(k, v, 0, 100);
            case "bs", "blocksize" -> {
                String[] p = v.split(",", -1);
                bsRead = blockSize(k, p[0]);
                bsWrite = p.length > 1 && !p[1].isBlank() ? blockSize(k, p[1]) : bsRead;
            }
            case "bssplit" -> bssplit = FioValues.bssplit(v);
            case "iodepth" -> iodepth = FioValues.integer(k, v, 1, 4096);
            case "numjobs" -> numjobs = FioValues.integer(k, v, 1, 256);
            case "size" -> size = v;
            case "offset" -> offset = v;
            case "runtime" -> runtimeNs = FioValues.timeNs(k, v);
            case "time_based" -> timeBased = FioValues.bool(k, v);
            case "ramp_time" -> rampTimeNs = FioValues.timeNs(k, v);
            case "verify" -> verify = switch (v) {
                case "0", "none", "" -> Verify.NONE;
                case "crc32c", "crc32c-intel" -> Verify.CRC32C;
                case "md5" -> Verify.MD5;
                case "pattern" -> Verify.PATTERN;
                default -> throw new IllegalArgumentException("invalid verify: '" + v + "', allowed=crc32c|md5|pattern|0");
            };
            case "verify_pattern" -> {
                String s = v.trim().toLowerCase();
                verifyPattern = s.startsWith("0x") ? (int) Long.parseLong(s.substring(2), 16) : Integer.parseInt(s);
            }
            case "do_verify" -> doVerify = FioValues.bool(k, v);
            case "verify_fatal" -> verifyFatal = FioValues.bool(k, v);
            case "group_reporting" -> groupReporting = FioValues.bool(k, v);
            case "percentile_list" -> {
                String[] p = v.split(":");
                percentiles = new double[p.length];
                for (int i = 0; i < p.length; i++) {
                    percentiles[i] = Double.parseDouble(p[i].trim());
                    if (percentiles[i] < 0 || percentiles[i] > 100) {
                        throw new IllegalArgumentException("invalid percentile_list: " + p[i]);
                    }
                }
            }
            default -> throw new IllegalStateException("unhandled option " + k);
        }
    }

    private static int blockSize(String k, String v) {
        long bs = FioValues.size(k, v);
        if (bs <= 0 || bs > (256 << 20)) {
            throw new IllegalArgumentException("invalid " + k + ": " + v + ", min=1, max=256m");
        }
        return (int) bs;
    }

    int maxBlockSize() {
        int m = Math.max(bsRead, bsWrite);
        for (FioValues.Split s : bssplit) {
            m = Math.max(m, s.bs());
        }
        return m;
    }

    /** Offset of the job's region on a device of {@code capacityBytes}, aligned down to {@code lbaSize}. */
    long regionOffset(long capacityBytes, int lbaSize) {
        double pct = FioValues.percent("offset", offset);
        long o = pct >= 0 ? (long) (capacityBytes * pct / 100) : FioValues.size("offset", offset);
        o = o / lbaSize * lbaSize;
        if (o >= capacityBytes) {
            throw new IllegalArgumentException("invalid offset: offset=" + o + " is not below the device size " + capacityBytes);
        }
        return o;
    }

    /**
     * Length of the job's region. A size beyond the device from the offset is clamped with a warning (job files, and
     * percentages), except an absolute size given with {@code --size} ({@link #sizeStrict}), which is rejected.
     *
     * @throws IllegalArgumentException naming the field, value and bounds
     */
    long regionLength(long capacityBytes, int lbaSize) {
        long o = regionOffset(capacityBytes, lbaSize);
        long avail = capacityBytes - o;
        if (size == null) {
            return avail;
        }
        double pct = FioValues.percent("size", size);
        long s = pct >= 0 ? (long) (capacityBytes * pct / 100) : FioValues.size("size", size);
        s = s / lbaSize * lbaSize;
        if (s > avail && sizeStrict && pct < 0) {
            throw new IllegalArgumentException("invalid size: size=" + s + " exceeds the device from offset " + o
                    + ": min=" + maxBlockSize() + ", max=" + avail + " (device size " + capacityBytes + ")");
        }
        if (s > avail) {
            warnings.add("size=" + size + " exceeds the device from offset " + o + ": using " + avail + " bytes");
            s = avail;
        }
        if (s < maxBlockSize()) {
            throw new IllegalArgumentException("invalid size: size=" + s + " is smaller than the block size " + maxBlockSize());
        }
        return s;
    }
}
