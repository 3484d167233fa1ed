package io.rdmablock.tools.bench;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * Results as fio prints them: the human summary ({@code --output-format=normal}) and fio's JSON
 * ({@code --output-format=json}: "jobs"[] with "jobname", "error", "job_runtime", and "read"/"write"/"trim" objects
 * with "io_bytes", "bw_bytes", "bw" (KiB/s), "iops", "runtime" (ms), "total_ios", "slat_ns", "clat_ns" and "lat_ns"
 * ({"min","max","mean","stddev","N","percentile":{"99.000000":ns}}), "bw_min".."iops_samples"), so fio result tooling
 * reads it. Percentiles come from HdrHistogram (3 significant digits). Extra fields: per job "node_cpu_ns_per_io"
 * and "client_cpu_ns_per_io"; at the top "rdmablock".
 */
final class FioReport {

    /** One reported job (a clone, or several merged by group_reporting). */
    record Entry(String name, String description, int jobs, JobSpec spec, DirStats read, DirStats write, DirStats trim,
                 long runtimeNs,
                 int error, List<String> messages, List<long[]> deltas, int groupId, int latencyDepth,
                 boolean latencySettled, long verifiedBlocks, long neverWritten, SteadyState steady) {
        /** Completed reads, writes and trims. */
        long ios() {
            return read.ios + write.ios + trim.ios;
        }
    }

    /** CPU figures of the run: this process and, when known, the storage node. */
    record Cpu(ProcStat client, ProcStat node, String nodePid) {
    }

    private FioReport() {
    }

    /**
     * Builds entries from jobs: one per job clone, or, with group_reporting, one per reporting group (fio merges the
     * jobs of a group; groups come from stonewall/new_group).
     */
    static List<Entry> entries(List<Job> jobs) {
        List<Entry> out = new ArrayList<>();
        Map<Integer, List<Job>> groups = new java.util.TreeMap<>();
        for (Job j : jobs) {
            groups.computeIfAbsent(j.spec.groupId, g -> new ArrayList<>()).add(j);
        }
        for (List<Job> g : groups.values()) {
            if (g.stream().anyMatch(j -> j.spec.groupReporting)) {
                out.add(entry(g));
            } else {
                for (Job j : g) {
                    out.add(entry(List.of(j)));
                }
            }
        }
        return out;
    }

    private static Entry entry(List<Job> jobs) {
        DirStats r = new DirStats();
        DirStats w = new DirStats();
        DirStats t = new DirStats();
        long runtime = 0;
        int error = 0;
        int depth = 0;
        boolean settled = true;
        long verified = 0;
        long never = 0;
        List<String> msgs = new ArrayList<>();
        for (Job j : jobs) {
            r.add(j.merged(true));
            w.add(j.merged(false));
            t.add(j.merged(2));
            runtime = Math.max(runtime, j.runtimeNs());
            error = error != 0 ? error : j.errorCode();
            msgs.addAll(j.messages);
            verified += j.verifiedBlocks.sum();
            if (j instanceof Worker wk) {
                depth = Math.max(depth, wk.latencyDepth());
                settled &= wk.latencySettled();
                never += wk.cloneIndex() == 0 ? wk.neverWritten() : 0; // the clones share one state
            }
        }
        Job first = jobs.getFirst();
        return new Entry(first.name, first.spec.description, jobs.size(), first.spec, r, w, t, runtime, error,
                List.copyOf(msgs), sumDeltas(jobs), first.spec.groupId, depth, settled, verified, never, first.steady);
    }

    private static List<long[]> sumDeltas(List<Job> jobs) {
        int n = jobs.stream().mapToInt(j -> j.samples.size()).min().orElse(0);
        List<long[]> d = new ArrayList<>();
        for (int i = 1; i < n; i++) {
            long[] s = new long[6];
            for (Job j : jobs) {
                for (int k = 0; k < 6 && k < j.samples.get(i).length; k++) {
                    s[k] += j.samples.get(i)[k] - j.samples.get(i - 1)[k];
                }
            }
            d.add(s);
        }
        return d;
    }

