package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** steadystate, steadystate_duration, _ramp_time, _check_interval: fio's steadystate.c, and a run against fio's. */
@Timeout(60)
class SteadyStateTest {
    static final Path FIO = Path.of("/usr/bin/fio");
    static final long S = 1_000_000_000L;
    @TempDir
    Path dir;

    static JobSpec spec(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of(name, m);
    }

    static Job stub(JobSpec s) {
        return new Job(s, s.name, 1) {
            @Override
            void start() {
            }

            @Override
            void release() {
            }
        };
    }

    /** Least-squares slope of y against 0..n-1, the textbook way. */
    static double slope(long[] y) {
        int n = y.length;
        double mx = (n - 1) / 2.0;
        double my = 0;
        for (long v : y) {
            my += v;
        }
        my /= n;
        double num = 0;
        double den = 0;
        for (int i = 0; i < n; i++) {
            num += (i - mx) * (y[i] - my);
            den += (i - mx) * (i - mx);
        }
        return num / den;
    }

    @Test
    void shouldComputeFiosSlopeOverTheRollingWindowAndStopBelowTheLimit() {
        JobSpec s = spec("s", "steadystate", "iops_slope:2%", "steadystate_duration", "4");
        Job j = stub(s);
        List<SteadyState> w = SteadyState.watch(List.of(j));
        assertEquals(1, w.size());
        SteadyState ss = w.getFirst();
        assertSame(ss, j.steady);
        ss.start(0);
        long[] iops = {100, 200, 300, 400, 420, 430, 431, 432, 433, 433};
        List<Long> seen = new ArrayList<>();
        int attainedAt = -1;
        for (int i = 0; i < iops.length && attainedAt < 0; i++) {
            j.readOps.add(iops[i]);
            j.readBytes.add(iops[i] * 4096);
            boolean done = ss.poll((i + 1) * S);
            seen.add(iops[i]);
            if (seen.size() >= 4) {
                long[] win = seen.subList(seen.size() - 4, seen.size()).stream().mapToLong(Long::longValue).toArray();
                double mean = java.util.Arrays.stream(win).average().orElseThrow();
                assertEquals(100 * slope(win) / mean, ss.criterion(), 1e-9, "check " + (i + 1));
                assertEquals(Math.abs(100 * slope(win) / mean) < 2, done, "check " + (i + 1));
            } else {
                assertFalse(done);
            }
            if (done) {
                attainedAt = i;
            }
        }
        assertEquals(7, attainedAt); // the window 420, 430, 431, 432: slope 3.5/428.25 = 0.82 %
        assertTrue(ss.attained());
        assertEquals(8 * S, j.endNs);
        Map<String, Object> json = ss.json();
        assertEquals("iops_slope:2.000000%", json.get("ss"));
        assertEquals(1, json.get("attained"));
        @SuppressWarnings("unchecked")
        Map<String, Object> data = (Map<String, Object>) json.get("data");
        assertEquals(List.of(420L, 430L, 431L, 432L), data.get("iops"));
        assertEquals(List.of(420L * 4096, 430L * 4096, 431L * 4096, 432L * 4096), data.get("bw"));
    }

    @Test
    void shouldWaitForTheRampAndUseTheMeanDeviation() {
        JobSpec s = spec("d", "ss", "bw:10%", "ss_dur", "3", "ss_ramp", "2");
        Job j = stub(s);
        SteadyState ss = SteadyState.watch(List.of(j)).getFirst();
        ss.start(0);
        long[] bytes = {1000, 1000, 5000, 5200, 5300};
        boolean[] expect = {false, false, false, false, true}; // data from 3 s (ramp + one interval): 5000, 5200, 5300
        for (int i = 0; i < bytes.length; i++) {
            j.writeBytes.add(bytes[i]);
            j.writeOps.add(1);
            assertEquals(expect[i], ss.poll((i + 1) * S), "check " + (i + 1));
        }
        double mean = (5000 + 5200 + 5300) / 3.0;
        assertEquals(100.0 * (mean - 5000) / mean, ss.criterion(), 1e-9);
    }

