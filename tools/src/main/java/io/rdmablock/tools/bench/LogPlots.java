package io.rdmablock.tools.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code rdmablock bench --plot DIR}: SVG line plots, drawn from the jobs' fio log files ({@link IoLogs}), one file
 * per metric in {@code DIR}: {@code iops.svg} (IOPS), {@code bw.svg} (bandwidth, KiB/s) and {@code clat.svg}
 * (completion latency in usec: percentiles 50, 90, 99 and 99.9 per time bin of a per-I/O clat log, or the logged
 * means of an averaged one). X axis: time in seconds since the job started. One line per job clone, data direction
 * and (latency) percentile, in a legend. An averaged log ({@code log_avg_msec}) gives one point per line of the log; a
 * per-I/O log is put in time bins of 1 s (a tenth of the run when it is shorter than 10 s): IOPS = I/Os per bin / bin
 * seconds, bandwidth = bytes per bin / bin seconds / 1024. Plain SVG 1.1, no script; each line is a
 * {@code <polyline class="series" data-label=... points=...>}.
 */
final class LogPlots {
    private static final int W = 900;
    private static final int H = 480;
    private static final int LEFT = 90;
    private static final int RIGHT = 220;
    private static final int TOP = 40;
    private static final int BOTTOM = 60;
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    private static final double[] PERCENTILES = {50, 90, 99, 99.9};

    /** One line of a plot: x in seconds, y in the plot's unit. */
    record Series(String label, double[] x, double[] y) {
    }

    private LogPlots() {
    }

