package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class JobFileTest {

    static List<JobFile.Section> parse(String text) {
        return JobFile.parse(List.of(text.split("\n")), k -> k.equals("uri") ? "nbd://x" : null);
    }

    @Test
    void shouldApplyGlobalsToTheJobsThatFollow() {
        List<JobFile.Section> jobs = parse("""
                ; comment
                [global]
                rw=randrw
                iodepth=64
                [job0]
                offset=0
                [job1]
                offset=64m
                iodepth=8
                """);
        assertEquals(2, jobs.size());
        assertEquals(Map.of("rw", "randrw", "iodepth", "64", "offset", "0"), jobs.get(0).options());
        assertEquals("8", jobs.get(1).options().get("iodepth"));
    }

    @Test
    void shouldStripInlineCommentsExpandVariablesAndKeepFlags() {
        List<JobFile.Section> jobs = parse("""
                [j]
                invalidate=0\t# mandatory
                uri=${uri}
                other=${UNSET_VAR}
                time_based
                """);
        Map<String, String> o = jobs.getFirst().options();
        assertEquals("0", o.get("invalidate"));
        assertEquals("nbd://x", o.get("uri"));
        assertEquals("", o.get("other")); // fio substitutes an unset variable by the empty string
        assertEquals("", o.get("time_based"));
    }

    @Test
    void shouldRequireTheRdmablockEngineAndRejectOptionsOutsideTheSubset() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> JobSpec.of("j", Map.of("ioengine", "libaio")));
        assertTrue(e.getMessage().contains("ioengine=rdmablock"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> JobSpec.of("j", Map.of("fsync", "1")));
        assertTrue(e.getMessage().contains("fsync"), e.getMessage());
    }

    @Test
    void shouldResolveTheSubset() {
        JobSpec j = JobSpec.of("j", new java.util.LinkedHashMap<>(Map.of("rw", "randrw", "rwmixwrite", "40", "bs", "4k,64k",
                "iodepth", "16", "numjobs", "4", "runtime", "900", "time_based", "", "filename", "/dev/XXX",
                "direct", "1", "verify", "0")));
        assertEquals(JobSpec.Rw.RANDRW, j.rw);
        assertEquals(60, j.rwmixread);
        assertEquals(4096, j.bsRead);
        assertEquals(65536, j.bsWrite);
        assertEquals(4, j.numjobs);
        assertTrue(j.timeBased);
        assertEquals(900_000_000_000L, j.runtimeNs);
    }

    @Test
    void shouldClampSizeToTheDeviceWithAWarning() {
        JobSpec j = JobSpec.of("j", Map.of("size", "100g", "offset", "50%"));
        assertEquals(512L << 20, j.regionLength(1L << 30, 512));
        assertEquals(512L << 20, j.regionOffset(1L << 30, 512));
        assertEquals(1, j.warnings.size());
    }

    /**
     * The real job files in the shared data set (axboe/fio examples, spdk app/fio) resolve with only their
     * ioengine line changed. Skipped when the data set is not on this machine.
     */
    @Test
    void realJobFilesShouldResolveWithOnlyTheEngineLineChanged() throws IOException {
        Path dir = Path.of("/work/shared/realdata/fio");
        assumeTrue(Files.isDirectory(dir), "shared fio job files not present: " + dir);
        List<String> resolved = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.sorted().toList()) {
                List<String> lines = Files.readAllLines(f).stream()
                        .map(l -> l.startsWith("ioengine=") ? "ioengine=rdmablock" : l).toList();
                for (JobFile.Section s : JobFile.parse(lines, k -> null)) {
                    JobSpec.of(s.name(), s.options());
                }
                resolved.add(f.getFileName().toString());
            }
        }
        assertEquals(7, resolved.size(), resolved.toString());
    }
}
