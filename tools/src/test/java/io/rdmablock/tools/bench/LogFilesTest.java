package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** write_bw_log, write_lat_log, write_iops_log, log_avg_msec, log_offset: fio's files, compared with fio's own. */
@Timeout(60)
class LogFilesTest {
    static final Path FIO = Path.of("/usr/bin/fio");
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 1 << 20);
    }

    static JobSpec spec(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of(name, m);
    }

    BenchRun.Outcome run(Path plotDir, JobSpec... s) throws Exception {
        return BenchRun.run(new ArrayList<>(List.of(s)), null, () -> new FileBlockDevice(file, 512, false, 8), null,
                BenchRun.Progress.none(), dir, plotDir);
    }

    /** fio with psync on a temp file; the options as --k=v. */
    void fio(String... opts) throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(FIO), "fio is not installed at /usr/bin/fio: nothing to compare with");
        Path f = dir.resolve("fio.img");
        List<String> cmd = new ArrayList<>(List.of(FIO.toString(), "--name=f", "--ioengine=psync", "--filename=" + f,
                "--output-format=terse"));
        for (int i = 0; i < opts.length; i += 2) {
            cmd.add("--" + opts[i] + "=" + opts[i + 1]);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "fio did not finish");
        assertEquals(0, p.exitValue(), out);
    }

    static List<String[]> rows(Path log) throws Exception {
        List<String[]> r = new ArrayList<>();
        for (String l : Files.readAllLines(log)) {
            r.add(l.split(", "));
        }
        return r;
    }

    @Test
    void shouldWriteOneLinePerIoInFiosColumnsAndFiosFileNames() throws Exception {
        String p = dir.resolve("rb").toString();
        BenchRun.Outcome o = run(null, spec("seq", "rw", "write", "size", "64k", "bs", "4k", "write_bw_log", p,
                "write_lat_log", p, "write_iops_log", p, "log_offset", "1"));
        assertEquals(0, o.entries().getFirst().error());
        fio("rw", "write", "size", "64k", "bs", "4k", "write_bw_log", dir.resolve("f").toString(), "write_lat_log",
                dir.resolve("f").toString(), "write_iops_log", dir.resolve("f").toString(), "log_offset", "1");
        for (String kind : List.of("bw", "clat", "lat", "iops")) {
            List<String[]> mine = rows(Path.of(p + "_" + kind + ".1.log"));
            List<String[]> theirs = rows(dir.resolve("f_" + kind + ".1.log"));
            assertEquals(theirs.size(), mine.size(), kind);
            assertEquals(16, mine.size(), kind);
            long last = -1;
            for (int i = 0; i < mine.size(); i++) {
                assertEquals(theirs.get(i).length, mine.get(i).length, kind + " line " + i);
                for (int c = 2; c < 6; c++) { // direction, block size, offset, priority
                    assertEquals(theirs.get(i)[c], mine.get(i)[c], kind + " line " + i + " column " + c);
                }
                long t = Long.parseLong(mine.get(i)[0]);
                assertTrue(t >= last, kind + ": time goes back at line " + i);
                last = t;
            }
            if (kind.equals("iops")) {
                assertTrue(mine.stream().allMatch(r -> r[1].equals("1")));
            }
        }
        List<String[]> bw = rows(Path.of(p + "_bw.1.log"));
        List<String[]> clat = rows(Path.of(p + "_clat.1.log"));
        for (int i = 0; i < bw.size(); i++) { // fio's add_bw_sample: bytes * 10^6 / clat ns
            assertEquals(4096L * 1_000_000 / Long.parseLong(clat.get(i)[1]), Long.parseLong(bw.get(i)[1]));
        }
        assertEquals(16, rows(Path.of(p + "_slat.1.log")).size());
        assertEquals(5, o.logs().size());
    }

    @Test
    void shouldLeaveOutTheOffsetAndTheJobNumberAsFioDoes() throws Exception {
        run(null, spec("j", "rw", "randread", "size", "32k", "bs", "4k", "write_iops_log", dir.resolve("a").toString(),
                "per_job_logs", "0"), spec("k", "rw", "read", "size", "32k", "write_bw_log", ""));
        fio("rw", "randread", "size", "32k", "bs", "4k", "write_iops_log", dir.resolve("b").toString(),
                "per_job_logs", "0");
        List<String[]> mine = rows(dir.resolve("a_iops.log"));
        List<String[]> theirs = rows(dir.resolve("b_iops.log"));
        assertEquals(theirs.size(), mine.size());
        assertEquals(theirs.getFirst().length, mine.getFirst().length);
        assertEquals(5, mine.getFirst().length);
        Path byName = Path.of("k_bw.2.log"); // empty value: the job name, in the working directory (fio)
        try {
            assertEquals(8, rows(byName).size());
        } finally {
            Files.deleteIfExists(byName);
        }
    }

    @Test
    void shouldAverageOverLogAvgMsecPerDirectionAsFioDoes() throws Exception {
        String p = dir.resolve("w").toString();
        run(null, spec("w", "rw", "randrw", "rate_iops", "100,50", "runtime", "1", "time_based", "1",
                "write_bw_log", p, "write_lat_log", p, "write_iops_log", p, "log_avg_msec", "200", "log_offset", "1"));
        fio("rw", "randrw", "size", "1m", "rate_iops", "100,50", "runtime", "1", "time_based", "1", "write_bw_log",
                dir.resolve("f").toString(), "write_iops_log", dir.resolve("f").toString(), "log_avg_msec", "200",
                "log_offset", "1");
        List<String[]> mine = rows(Path.of(p + "_iops.1.log"));
        List<String[]> theirs = rows(dir.resolve("f_iops.1.log"));
        assertTrue(Math.abs(mine.size() - theirs.size()) <= 3, mine.size() + " vs fio's " + theirs.size());
        double[] sum = new double[2];
        int[] n = new int[2];
        for (String[] r : mine) {
            assertEquals(6, r.length);
            assertEquals("0", r[3]); // windowed: block size and offset 0
            assertEquals("0", r[4]);
            int d = Integer.parseInt(r[2]);
            sum[d] += Long.parseLong(r[1]);
            n[d]++;
        }
        assertTrue(n[0] >= 3 && n[1] >= 3, "lines per direction " + n[0] + ", " + n[1]);
        assertEquals(100, sum[0] / n[0], 35, "mean read IOPS");
        assertEquals(50, sum[1] / n[1], 20, "mean write IOPS");
        for (String[] r : rows(Path.of(p + "_clat.1.log"))) {
            assertEquals("0", r[3]);
            assertTrue(Long.parseLong(r[1]) > 0);
        }
    }

    @Test
    void shouldBeReadByFio2gnuplot() throws Exception {
        Path tool = Path.of("/usr/bin/fio2gnuplot");
        Assumptions.assumeTrue(Files.isExecutable(tool), "fio2gnuplot is not installed");
        Path logs = Files.createDirectories(dir.resolve("logs"));
        run(null, spec("g", "rw", "randwrite", "rate_iops", "200", "runtime", "1", "time_based", "1",
                "write_bw_log", logs.resolve("g").toString(), "log_avg_msec", "100"));
        Process p = new ProcessBuilder(tool.toString(), "-b", "-k").directory(logs.toFile()).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("g_bw.1.log"), out);
        long ours = rows(logs.resolve("g_bw.1.log")).stream().filter(r -> Long.parseLong(r[0]) > 0).count();
        long parsed = Files.readAllLines(logs.resolve("result")).stream().filter(l -> l.startsWith("0 ")).count();
        assertTrue(ours >= 5, "lines " + ours);
        assertEquals(ours, parsed, out);
    }

    @Test
    void shouldDrawOneSvgPerMetricWithAPointPerLogLine() throws Exception {
        Path plots = dir.resolve("plots");
        String p = dir.resolve("m").toString();
        BenchRun.Outcome o = run(plots, spec("m", "rw", "randrw", "rate_iops", "300", "runtime", "1", "time_based",
                "1", "write_iops_log", p, "log_avg_msec", "100", "iodepth", "2"));
        assertEquals(List.of(plots.resolve("iops.svg"), plots.resolve("bw.svg"), plots.resolve("clat.svg")), o.plots());
        Document iops = xml(plots.resolve("iops.svg"));
        assertEquals("time (s)", text(iops, "xlabel"));
        assertEquals("IOPS", text(iops, "ylabel"));
        List<String[]> log = rows(Path.of(p + "_iops.1.log"));
        Map<String, Integer> points = points(iops);
        assertEquals(log.stream().filter(r -> r[2].equals("0")).count(), (long) points.get("m_iops.1 read"), points.toString());
        assertEquals(log.stream().filter(r -> r[2].equals("1")).count(), (long) points.get("m_iops.1 write"), points.toString());
        Document bw = xml(plots.resolve("bw.svg")); // no write_bw_log: --plot writes one in the plot directory
        assertEquals("bandwidth (KiB/s)", text(bw, "ylabel"));
        assertTrue(Files.exists(plots.resolve("m_bw.1.log")));
        Document lat = xml(plots.resolve("clat.svg"));
        assertEquals("completion latency (usec)", text(lat, "ylabel"));
        List<long[]> clat = LogPlots.read(plots.resolve("m_clat.1.log"));
        long reads = clat.stream().filter(r -> r[2] == 0).count();
        long last = clat.stream().filter(r -> r[2] == 0).mapToLong(r -> r[0]).max().orElseThrow();
        long bin = LogPlots.binMs(last);
        long bins = clat.stream().filter(r -> r[2] == 0).mapToLong(r -> r[0] / bin).distinct().count();
        Map<String, Integer> lp = points(lat);
        assertTrue(reads > 100, "reads " + reads);
        for (String pct : List.of("p50", "p90", "p99", "p99.9")) {
            assertEquals(bins, (long) lp.get("m_clat.1 read " + pct), lp.toString());
        }
    }

    @Test
    void shouldRefuseALogPrefixThatCannotBeCreatedBeforeAnyIo() throws Exception {
        Path blocker = Files.writeString(dir.resolve("plain-file"), "x");
        JobSpec s = spec("j", "rw", "write", "size", "64k", "write_iops_log", blocker.resolve("sub/x").toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run(null, s));
        assertTrue(e.getMessage().startsWith("invalid write_iops_log (or --plot): cannot create log file"), e.getMessage());
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "r")) {
            byte[] b = new byte[65536];
            f.readFully(b);
            assertTrue(java.util.stream.IntStream.range(0, b.length).allMatch(i -> b[i] == 0), "no block written");
        }
    }

    @Test
    void shouldPrintThePlotPathsInTheSummary() throws Exception {
        Path out = dir.resolve("out.txt");
        Path plots = dir.resolve("p");
        StringWriter err = new StringWriter();
        picocli.CommandLine cl = BenchCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        int rc = cl.execute("--file", file.toString(), "--direct=false", "--rw=randread", "--size=64k",
                "--plot", plots.toString(), "--output", out.toString());
        assertEquals(0, rc, err.toString());
        String text = Files.readString(out);
        assertTrue(text.contains("plots: " + plots.resolve("iops.svg") + " " + plots.resolve("bw.svg") + " "
                + plots.resolve("clat.svg")), text);
    }

    static Document xml(Path svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(svg.toFile());
    }

    static String text(Document d, String cls) {
        NodeList l = d.getElementsByTagName("text");
        for (int i = 0; i < l.getLength(); i++) {
            Element e = (Element) l.item(i);
            if (e.getAttribute("class").equals(cls)) {
                return e.getTextContent();
            }
        }
        return null;
    }

    static Map<String, Integer> points(Document d) {
        Map<String, Integer> m = new LinkedHashMap<>();
        NodeList l = d.getElementsByTagName("polyline");
        for (int i = 0; i < l.getLength(); i++) {
            Element e = (Element) l.item(i);
            String pts = e.getAttribute("points").strip();
            m.put(e.getAttribute("data-label"), pts.isEmpty() ? 0 : pts.split(" ").length);
        }
        return m;
    }
}
