package io.rdmablock.tools.copy;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar on stderr, redrawn in place with a carriage return at most every 200 ms:
 * {@code [#########.........]  45%  450.0 MiB / 1.0 GiB  812.3 MiB/s}. Disabled (no output until {@link #finish})
 * when {@code enabled} is false.
 */
final class Progress {
    private static final long REDRAW_NS = 200_000_000L;
    private final PrintStream out;
    private final long totalBytes;
    private final boolean enabled;
    private final long startNs = System.nanoTime();
    private long lastDrawNs;

    Progress(PrintStream out, long totalBytes, boolean enabled) {
        this.out = out;
        this.totalBytes = totalBytes;
        this.enabled = enabled;
    }

    void update(long doneBytes) {
        long now = System.nanoTime();
        if (!enabled || now - lastDrawNs < REDRAW_NS) {
            return;
        }
        lastDrawNs = now;
        out.print("\r" + line(doneBytes, now));
        out.flush();
    }

    /** Draws the final state and ends the line; returns the throughput in bytes/s. */
    double finish(long doneBytes) {
        long now = System.nanoTime();
        if (enabled) {
            out.print("\r" + line(doneBytes, now));
            out.println();
            out.flush();
        }
        return rate(doneBytes, now);
    }

    private double rate(long doneBytes, long now) {
        double s = Math.max(1e-9, (now - startNs) / 1e9);
        return doneBytes / s;
    }

    private String line(long doneBytes, long now) {
        int width = 30;
        int pct = totalBytes == 0 ? 100 : (int) (doneBytes * 100 / totalBytes);
        int fill = totalBytes == 0 ? width : (int) (doneBytes * width / totalBytes);
        String bar = "#".repeat(fill) + ".".repeat(width - fill);
        return String.format(Locale.ROOT, "[%s] %3d%%  %s / %s  %s/s   ", bar, pct, bytes(doneBytes),
                bytes(totalBytes), bytes((long) rate(doneBytes, now)));
    }

    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
