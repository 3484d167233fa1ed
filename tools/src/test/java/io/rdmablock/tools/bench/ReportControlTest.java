package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reporting options (gtod_reduce, disable_*, *_percentiles) against what fio 3.33 prints for the same options (its
 * null engine), and job control (exitall, exit_what, exitall_on_error, wait_for) end to end on a file device.
 */
@Timeout(120)
class ReportControlTest {
    @TempDir
    Path dir;
    Path file;

    @BeforeEach
    void createFile() {
        file = dir.resolve("vol.img");
        FileBlockDevice.createFile(file, 4 << 20);
    }

    static JobSpec spec(String name, String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return JobSpec.of(name, m);
    }

    BenchRun.Outcome run(JobSpec... s) throws Exception {
        return BenchRun.run(new ArrayList<>(List.of(s)), null, () -> new FileBlockDevice(file, 512, false, 8), null,
                BenchRun.Progress.none(), dir);
    }

    /** The latency lines and percentile headers of a normal report, e.g. "clat (", "lat percentiles". */
    static List<String> latLines(String human) {
        List<String> out = new ArrayList<>();
        for (String l : human.split("\n")) {
            String t = l.trim();
            for (String k : List.of("slat (", "clat (", "lat (", "slat percentiles", "clat percentiles", "lat percentiles")) {
                if (t.startsWith(k) && (k.endsWith("percentiles") || t.contains("min="))) { // not the lat distribution
                    out.add(k);
                }
            }
        }
        return out;
    }

    @Test
    void shouldShowAndHideLatenciesAsFioDoes() throws Exception {
        List<String[]> cases = List.of(
                new String[] {"gtod_reduce", "1"},
                new String[] {"disable_clat", "1", "disable_slat", "1", "lat_percentiles", "1", "clat_percentiles", "0"},
                new String[] {"disable_lat", "1"},
                new String[] {"clat_percentiles", "0"},
                new String[] {"gtod_reduce", "1", "disable_clat", "0", "clat_percentiles", "1"});
        for (String[] kv : cases) {
            List<String> opts = new ArrayList<>(List.of("rw", "randread", "bs", "4k", "size", "1m"));
            opts.addAll(List.of(kv));
            BenchRun.Outcome o = run(spec("j", opts.toArray(String[]::new)));
            List<String> ours = latLines(FioReport.human(o.entries(), o.cpu()));
            ours.remove("slat ("); // fio's null engine is synchronous: it never has slat
            List<String> args = new ArrayList<>(List.of("--name=j", "--ioengine=null", "--size=1m", "--bs=4k",
                    "--rw=randread"));
            for (int i = 0; i < kv.length; i += 2) {
                args.add("--" + kv[i] + "=" + kv[i + 1]);
            }
            String fio = LocalFio.run(dir, args);
            List<String> theirs = latLines(fio);
            assertEquals(theirs, ours, "lines with " + String.join(" ", kv) + "\nfio:\n" + fio);

        }
    }

    /** The JSON object of {@code key} in the first job's read part: up to its closing brace. */
    static String obj(String json, String key) {
        int a = json.indexOf("\"" + key + "\" : {");
        int depth = 0;
        for (int i = json.indexOf('{', a); ; i++) {
            char c = json.charAt(i);
            depth += c == '{' ? 1 : c == '}' ? -1 : 0;
            if (depth == 0) {
                return json.substring(a, i + 1);
            }
        }
    }

    @Test
    void shouldZeroDisabledLatenciesInTheJsonAsFioDoes() throws Exception {
        BenchRun.Outcome o = run(spec("j", "rw", "randread", "size", "256k", "gtod_reduce", "1"));
        String json = FioReport.json(o.entries(), o.cpu(), "v");
        for (String k : List.of("slat_ns", "clat_ns", "lat_ns")) {
            String x = obj(json, k);
            assertTrue(x.contains("\"N\" : 0") && !x.contains("percentile"), k + ": " + x);
        }
        assertTrue(obj(json, "read").contains("\"bw_samples\" : 0"), json);
        o = run(spec("j", "rw", "randread", "size", "256k"));
        json = FioReport.json(o.entries(), o.cpu(), "v");
        assertTrue(obj(json, "clat_ns").contains("percentile"), json);
        assertFalse(obj(json, "slat_ns").contains("percentile"), json);
        o = run(spec("j", "rw", "randread", "size", "256k", "lat_percentiles", "0", "slat_percentiles", "1"));
        json = FioReport.json(o.entries(), o.cpu(), "v");
        assertFalse(obj(json, "lat_ns").contains("percentile"), json);
        assertTrue(obj(json, "slat_ns").contains("percentile"), json);
    }

