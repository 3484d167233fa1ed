package io.rdmablock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code rdmablock stack-bench} runs briefly, in one JVM, and reports every figure non-zero. */
@Timeout(120)
class StackBenchCommandTest {

    @Test
    void shouldPrintNonZeroFiguresForEveryRowAsJson() {
        CliRun r = CliRun.of("stack-bench", "--runtime-s", "0.5", "--ramp-s", "0.3", "--rows", "randread:1,randwrite:4",
                "--output-format", "json");
        assertEquals(0, r.exitCode(), r.err());
        String out = r.out();
        assertTrue(out.contains("\"bench\": \"stack-only\""), out);
        assertTrue(out.contains("\"spdk_iops_per_core\": 1370000"), out);
        for (String field : new String[] {"iops", "lat_p50_us", "lat_p99_us", "node_cpu_ns_per_io",
                "client_cpu_ns_per_io", "client_alloc_bytes_per_io", "iops_per_node_core", "ratio_vs_spdk"}) {
            Matcher m = Pattern.compile("\"" + field + "\": ([0-9.]+)").matcher(out);
            int rows = 0;
            while (m.find()) {
                assertTrue(Double.parseDouble(m.group(1)) > 0, field + " is zero: " + out);
                rows++;
            }
            assertEquals(2, rows, field + " once per row: " + out);
        }
        // the node's pollers may allocate nothing per I/O: present, not necessarily non-zero
        assertEquals(2, Pattern.compile("\"node_alloc_bytes_per_io\": [0-9.]+").matcher(out).results().count(), out);
        assertTrue(out.contains("\"rw\": \"randread\", \"bs\": 4096, \"iodepth\": 1"), out);
        assertTrue(out.contains("\"rw\": \"randwrite\", \"bs\": 4096, \"iodepth\": 4"), out);
    }

    @Test
    void shouldRefuseASpinOutOfRangeNamingTheFlag() {
        CliRun r = CliRun.of("stack-bench", "--idle-spin-us", "-1");
        assertTrue(r.exitCode() != 0, r.out());
        assertTrue(r.err().contains("invalid --idle-spin-us: value=-1, min=0, max=1000000"), r.err());
    }

    @Test
    void shouldRefuseABadRowBeforeStartingAnything() {
        CliRun r = CliRun.of("stack-bench", "--rows", "seqread:1");
        assertTrue(r.exitCode() != 0, r.out());
        assertTrue(r.err().contains("invalid --rows item"), r.err());
    }
}
