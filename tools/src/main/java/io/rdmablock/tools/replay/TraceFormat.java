package io.rdmablock.tools.replay;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The block trace formats {@link Trace#load} reads, one request per line; offsets and lengths are taken as written
 * (bytes, any granularity), never aligned.
 *
 * <ul>
 *   <li>{@link #MSN}: {@code time_ms device start_sector size_sectors rw}, space separated, 512-byte sectors,
 *       rw 1 = read, 0 = write (SNIA MSN file-server trace as redistributed by huaicheng/replayer).</li>
 *   <li>{@link #MSR}: SNIA IOTTA / MSR Cambridge CSV, {@code Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime}:
 *       Timestamp in Windows FILETIME units (100 ns), Type {@code Read} or {@code Write}, Offset and Size in bytes;
 *       a header line is skipped.</li>
 *   <li>{@link #BLKPARSE}: blktrace's {@code blkparse} default text output,
 *       {@code maj,min cpu seq time_s pid action rwbs sector + sectors [process]}: the events of one action are
 *       replayed (Q, queued, when the trace has any; else D, issued; else C, completed); RWBS with R is a read, with W
 *       a write; other events (flushes without data, discards) and summary lines are skipped and counted.</li>
 * </ul>
 */
public enum TraceFormat {
    MSN, MSR, BLKPARSE;

    private static final Pattern BLKPARSE_EVENT = Pattern.compile(
            "^\\s*\\d+,\\d+\\s+\\d+\\s+\\d+\\s+(\\d+\\.\\d+)\\s+\\d+\\s+([A-Z])\\s+([A-Z]+)\\s+(\\d+)\\s+\\+\\s+(\\d+)(\\s.*)?$");

    /** One request as the trace states it; {@code action} is the blkparse action letter, else ' '. */
    record Line(long timeNs, long offsetBytes, long lengthBytes, boolean read, char action) {
    }

    /** The name used on the command line: msn, msr, blkparse. */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Guesses the format from a line: a CSV with Read/Write is MSR, {@code maj,min} first is blkparse, else MSN. */
    public static TraceFormat detect(String line) {
        String s = line.strip();
        if (BLKPARSE_EVENT.matcher(s).matches() || s.matches("^\\d+,\\d+\\s.*")) {
            return BLKPARSE;
        }
        if (s.split(",").length >= 6) {
            return MSR;
        }
        return MSN;
    }

    /**
     * Parses one non-empty, non-comment line.
     *
     * @return the request, or null for a line this format skips (a CSV header, a blkparse non-event line, an event
     *         without data)
     * @throws IllegalArgumentException naming the field when a field is malformed
     */
    Line parse(String s) {
        return switch (this) {
            case MSN -> {
                String[] f = s.split("\\s+");
                if (f.length < 5) {
                    throw new IllegalArgumentException("expected 5 columns (time_ms device start_sector size_sectors rw),"
                            + " got " + f.length);
                }
                long sector = number(f[2], "start_sector");
                long sectors = number(f[3], "size_sectors");
                long rw = number(f[4], "rw");
                if (sectors <= 0 || rw < 0 || rw > 1) {
                    throw new IllegalArgumentException("invalid size_sectors=" + sectors + " (min 1) or rw=" + rw
                            + " (0 or 1)");
                }
                yield new Line(Math.round(decimal(f[0], "time_ms") * 1_000_000), sector * 512, sectors * 512,
                        rw == 1, ' ');
            }
            case MSR -> {
                String[] f = s.split(",");
                if (f.length < 6) {
                    throw new IllegalArgumentException("expected 7 CSV fields (Timestamp,Hostname,DiskNumber,Type,"
                            + "Offset,Size,ResponseTime), got " + f.length);
                }
                if (!f[0].strip().matches("\\d+")) {
                    yield null; // header
                }
                String type = f[3].strip().toLowerCase(Locale.ROOT);
                if (!type.equals("read") && !type.equals("write")) {
                    throw new IllegalArgumentException("invalid Type: '" + f[3] + "', want Read or Write");
                }
                long size = number(f[5].strip(), "Size");
                if (size <= 0) {
                    throw new IllegalArgumentException("invalid Size=" + size + ", min=1");
                }
                yield new Line(number(f[0].strip(), "Timestamp") * 100, number(f[4].strip(), "Offset"), size,
                        type.equals("read"), ' ');
            }
            case BLKPARSE -> {
                Matcher m = BLKPARSE_EVENT.matcher(s);
                if (!m.matches()) {
                    yield null;
                }
                String rwbs = m.group(3);
                long sectors = number(m.group(5), "sectors");
                boolean read = rwbs.contains("R");
                boolean write = rwbs.contains("W");
                if (sectors == 0 || read == write || rwbs.contains("D")) { // no data, neither or both, discard
                    yield null;
                }
                yield new Line(Math.round(decimal(m.group(1), "time") * 1e9), number(m.group(4), "sector") * 512,
                        sectors * 512, read, m.group(2).charAt(0));
            }
        };
    }

    private static long number(String v, String field) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + field + ": '" + v + "'");
        }
    }

    private static double decimal(String v, String field) {
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + field + ": '" + v + "'");
        }
    }
}
