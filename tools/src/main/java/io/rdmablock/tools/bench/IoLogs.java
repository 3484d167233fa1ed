package io.rdmablock.tools.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * fio's per-job log files ({@code write_bw_log}, {@code write_lat_log}, {@code write_iops_log}; fio HOWTO
 * "Measurements and reporting" and "Log File Formats"; source {@code stat.c} {@code add_log_sample},
 * {@code add_bw_sample}, {@code __add_samples}, {@code iolog.c} {@code flush_samples}) for one job clone.
 *
 * <p>Files: {@code <prefix>_bw.<n>.log}, {@code <prefix>_iops.<n>.log} and {@code <prefix>_clat|slat|lat.<n>.log},
 * where the prefix is the option's value (the job name when empty) and {@code n} the clone's 1-based number among
 * every clone of the run (fio's thread_number); {@code per_job_logs=0} leaves out {@code .<n>}. One line per entry,
 * fio 3.33's columns: {@code time, value, data direction, block size, [offset,] priority}: time in ms since the job
 * started, data direction 0 = read, 1 = write, offset (bytes) only with {@code log_offset=1}, priority always 0.
 *
 * <p>Without {@code log_avg_msec} every completed I/O gives one line per log: latencies in ns (slat = time in the
 * submit call, clat = submit return to completion, lat = both), bandwidth = bytes x 10^6 / clat ns (fio's
 * per-I/O "KiB/s", as {@code add_bw_sample}), IOPS = 1. With {@code log_avg_msec=M}: per direction, one line when an
 * I/O completes M ms or more after the window began (fio's window start: the time rounded down to a multiple of M);
 * latency logs hold the window's mean (rounded), bw = bytes x 1000 / ms / 1024 (KiB/s) and iops = I/Os x 1000 / ms
 * over the window; block size and offset 0 (as fio 3.33 writes them). The last partial
 * window is written when the job ends. I/Os of the ramp are not logged (fio). Thread-safe (one lock).
 */
final class IoLogs implements AutoCloseable {
    /** Kinds of log, in fio's file-name suffixes. */
    enum Kind { BW, IOPS, CLAT, SLAT, LAT;

        String suffix() {
            return name().toLowerCase();
        }
    }

    private final Log[] logs = new Log[Kind.values().length];
    private final boolean logOffset;
    private final List<Path> files = new ArrayList<>();
    private final Path[] paths = new Path[Kind.values().length];
    private IOException failed;

    private IoLogs(boolean logOffset) {
        this.logOffset = logOffset;
    }

    /**
     * Opens the logs the job asks for (and, with {@code plotDir}, the ones a plot needs that it does not: bw and iops
     * averaged over 1 s, or the job's log_avg_msec, and clat per I/O, in {@code plotDir} named after the job);
     * null when there are none.
     *
     * @param number the clone's 1-based number among every clone of the run
     * @throws IllegalArgumentException naming the option when a file cannot be created (before any I/O)
     */
    static IoLogs open(JobSpec spec, int number, Path plotDir) {
        boolean plot = plotDir != null;
        if (spec.bwLog == null && spec.latLog == null && spec.iopsLog == null && !plot) {
            return null;
        }
        IoLogs l = new IoLogs(spec.logOffset);
        String own = plot ? plotDir.resolve(spec.name.replaceAll("[^A-Za-z0-9._-]", "_")).toString() : null;
        int plotAvg = spec.logAvgMsec > 0 ? spec.logAvgMsec : 1000;
        String n = spec.perJobLogs ? "." + number : "";
        if (spec.bwLog != null || plot) {
            l.add(Kind.BW, prefix(spec, spec.bwLog, own), n, spec.bwLog != null ? spec.logAvgMsec : plotAvg);
        }
        if (spec.iopsLog != null || plot) {
            l.add(Kind.IOPS, prefix(spec, spec.iopsLog, own), n, spec.iopsLog != null ? spec.logAvgMsec : plotAvg);
        }
        if (spec.latLog != null) {
            for (Kind k : List.of(Kind.CLAT, Kind.SLAT, Kind.LAT)) {
                l.add(k, prefix(spec, spec.latLog, own), n, spec.logAvgMsec);
            }
        } else if (plot) {
            l.add(Kind.CLAT, own, n, 0);
        }
        return l;
    }

    private static String prefix(JobSpec spec, String option, String own) {
        return option == null ? own : option.isEmpty() ? spec.name : option;
    }

    private void add(Kind k, String prefix, String n, int avgMsec) {
        Path p = Path.of(prefix + "_" + k.suffix() + n + ".log");
        try {
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            logs[k.ordinal()] = new Log(Files.newBufferedWriter(p, StandardCharsets.US_ASCII), avgMsec);
        } catch (IOException e) {
            String opt = k == Kind.BW ? "write_bw_log" : k == Kind.IOPS ? "write_iops_log" : "write_lat_log";
            throw new IllegalArgumentException("invalid " + opt + " (or --plot): cannot create log file " + p + ": "
                    + e, e);
        }
        files.add(p);
        paths[k.ordinal()] = p;
    }

    /** The file of kind {@code k}, or null when it is not written. */
    Path file(Kind k) {
        return paths[k.ordinal()];
    }

    /** The files written, in the order opened. */
    List<Path> files() {
        return List.copyOf(files);
    }

    /** The log of kind {@code k}'s averaging window in ms (0 = every I/O), or -1 when it is not written. */
    int avgMsec(Kind k) {
        Log l = logs[k.ordinal()];
        return l == null ? -1 : l.avgMsec;
    }

    /**
     * One completed I/O.
     *
     * @param timeNs completion time in ns since the job started
     */
    void io(long timeNs, boolean read, int bs, long offset, long slatNs, long clatNs) {
        io(timeNs, read ? 0 : 1, bs, offset, slatNs, clatNs);
    }

    /** One completed I/O of direction {@code d} (fio's ddir: 0 read, 1 write, 2 trim). */
    synchronized void io(long timeNs, int d, int bs, long offset, long slatNs, long clatNs) {
        long ms = timeNs / 1_000_000;
        for (Kind k : Kind.values()) {
            Log l = logs[k.ordinal()];
            if (l == null) {
                continue;
            }
            long value = switch (k) {
                case BW -> clatNs > 0 ? bs * 1_000_000L / clatNs : 0;
                case IOPS -> 1;
                case CLAT -> clatNs;
                case SLAT -> slatNs;
                case LAT -> slatNs + clatNs;
            };
            if (l.avgMsec == 0) {
                l.line(ms, value, d, bs, offset);
            } else {
                l.window(k, ms, d, value, bs, false);
            }
        }
    }

    /** Writes the partial windows and closes the files. */
    @Override
    public synchronized void close() {
        IOException first = failed;
        for (Kind k : Kind.values()) {
            Log l = logs[k.ordinal()];
            if (l == null) {
                continue;
            }
            try {
                if (l.avgMsec > 0) {
                    for (int d = 0; d < 3; d++) {
                        l.window(k, l.lastMs, d, 0, 0, true);
                    }
                }
                l.out.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw new UncheckedIOException("cannot write log file: " + first.getMessage(), first);
        }
    }

    private final class Log {
        final BufferedWriter out;
        final int avgMsec;
        final StringBuilder sb = new StringBuilder(64);
        final long[] windowStart = new long[3];
        final long[] count = new long[3];
        final long[] sum = new long[3];
        long lastMs;

        Log(BufferedWriter out, int avgMsec) {
            this.out = out;
            this.avgMsec = avgMsec;
        }

        void window(Kind k, long ms, int d, long value, int bs, boolean flush) {
            lastMs = Math.max(lastMs, ms);
            if (!flush) {
                count[d]++;
                sum[d] += k == Kind.BW ? bs : value;
                if (ms - windowStart[d] < avgMsec) {
                    return;
                }
            }
            if (count[d] > 0) {
                long spent = Math.max(1, ms - windowStart[d]);
                long v = switch (k) {
                    case BW -> sum[d] * 1000 / spent / 1024;
                    case IOPS -> count[d] * 1000 / spent;
                    default -> (sum[d] + count[d] / 2) / count[d];
                };
                line(ms, v, d, 0, 0);
            }
            count[d] = 0;
            sum[d] = 0;
            windowStart[d] = ms - ms % avgMsec;
        }

        void line(long ms, long value, int d, int bs, long offset) {
            sb.setLength(0);
            sb.append(ms).append(", ").append(value).append(", ").append(d).append(", ").append(bs);
            if (logOffset) {
                sb.append(", ").append(offset);
            }
            sb.append(", 0\n");
            try {
                out.append(sb);
            } catch (IOException e) {
                failed = failed == null ? e : failed; // reported by close(), not on the I/O path
            }
        }
    }
}