    /**
     * Writes the plots for {@code jobs} (those with logs) into {@code dir}.
     *
     * @return the files written (a metric without any log gives no file)
     * @throws UncheckedIOException when a log cannot be read or a plot written
     */
    static List<Path> write(Path dir, List<Job> jobs) {
        List<Series> iops = new ArrayList<>();
        List<Series> bw = new ArrayList<>();
        List<Series> lat = new ArrayList<>();
        for (Job j : jobs) {
            IoLogs l = j.logs;
            if (l == null) {
                continue;
            }
            rate(iops, l, IoLogs.Kind.IOPS, false);
            rate(bw, l, IoLogs.Kind.BW, true);
            latency(lat, l);
        }
        List<Path> out = new ArrayList<>();
        try {
            Files.createDirectories(dir);
            plot(out, dir.resolve("iops.svg"), "IOPS over time", "IOPS", iops, false);
            plot(out, dir.resolve("bw.svg"), "Bandwidth over time", "bandwidth (KiB/s)", bw, false);
            plot(out, dir.resolve("clat.svg"), "Completion latency over time", "completion latency (usec)", lat, true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write plot in " + dir + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** Rows of a fio log: {time ms, value, ddir, bs}. */
    static List<long[]> read(Path log) {
        List<long[]> rows = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(log, StandardCharsets.US_ASCII)) {
                String[] f = line.split(",");
                if (f.length < 4) {
                    continue;
                }
                rows.add(new long[] {Long.parseLong(f[0].strip()), Long.parseLong(f[1].strip()),
                        Long.parseLong(f[2].strip()), Long.parseLong(f[3].strip())});
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read log " + log + ": " + e.getMessage(), e);
        }
        return rows;
    }

    /** The latest time (ms) of the rows: a per-I/O log is not sorted by time. */
    private static long lastMs(List<long[]> rows) {
        long last = 0;
        for (long[] x : rows) {
            last = Math.max(last, x[0]);
        }
        return last;
    }

    /** The bin width in ms of a per-I/O log spanning {@code spanMs}: 1000, or a tenth of a shorter run. */
    static long binMs(long spanMs) {
        return spanMs >= 10_000 ? 1000 : Math.max(1, (spanMs + 9) / 10);
    }

    private static String name(Path log) {
        String f = log.getFileName().toString();
        return f.endsWith(".log") ? f.substring(0, f.length() - 4) : f;
    }

    private static void rate(List<Series> out, IoLogs l, IoLogs.Kind k, boolean bytes) {
        Path f = l.file(k);
        if (f == null) {
            return;
        }
        List<long[]> rows = read(f);
        for (int d = 0; d < 2; d++) {
            int dir = d;
            List<long[]> r = rows.stream().filter(x -> x[2] == dir).toList();
            if (r.isEmpty()) {
                continue;
            }
            String label = name(f) + " " + (d == 0 ? "read" : "write");
            if (l.avgMsec(k) > 0) {
                out.add(new Series(label, r.stream().mapToDouble(x -> x[0] / 1000.0).toArray(),
                        r.stream().mapToDouble(x -> x[1]).toArray()));
                continue;
            }
            long last = lastMs(r);
            long bin = binMs(last);
            int n = (int) (last / bin) + 1;
            double[] sum = new double[n];
            for (long[] x : r) {
                sum[(int) (x[0] / bin)] += bytes ? x[3] / 1024.0 : 1;
            }
            double[] xs = new double[n];
            for (int i = 0; i < n; i++) {
                xs[i] = (i + 1) * bin / 1000.0;
                sum[i] = sum[i] * 1000.0 / bin;
            }
            out.add(new Series(label, xs, sum));
        }
    }

    private static void latency(List<Series> out, IoLogs l) {
        Path f = l.file(IoLogs.Kind.CLAT);
        if (f == null) {
            return;
        }
        List<long[]> rows = read(f);
        for (int d = 0; d < 2; d++) {
            int dir = d;
            List<long[]> r = rows.stream().filter(x -> x[2] == dir).toList();
            if (r.isEmpty()) {
                continue;
            }
            String label = name(f) + " " + (d == 0 ? "read" : "write");
            if (l.avgMsec(IoLogs.Kind.CLAT) > 0) {
                out.add(new Series(label + " mean", r.stream().mapToDouble(x -> x[0] / 1000.0).toArray(),
                        r.stream().mapToDouble(x -> x[1] / 1000.0).toArray()));
                continue;
            }
            percentiles(out, label, r);
        }
    }

    /**
     * Percentiles 50, 90, 99 and 99.9 of per-I/O latencies (ns in the log, usec plotted) per time bin of
     * {@link #binMs}, one series each, a point per bin with completions. The rows ({@code [ms, ns, dir, bs]}) may
     * come in any order: a per-I/O log is in completion order per writer, not sorted by time.
     */
    static void percentiles(List<Series> out, String label, List<long[]> r) {
        long last = lastMs(r);
        long bin = binMs(last);
        int n = (int) (last / bin) + 1;
        int[] count = new int[n];
        for (long[] x : r) {
            count[(int) (x[0] / bin)]++;
        }
        double[][] byBin = new double[n][];
        for (int i = 0; i < n; i++) {
            byBin[i] = new double[count[i]];
            count[i] = 0;
        }
        for (long[] x : r) {
            int i = (int) (x[0] / bin);
            byBin[i][count[i]++] = x[1] / 1000.0;
        }
        List<double[]> bins = new ArrayList<>();
        List<Double> xs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (byBin[i].length > 0) { // a bin without completions has no percentile: no point
                Arrays.sort(byBin[i]);
                bins.add(byBin[i]);
                xs.add((i + 1) * bin / 1000.0);
            }
        }
        for (double p : PERCENTILES) {
            double[] y = new double[bins.size()];
            for (int i = 0; i < y.length; i++) {
                double[] v = bins.get(i);
                y[i] = v[(int) Math.min(v.length - 1, Math.ceil(p / 100 * v.length) - 1)];
            }
            out.add(new Series(label + String.format(Locale.ROOT, " p%s", p == Math.rint(p)
                    ? String.valueOf((int) p) : String.valueOf(p)),
                    xs.stream().mapToDouble(Double::doubleValue).toArray(), y));
        }
    }

    private static void plot(List<Path> out, Path file, String title, String yLabel, List<Series> series,
                             boolean logWhenWide) throws IOException {
        if (series.isEmpty()) {
            return;
        }
        Files.writeString(file, svg(title, "time (s)", yLabel, series, logWhenWide), StandardCharsets.UTF_8);
        out.add(file);
    }

    /** The SVG document of one plot. */
    static String svg(String title, String xLabel, String yLabel, List<Series> series) {
        return svg(title, xLabel, yLabel, series, false);
    }

    /**
     * The SVG document of one plot; with {@code logWhenWide}, a y axis in decades (log10) when the positive values
     * span more than two decades (latency percentiles: p50 stays visible beside p99.9), said on the plot.
     */
    static String svg(String title, String xLabel, String yLabel, List<Series> series, boolean logWhenWide) {
        double xMax = 0;
        double yMax = 0;
        double yMinPos = Double.MAX_VALUE;
        for (Series s : series) {
            for (double x : s.x) {
                xMax = Math.max(xMax, x);
            }
            for (double y : s.y) {
                yMax = Math.max(yMax, y);
                if (y > 0) {
                    yMinPos = Math.min(yMinPos, y);
                }
            }
        }
        xMax = nice(xMax);
        boolean log = logWhenWide && yMinPos < Double.MAX_VALUE && yMax / yMinPos > 100;
        double lo = log ? Math.floor(Math.log10(yMinPos)) : 0;
        double hi = log ? Math.max(lo + 1, Math.ceil(Math.log10(yMax))) : 0;
        yMax = log ? Math.pow(10, hi) : nice(yMax);
        int pw = W - LEFT - RIGHT;
        int ph = H - TOP - BOTTOM;
        StringBuilder sb = new StringBuilder();
        sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\""
                + " height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", W, H, W, H));
        sb.append("<title>").append(esc(title)).append("</title>\n");
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", W, H));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">%s</text>%n",
                LEFT + pw / 2, esc(title)));
        sb.append(String.format(Locale.ROOT, "<g class=\"axes\" stroke=\"black\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\""
                + " y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>%n",
                LEFT, TOP + ph, LEFT + pw, TOP + ph, LEFT, TOP, LEFT, TOP + ph));
        for (int i = 0; i <= 5; i++) {
            double fx = xMax * i / 5;
            int px = LEFT + pw * i / 5;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                    + "<text class=\"xtick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    px, TOP, px, TOP + ph, px, TOP + ph + 16, tick(fx)));
        }
        int yTicks = log ? (int) (hi - lo) : 5;
        for (int i = 0; i <= yTicks; i++) {
            double fy = log ? Math.pow(10, lo + i) : yMax * i / 5;
            int py = TOP + ph - ph * i / yTicks;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                    + "<text class=\"ytick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                    LEFT, py, LEFT + pw, py, LEFT - 6, py + 4, tick(fy)));
        }
        if (log) {
            sb.append(String.format(Locale.ROOT, "<text class=\"yscale\" x=\"%d\" y=\"%d\" font-size=\"10\">log scale"
                    + "</text>%n", LEFT + 4, TOP - 4));
        }
        sb.append(String.format(Locale.ROOT, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                LEFT + pw / 2, H - 16, esc(xLabel)));
        sb.append(String.format(Locale.ROOT, "<text class=\"ylabel\" x=\"18\" y=\"%d\" text-anchor=\"middle\""
                + " transform=\"rotate(-90 18 %d)\">%s</text>%n", TOP + ph / 2, TOP + ph / 2, esc(yLabel)));
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            String color = COLORS[i % COLORS.length];
            StringBuilder pts = new StringBuilder();
            for (int k = 0; k < s.x.length; k++) {
                double px = LEFT + pw * (xMax == 0 ? 0 : s.x[k] / xMax);
                double fy = log ? (Math.log10(Math.max(s.y[k], Math.pow(10, lo))) - lo) / (hi - lo)
                        : yMax == 0 ? 0 : s.y[k] / yMax;
                double py = TOP + ph - ph * fy;
                pts.append(k == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", px, py));
            }
            sb.append(String.format(Locale.ROOT, "<polyline class=\"series\" data-label=\"%s\" fill=\"none\""
                    + " stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>%n", esc(s.label), color, pts));
            int ly = TOP + 10 + 18 * i;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\""
                    + " stroke-width=\"3\"/><text x=\"%d\" y=\"%d\">%s</text>%n", W - RIGHT + 12, ly, W - RIGHT + 32,
                    ly, color, W - RIGHT + 38, ly + 4, esc(s.label)));
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    /** The smallest of 1, 2, 2.5, 5 x 10^k at or above {@code v} (1 for 0). */
    static double nice(double v) {
        if (v <= 0) {
            return 1;
        }
        double e = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * e >= v) {
                return m * e;
            }
        }
        return 10 * e;
    }

    private static String tick(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return String.valueOf((long) v);
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