    @Test
    void shouldRefuseBadReportingAndControlValuesNamingOptionAndJob() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> spec("j", "significant_figures", "11"));
        assertEquals("invalid significant_figures: significant_figures=11, min=1, max=10 (job 'j')", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("k", "gtod_reduce", "2"));
        assertTrue(e.getMessage().contains("gtod_reduce") && e.getMessage().contains("job 'k'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("m", "exit_what", "some"));
        assertEquals("invalid exit_what: 'some', allowed=group|stonewall|all (job 'm')", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> run(spec("a", "size", "64k"),
                spec("b", "size", "64k", "wait_for", "c"), spec("c", "size", "64k")));
        assertTrue(e.getMessage().startsWith("invalid wait_for: job 'b': wait_for=c: no job named 'c' before it"),
                e.getMessage());
    }

    @Test
    void shouldStopTheGroupWhenAnExitallJobFinishes() throws Exception {
        // "fast" writes 64k and ends; "slow" would run 30 s: exitall stops it, without error
        long t0 = System.nanoTime();
        BenchRun.Outcome o = run(spec("fast", "rw", "write", "size", "64k", "exitall", "1"),
                spec("slow", "rw", "randread", "runtime", "30", "time_based", "1"));
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "slow was not stopped");
        FioReport.Entry slow = o.entries().stream().filter(e -> e.name().equals("slow")).findFirst().orElseThrow();
        assertEquals(0, slow.error());
        assertTrue(slow.messages().contains("stopped by exitall of job 'fast' (exit_what=group)"), slow.messages().toString());
    }

    @Test
    void shouldLeaveAnotherGroupAloneWithExitWhatGroupAndSkipLaterPhasesWithAll() throws Exception {
        BenchRun.Outcome o = run(spec("fast", "rw", "write", "size", "64k", "exitall", "1"),
                spec("other", "rw", "read", "size", "256k", "new_group", "1"));
        FioReport.Entry other = o.entries().stream().filter(e -> e.name().equals("other")).findFirst().orElseThrow();
        assertTrue(other.messages().isEmpty(), other.messages().toString());
        assertEquals(256 * 1024, other.read().bytes, "another group runs to its end");

        o = run(spec("fast", "rw", "write", "size", "64k", "exitall", "1", "exit_what", "all"),
                spec("later", "rw", "read", "size", "64k", "stonewall", "1"));
        assertTrue(o.entries().stream().noneMatch(e -> e.name().equals("later")), "exit_what=all ran a later phase");
    }

    @Test
    void shouldDrawAStartdelayFromItsRangeAndRefuseAReversedOne() {
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (int i = 0; i < 20; i++) {
            JobSpec j = spec("d" + i, "startdelay", "1-3", "randrepeat", "1");
            assertTrue(j.startDelayNs >= 1_000_000_000L && j.startDelayNs <= 3_000_000_000L, "" + j.startDelayNs);
            assertEquals(j.startDelayNs, spec("d" + i, "startdelay", "1-3").startDelayNs, "randrepeat=1 repeats it");
            seen.add(j.startDelayNs);
        }
        assertTrue(seen.size() > 1, "every job drew the same delay");
        assertEquals(500_000_000L, spec("p", "startdelay", "500ms").startDelayNs);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> spec("r", "startdelay", "5-1"));
        assertTrue(e.getMessage().startsWith("invalid startdelay: '5-1' in job 'r': the range's low end"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> spec("x", "startdelay", "1-zz"));
        assertTrue(e.getMessage().contains("startdelay") && e.getMessage().contains("job 'x'"), e.getMessage());
    }

    @Test
    void shouldEndARateWaitAtTheRuntime() throws Exception {
        // 4 KiB/s with 32 units: the last unit's slot is ~32 s away; the job must still end at its 1 s runtime
        long t0 = System.nanoTime();
        BenchRun.Outcome o = run(spec("r", "rw", "randread", "iodepth", "32", "rate", "4k", "runtime", "1",
                "time_based", "1"));
        long s = (System.nanoTime() - t0) / 1_000_000_000L;
        assertTrue(s < 15, "a rate-limited job took " + s + " s for runtime=1");
        assertEquals(0, o.entries().getFirst().error());
    }

    @Test
    void shouldStartAWaiterWhenItsWaiteeFinished() throws Exception {
        BenchRun.Outcome o = run(spec("first", "rw", "write", "size", "512k"),
                spec("second", "rw", "read", "size", "64k", "wait_for", "first"));
        Job first = o.jobs().stream().filter(j -> j.name.startsWith("first")).findFirst().orElseThrow();
        Job second = o.jobs().stream().filter(j -> j.name.startsWith("second")).findFirst().orElseThrow();
        assertTrue(second.startNs - first.mainEndNs >= 0, "second started before first ended");
    }
}
