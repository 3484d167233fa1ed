package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parsers for fio option values (fio(1) "Parameter types"): sizes with k/m/g/t/p suffixes (powers of 1024, case
 * insensitive, optional "i"/"b"), percentages ("50%"), times with s/ms/us/m/h suffixes (default unit seconds), booleans
 * ("1"/"0"/"true"/"false"/empty = true), and bssplit lists ("4k/50:64k/30:1m/" = remaining share).
 */
final class FioValues {
    private FioValues() {
    }

    /** A size in bytes; {@code name} only for the error message. */
    static long size(String name, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith("b") && s.length() > 1 && !Character.isDigit(s.charAt(s.length() - 2))) {
            s = s.substring(0, s.length() - 1); // "kb", "kib" -> "k", "ki"
        }
        if (s.endsWith("i")) {
            s = s.substring(0, s.length() - 1);
        }
        long mult = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k' -> mult = 1L << 10;
                case 'm' -> mult = 1L << 20;
                case 'g' -> mult = 1L << 30;
                case 't' -> mult = 1L << 40;
                case 'p' -> mult = 1L << 50;
                default -> mult = 1;
            }
            if (mult != 1) {
                s = s.substring(0, s.length() - 1);
            }
        }
        try {
            if (s.startsWith("0x")) {
                return Long.parseLong(s.substring(2), 16) * mult;
            }
            double d = Double.parseDouble(s);
            if (d < 0) {
                throw new NumberFormatException("negative");
            }
            return Math.round(d * mult);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "' is not a size (e.g. 4k, 1m, 10G)");
        }
    }

    /** Percentage 0..100 if {@code v} ends with '%', else -1. */
    static double percent(String name, String v) {
        String s = v.trim();
        if (!s.endsWith("%")) {
            return -1;
        }
        try {
            double p = Double.parseDouble(s.substring(0, s.length() - 1));
            if (p < 0 || p > 100) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "', want 0%..100%");
        }
    }

    /** A time in nanoseconds; plain numbers are seconds (fio's default unit for runtime and ramp_time). */
    static long timeNs(String name, String v) {
        return timeNs(name, v, 1_000_000_000L);
    }

    /**
     * A time in nanoseconds; plain numbers are in {@code defaultUnitNs} (fio: seconds for runtime, ramp_time and
     * startdelay; microseconds for thinktime, latency_target and latency_window).
     */
    static long timeNs(String name, String v, long defaultUnitNs) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        long mult = defaultUnitNs;
        String[][] units = {{"usec", "1000"}, {"us", "1000"}, {"msec", "1000000"}, {"ms", "1000000"},
                {"sec", "1000000000"}, {"s", "1000000000"}, {"m", "60000000000"}, {"h", "3600000000000"},
                {"d", "86400000000000"}};
        for (String[] u : units) {
            if (s.endsWith(u[0])) {
                mult = Long.parseLong(u[1]);
                s = s.substring(0, s.length() - u[0].length());
                break;
            }
        }
        try {
            double d = Double.parseDouble(s);
            if (d < 0) {
                throw new NumberFormatException();
            }
            return Math.round(d * mult);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "' is not a time (e.g. 10, 10s, 500ms)");
        }
    }

    static boolean bool(String name, String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        return switch (s) {
            case "", "1", "true", "yes", "on" -> true;
            case "0", "false", "no", "off" -> false;
            default -> throw new IllegalArgumentException("invalid " + name + ": '" + v + "', want 0 or 1");
        };
    }

    static int integer(String name, String v, int min, int max) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "' is not an integer");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("invalid " + name + ": " + name + "=" + n + ", min=" + min + ", max=" + max);
        }
        return (int) n;
    }

    /** A non-negative decimal in [min, max]. */
    static double decimal(String name, String v, double min, double max) {
        double d;
        try {
            d = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "' is not a number");
        }
        if (d < min || d > max) {
            throw new IllegalArgumentException("invalid " + name + ": " + name + "=" + v + ", min=" + min + ", max=" + max);
        }
        return d;
    }

    /** An unsigned 64-bit integer (decimal or 0x hex), e.g. randseed. */
    static long unsigned(String name, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        try {
            return s.startsWith("0x") ? Long.parseUnsignedLong(s.substring(2), 16) : Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + name + ": '" + v + "' is not an unsigned integer");
        }
    }

    /**
     * fio's comma-separated per-direction values ("read,write[,trim]"): one value applies to reads and writes,
     * an empty field means no limit. {@code sizes}: values are sizes (rate=1m), else plain counts (rate_iops=100).
     *
     * @return {read, write}, 0 = unlimited
     */
    static long[] perDirection(String name, String v, boolean sizes) {
        String[] p = v.split(",", -1);
        long[] out = new long[2];
        for (int i = 0; i < 2; i++) {
            String f = p.length == 1 ? p[0] : i < p.length ? p[i] : "";
            if (f.isBlank()) {
                continue;
            }
            out[i] = sizes ? size(name, f) : integer(name, f, 0, Integer.MAX_VALUE);
        }
        return out;
    }

    /** One entry of a bssplit: block size and its share in percent. */
    record Split(int bs, double percent) {
    }

    /**
     * fio's {@code bssplit} per direction (fio's options.c {@code str_split_parse}): one list for every direction, or
     * {@code read,write[,trim]}; without a trim list trims take the write list. An empty list leaves that direction
     * on {@code bs}.
     *
     * @return three lists: read, write, trim
     * @throws IllegalArgumentException naming bssplit and the bad part
     */
    static List<List<Split>> bssplitByDirection(String v) {
        String[] parts = v.split(",", -1);
        if (parts.length > 3) {
            throw new IllegalArgumentException("invalid bssplit: '" + v + "', at most 3 lists (read,write,trim)");
        }
        List<Split> read = parts[0].isBlank() ? List.of() : bssplit(parts[0]);
        if (parts.length == 1) {
            return List.of(read, read, read);
        }
        List<Split> write = parts[1].isBlank() ? List.of() : bssplit(parts[1]);
        List<Split> trim = parts.length < 3 ? write : parts[2].isBlank() ? List.of() : bssplit(parts[2]);
        return List.of(read, write, trim);
    }

    /** Parses "4k/50:64k/30:1m/" ; entries without a percentage share the remainder equally. */
    static List<Split> bssplit(String v) {
        List<String[]> raw = new ArrayList<>();
        for (String e : v.split(":")) {
            if (e.isBlank()) {
                continue;
            }
            String[] p = e.split("/", -1);
            raw.add(new String[] {p[0], p.length > 1 ? p[1] : ""});
        }
        double given = 0;
        int unset = 0;
        for (String[] r : raw) {
            if (r[1].isBlank()) {
                unset++;
            } else {
                given += percentOf(v, r[1]);
            }
        }
        if (raw.isEmpty() || given > 100.0001 || (unset == 0 && Math.abs(given - 100) > 0.0001)) {
            throw new IllegalArgumentException("invalid bssplit: '" + v + "', percentages must add up to 100");
        }
        List<Split> out = new ArrayList<>();
        for (String[] r : raw) {
            double pct = r[1].isBlank() ? (100 - given) / unset : percentOf(v, r[1]);
            long bs = size("bssplit", r[0]);
            if (bs <= 0 || bs > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("invalid bssplit: block size " + r[0]);
            }
            out.add(new Split((int) bs, pct));
        }
        return out;
    }

    private static double percentOf(String list, String p) {
        double d;
        try {
            d = Double.parseDouble(p.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid bssplit: '" + list + "', percentage '" + p
                    + "' is not a number (entries are size/percent, e.g. 4k/50:64k/50; a comma starts the next"
                    + " direction's list: read,write,trim)");
        }
        if (d < 0 || d > 100) {
            throw new IllegalArgumentException("invalid bssplit: '" + list + "', percentage " + p + ", min=0, max=100");
        }
        return d;
    }
}