    // ---------------------------------------------------------------- JSON

    static String json(List<Entry> entries, Cpu cpu, String deviceName) {
        Map<String, Object> top = new LinkedHashMap<>();
        long nowMs = System.currentTimeMillis();
        top.put("fio version", "rdmablock-bench-0.1");
        top.put("timestamp", nowMs / 1000);
        top.put("timestamp_ms", nowMs);
        top.put("time", ZonedDateTime.now().format(DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.ROOT)));
        top.put("global options", Map.of());
        List<Object> jobs = new ArrayList<>();
        long totalIos = 0;
        for (Entry e : entries) {
            totalIos += e.ios();
        }
        for (Entry e : entries) {
            Map<String, Object> j = new LinkedHashMap<>();
            j.put("jobname", e.name);
            j.put("groupid", e.groupId);
            j.put("job_start", nowMs - e.runtimeNs / 1_000_000);
            j.put("error", e.error);
            j.put("eta", 0);
            j.put("elapsed", Math.max(1, e.runtimeNs / 1_000_000_000));
            j.put("job options", new LinkedHashMap<>(e.spec.options));
            j.put("read", dir(e, e.read, 0));
            j.put("write", dir(e, e.write, 1));
            j.put("trim", dir(e, e.trim, 2));
            j.put("job_runtime", e.runtimeNs / 1_000_000);
            double share = totalIos == 0 ? 0 : (double) (e.ios()) / totalIos;
            if (cpu.client() != null) {
                j.put("usr_cpu", 100.0 * cpu.client().userNs() * share / e.runtimeNs);
                j.put("sys_cpu", 100.0 * cpu.client().systemNs() * share / e.runtimeNs);
                j.put("ctx", (long) (cpu.client().ctx() * share));
            }
            j.put("majf", 0);
            j.put("minf", 0);
            j.put("iodepth", e.spec.iodepth);
            j.put("latency_depth", e.latencyDepth > 0 ? e.latencyDepth : e.spec.iodepth);
            j.put("latency_target", e.spec.latencyTargetNs);
            j.put("latency_percentile", e.spec.latencyPercentile);
            j.put("latency_window", e.spec.latencyWindowNs / 1000);
            if (e.spec.verify != JobSpec.Verify.NONE) {
                j.put("verified_blocks", e.verifiedBlocks);
                j.put("never_written_blocks", e.neverWritten);
            }
            long ios = e.ios();
            if (cpu.client() != null && ios > 0) {
                j.put("client_cpu_ns_per_io", cpu.client().totalNs() / (double) Math.max(1, totalIos));
                j.put("client_ctx_per_io", cpu.client().ctx() / (double) Math.max(1, totalIos));
            }
            if (cpu.node() != null && ios > 0) {
                j.put("node_cpu_ns_per_io", cpu.node().totalNs() / (double) Math.max(1, totalIos));
                j.put("node_ctx_per_io", cpu.node().ctx() / (double) Math.max(1, totalIos));
            }
            if (e.steady != null) {
                j.put("steadystate", e.steady.json());
            }
            if (!e.messages.isEmpty()) {
                j.put("messages", e.messages);
            }
            jobs.add(j);
        }
        top.put("jobs", jobs);
        top.put("disk_util", List.of());
        Map<String, Object> rb = new LinkedHashMap<>();
        rb.put("device", deviceName);
        rb.put("node_pid", cpu.nodePid());
        rb.put("client_cpu_ns", cpu.client() == null ? null : cpu.client().totalNs());
        rb.put("node_cpu_ns", cpu.node() == null ? null : cpu.node().totalNs());
        rb.put("total_ios", totalIos);
        top.put("rdmablock", rb);
        return JsonWriter.write(top);
    }

    private static Map<String, Object> dir(Entry e, DirStats s, int ddir) {
        Map<String, Object> d = new LinkedHashMap<>();
        long runtimeMs = s.ios == 0 ? 0 : Math.max(1, e.runtimeNs / 1_000_000);
        double secs = e.runtimeNs / 1e9;
        long bwBytes = s.ios == 0 ? 0 : Math.round(s.bytes / secs);
        d.put("io_bytes", s.bytes);
        d.put("io_kbytes", s.bytes / 1024);
        d.put("bw_bytes", bwBytes);
        d.put("bw", bwBytes / 1024);
        d.put("iops", s.ios == 0 ? 0.0 : s.ios / secs);
        d.put("runtime", runtimeMs);
        d.put("total_ios", s.ios);
        d.put("short_ios", 0);
        d.put("drop_ios", 0);
        ReportOptions r = e.spec.report;
        d.put("slat_ns", lat(r.disableSlat ? null : s.slat, r.slatPercentiles ? e.spec.percentiles : null));
        d.put("clat_ns", lat(r.disableClat ? null : s.clat, r.clatPercentiles ? e.spec.percentiles : null));
        d.put("lat_ns", lat(r.disableLat ? null : s.lat, r.latPercentilesJson() ? e.spec.percentiles : null));
        double[] bw = new double[r.disableBw ? 0 : e.deltas.size()];
        double[] iops = new double[e.deltas.size()];
        for (int i = 0; i < bw.length; i++) {
            long[] x = e.deltas.get(i);
            iops[i] = x[2 * ddir];
            bw[i] = x[2 * ddir + 1] / 1024.0;
        }
        double[] bwStat = stats(bw);
        double[] iopsStat = stats(iops);
        d.put("bw_min", (long) bwStat[0]);
        d.put("bw_max", (long) bwStat[1]);
        d.put("bw_agg", s.ios == 0 ? 0.0 : 100.0);
        d.put("bw_mean", bwStat[2]);
        d.put("bw_dev", bwStat[3]);
        d.put("bw_samples", bw.length);
        d.put("iops_min", (long) iopsStat[0]);
        d.put("iops_max", (long) iopsStat[1]);
        d.put("iops_mean", iopsStat[2]);
        d.put("iops_stddev", iopsStat[3]);
        d.put("iops_samples", iops.length);
        return d;
    }

    private static Map<String, Object> lat(Histogram h, double[] percentiles) {
        Map<String, Object> m = new LinkedHashMap<>();
        long n = h == null ? 0 : h.getTotalCount();
        m.put("min", n == 0 ? 0 : h.getMinValue());
        m.put("max", n == 0 ? 0 : h.getMaxValue());
        m.put("mean", n == 0 ? 0.0 : h.getMean());
        m.put("stddev", n == 0 ? 0.0 : h.getStdDeviation());
        m.put("N", n);
        if (percentiles != null && n > 0) {
            Map<String, Object> p = new LinkedHashMap<>();
            for (double q : percentiles) {
                p.put(String.format(Locale.ROOT, "%.6f", q), h.getValueAtPercentile(q));
            }
            m.put("percentile", p);
        }
        return m;
    }

    /** {min, max, mean, stddev} of samples; zeros when empty. */
    private static double[] stats(double[] v) {
        if (v.length == 0) {
            return new double[4];
        }
        double min = Double.MAX_VALUE;
        double max = 0;
        double sum = 0;
        for (double x : v) {
            min = Math.min(min, x);
            max = Math.max(max, x);
            sum += x;
        }
        double mean = sum / v.length;
        double var = 0;
        for (double x : v) {
            var += (x - mean) * (x - mean);
        }
        return new double[] {min, max, mean, v.length > 1 ? Math.sqrt(var / (v.length - 1)) : 0};
    }

    // ---------------------------------------------------------------- human

    static String human(List<Entry> entries, Cpu cpu) {
        StringBuilder sb = new StringBuilder();
        String when = ZonedDateTime.now().format(DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.ROOT));
        long totalIos = entries.stream().mapToLong(e -> e.ios()).sum();
        for (Entry e : entries) {
            sb.append(String.format(Locale.ROOT, "%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s%n", e.name, e.groupId, e.jobs, e.error,
                    ProcessHandle.current().pid(), when));
            if (!e.description.isEmpty()) {
                sb.append("  Description  : [").append(e.description).append("]\n");
            }
            for (String m : e.messages) {
                sb.append("  ").append(m).append('\n');
            }
            humanDir(sb, e, e.read, "read");
            humanDir(sb, e, e.write, "write");
            humanDir(sb, e, e.trim, "trim");
            if (cpu.client() != null) {
                double share = totalIos == 0 ? 0 : (double) (e.ios()) / totalIos;
                sb.append(String.format(Locale.ROOT, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d (whole process)%n",
                        100.0 * cpu.client().userNs() * share / e.runtimeNs,
                        100.0 * cpu.client().systemNs() * share / e.runtimeNs, (long) (cpu.client().ctx() * share)));
            }
            sb.append(String.format(Locale.ROOT, "  IO depths    : %d (queue pairs: %d)%n", e.spec.iodepth, e.jobs));
            sb.append(e.steady != null ? e.steady.human() : "");
            if (e.spec.latencyTargetNs > 0) {
                sb.append(String.format(Locale.ROOT, "  latency      : target=%d usec, window=%d usec, percentile=%.2f%%,"
                        + " depth=%d (searched 1..%d%s)%n", e.spec.latencyTargetNs / 1000, e.spec.latencyWindowNs / 1000,
                        e.spec.latencyPercentile, e.latencyDepth, e.spec.iodepth,
                        e.latencySettled ? "" : "; search not finished when the job ended"));
            }
            if (e.spec.verify != JobSpec.Verify.NONE) {
                sb.append(String.format(Locale.ROOT, "  verify       : %d blocks verified, %d blocks never written%n",
                        e.verifiedBlocks, e.neverWritten));
            }
        }
        if (totalIos > 0) {
            if (cpu.client() != null) {
                sb.append(String.format(Locale.ROOT,
                        "Client CPU per I/O: %.2f us (user %.2f, sys %.2f); context switches per I/O %.2f%n",
                        cpu.client().totalNs() / 1000.0 / totalIos, cpu.client().userNs() / 1000.0 / totalIos,
                        cpu.client().systemNs() / 1000.0 / totalIos, cpu.client().ctx() / (double) totalIos));
            }
            if (cpu.node() != null) {
                sb.append(String.format(Locale.ROOT,
                        "Node CPU per I/O  : %.2f us (user %.2f, sys %.2f; pid %s); context switches per I/O %.2f%n",
                        cpu.node().totalNs() / 1000.0 / totalIos, cpu.node().userNs() / 1000.0 / totalIos,
                        cpu.node().systemNs() / 1000.0 / totalIos, cpu.nodePid(), cpu.node().ctx() / (double) totalIos));
            }
        }
        for (int g : entries.stream().map(Entry::groupId).distinct().sorted().toList()) {
            runStatus(sb, g, entries.stream().filter(e -> e.groupId == g).toList());
        }
        return sb.toString();
    }

    private static void runStatus(StringBuilder sb, int group, List<Entry> entries) {
        sb.append("\nRun status group ").append(group).append(" (all jobs):\n");
        for (int ddir = 0; ddir < 3; ddir++) {
            long bytes = 0;
            long maxRt = 0;
            long minRt = Long.MAX_VALUE;
            for (Entry e : entries) {
                DirStats s = ddir == 0 ? e.read : ddir == 1 ? e.write : e.trim;
                if (s.ios > 0) {
                    bytes += s.bytes;
                    maxRt = Math.max(maxRt, e.runtimeNs);
                    minRt = Math.min(minRt, e.runtimeNs);
                }
            }
            if (bytes == 0) {
                continue;
            }
            double bw = bytes / (maxRt / 1e9);
            sb.append(String.format(Locale.ROOT, "  %5s: bw=%s (%s), io=%s (%s), run=%d-%dmsec%n", new String[] {"READ", "WRITE", "TRIM"}[ddir],
                    bin(bw) + "/s", dec(bw) + "/s", bin(bytes), dec(bytes), minRt / 1_000_000, maxRt / 1_000_000));
        }
    }

    private static void humanDir(StringBuilder sb, Entry e, DirStats s, String dir) {
        if (s.ios == 0) {
            return;
        }
        double secs = e.runtimeNs / 1e9;
        double bw = s.bytes / secs;
        sb.append(String.format(Locale.ROOT, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)%n", dir,
                num(s.ios / secs), bin(bw), dec(bw), bin(s.bytes), e.runtimeNs / 1_000_000));
        ReportOptions r = e.spec.report;
        if (!r.disableSlat) {
            latLine(sb, "    slat", s.slat);
        }
        if (!r.disableClat) {
            latLine(sb, "    clat", s.clat);
        }
        if (!r.disableLat) {
            latLine(sb, "     lat", s.lat);
        }
        // fio's show_ddir_status order: slat, clat, lat percentiles, each when enabled and with samples
        if (r.slatPercentiles && !r.disableSlat) {
            percentiles(sb, "slat", s.slat, e.spec.percentiles);
        }
        if (r.clatPercentiles && !r.disableClat) {
            percentiles(sb, "clat", s.clat, e.spec.percentiles);
        }
        if (Boolean.TRUE.equals(r.latPercentiles) && !r.disableLat) {
            percentiles(sb, "lat", s.lat, e.spec.percentiles);
        }
    }

    private static void percentiles(StringBuilder sb, String label, Histogram h, double[] ps) {
        if (h.getTotalCount() == 0) {
            return;
        }
        long[] unit = unitOf(h);
        sb.append(String.format(Locale.ROOT, "    %s percentiles (%s):%n", label, unit == null ? "nsec" : unitName(unit[0])));
        for (int i = 0; i < ps.length; i++) {
            if (i % 4 == 0) {
                sb.append("     |");
            }
            long v = h.getValueAtPercentile(ps[i]) / (unit == null ? 1 : unit[0]);
            sb.append(String.format(Locale.ROOT, " %6.2fth=[%6d]", ps[i], v)).append(i % 4 == 3 || i == ps.length - 1 ? "\n" : ",");
        }
    }

    private static void latLine(StringBuilder sb, String label, Histogram h) {
        long[] unit = unitOf(h);
        long div = unit == null ? 1 : unit[0];
        sb.append(String.format(Locale.ROOT, "%s (%s): min=%d, max=%d, avg=%.2f, stdev=%.2f%n", label, unitName(div),
                h.getMinValue() / div, h.getMaxValue() / div, h.getMean() / div, h.getStdDeviation() / div));
    }

    private static long[] unitOf(Histogram h) {
        double mean = h.getMean();
        if (mean >= 10_000_000) {
            return new long[] {1_000_000};
        }
        if (mean >= 10_000) {
            return new long[] {1_000};
        }
        return null;
    }

    private static String unitName(long div) {
        return div == 1_000_000 ? "msec" : div == 1_000 ? "usec" : "nsec";
    }

    /** fio's num2str for counts: 3 significant digits with k/M suffixes. */
    static String num(double v) {
        if (v < 10_000) {
            return String.valueOf(Math.round(v));
        }
        String[] suffix = {"k", "M", "G"};
        int i = -1;
        while (v >= 1000 && i < 2) {
            v /= 1000;
            i++;
        }
        String s = v >= 100 ? String.valueOf(Math.round(v)) : String.format(Locale.ROOT, v >= 10 ? "%.1f" : "%.2f", v);
        return s + suffix[i];
    }

    static String bin(double bytes) {
        String[] u = {"B", "KiB", "MiB", "GiB", "TiB"};
        int i = 0;
        while (bytes >= 10_240 && i < u.length - 1) {
            bytes /= 1024;
            i++;
        }
        return String.format(Locale.ROOT, bytes >= 100 ? "%.0f%s" : "%.1f%s", bytes, u[i]);
    }

    static String dec(double bytes) {
        String[] u = {"B", "kB", "MB", "GB", "TB"};
        int i = 0;
        while (bytes >= 10_000 && i < u.length - 1) {
            bytes /= 1000;
            i++;
        }
        return String.format(Locale.ROOT, bytes >= 100 ? "%.0f%s" : "%.1f%s", bytes, u[i]);
    }
}
