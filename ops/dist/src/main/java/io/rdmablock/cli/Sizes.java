package io.rdmablock.cli;

import java.util.Locale;

/**
 * Byte sizes on the command line: a plain number of bytes, or a number with a binary suffix
 * {@code K|KiB, M|MiB, G|GiB, T|TiB} (all powers of 1024; {@code KB/MB/GB/TB} are refused as ambiguous).
 */
public final class Sizes {
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

    private Sizes() {
    }

    /**
     * @param option the option name for the message, e.g. {@code --size}
     * @return the size in bytes
     * @throws IllegalArgumentException {@code invalid --size: --size="12X", expected ...}
     */
    public static long parse(String option, String text) {
        String why = "expected bytes or a whole number with suffix K, M, G, T (or KiB, MiB, GiB, TiB: powers of 1024)";
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("invalid " + option + ": " + option + "=\"\", " + why);
        }
        String t = text.trim();
        int end = 0;
        while (end < t.length() && Character.isDigit(t.charAt(end))) {
            end++;
        }
        if (end == 0) {
            throw new IllegalArgumentException("invalid " + option + ": " + option + "=\"" + text + "\", " + why);
        }
        String unit = t.substring(end).trim().toUpperCase(Locale.ROOT);
        int shift = switch (unit) {
            case "", "B" -> 0;
            case "K", "KI", "KIB" -> 10;
            case "M", "MI", "MIB" -> 20;
            case "G", "GI", "GIB" -> 30;
            case "T", "TI", "TIB" -> 40;
            default -> -1;
        };
        if (shift < 0) {
            throw new IllegalArgumentException("invalid " + option + ": " + option + "=\"" + text + "\", " + why);
        }
        try {
            long n = Long.parseLong(t.substring(0, end));
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return n << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid " + option + ": " + option + "=\"" + text
                    + "\", larger than " + Long.MAX_VALUE + " bytes");
        }
    }

    /** @return a human size, exact when a whole number of the unit: {@code 64 MiB}, {@code 1.5 GiB}, {@code 512 B} */
    public static String format(long bytes) {
        int unit = 0;
        double value = bytes;
        while (unit < UNITS.length - 1 && Math.abs(value) >= 1024) {
            value /= 1024;
            unit++;
        }
        if (value == Math.rint(value)) {
            return (long) value + " " + UNITS[unit];
        }
        return String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
    }
}