    @Test
    void shouldRefuseBadValuesNamingOptionJobAndBounds() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> spec("a", "steadystate", "iops", "ss_dur", "10"));
        assertTrue(e.getMessage().contains("invalid steadystate: 'iops'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("a", "steadystate", "lat:1ms", "ss_dur", "10"));
        assertTrue(e.getMessage().contains("not supported"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("b", "ss", "iops:1%", "ss_dur", "10",
                "ss_interval", "500ms"));
        assertTrue(e.getMessage().contains("steadystate_check_interval: 0.5 s in job 'b': min=1s"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("c", "ss", "iops:1%", "ss_dur", "3",
                "ss_interval", "2"));
        assertTrue(e.getMessage().contains("steadystate_duration: 3.0 s in job 'c'"), e.getMessage());
    }

    @Test
    void shouldEndAGroupEarlyAndReportItLikeFio() throws Exception {
        Path vol = dir.resolve("vol.img");
        FileBlockDevice.createFile(vol, 1 << 20);
        JobSpec s = spec("g", "rw", "randread", "rate_iops", "100", "runtime", "20", "time_based", "1",
                "steadystate", "iops:5%", "steadystate_duration", "2", "numjobs", "2", "group_reporting", "1");
        long t0 = System.nanoTime();
        BenchRun.Outcome o = BenchRun.run(new ArrayList<>(List.of(s)), null, () -> new FileBlockDevice(vol, 512, false, 8),
                null, BenchRun.Progress.none(), dir);
        long took = System.nanoTime() - t0;
        assertTrue(took < 8 * S, "ran " + took / 1e9 + " s of a 20 s runtime");
        assertEquals(1, o.entries().size());
        FioReport.Entry e = o.entries().getFirst();
        assertNotNull(e.steady());
        assertTrue(e.steady().attained());
        String json = FioReport.json(o.entries(), o.cpu(), "test");
        assertTrue(json.contains("\"ss\" : \"iops:5.000000%\""), json);
        assertTrue(json.contains("\"attained\" : 1"), json);
        Matcher m = Pattern.compile("\"iops\" : \\[\\s*(\\d+),\\s*(\\d+)\\s*\\]").matcher(json);
        assertTrue(m.find(), json);
        assertEquals(200, Integer.parseInt(m.group(1)), 20); // two clones at 100 IOPS each
        assertTrue(FioReport.human(o.entries(), o.cpu()).contains("steadystate  : attained=yes"));
        if (Files.isExecutable(FIO)) { // fio's own object has the same keys
            Process p = new ProcessBuilder(FIO.toString(), "--name=f", "--ioengine=psync", "--filename="
                    + dir.resolve("f.img"), "--size=1m", "--rw=randread", "--rate_iops=100", "--runtime=20",
                    "--time_based", "--ss=iops:5%", "--ss_dur=2", "--output-format=json").start();
            String out = new String(p.getInputStream().readAllBytes());
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(keys(out.substring(out.indexOf("\"steadystate\" : {"))),
                    keys(json.substring(json.indexOf("\"steadystate\" : {"))));
            assertTrue(out.contains("\"attained\" : 1"), out);
        }
    }

    /** The key names of the first JSON object in {@code s} (nested included). */
    static TreeSet<String> keys(String s) {
        int depth = 0;
        int end = 0;
        for (int i = s.indexOf('{'); i < s.length(); i++) {
            if (s.charAt(i) == '{') {
                depth++;
            } else if (s.charAt(i) == '}' && --depth == 0) {
                end = i;
                break;
            }
        }
        TreeSet<String> k = new TreeSet<>();
        Matcher m = Pattern.compile("\"([a-z_]+)\"\\s*:").matcher(s.substring(0, end));
        while (m.find()) {
            k.add(m.group(1));
        }
        return k;
    }
}
