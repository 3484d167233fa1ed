package io.rdmablock.tools.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogPlotsTest {
    @Test
    void shouldBinAPerIoLogByTimeWhateverTheOrderOfItsLines() {
        // 4 s of completions, latency = 1000 ns x (second + 1), written out of time order (as several writers do)
        List<long[]> rows = new ArrayList<>();
        for (int ms = 0; ms < 4000; ms += 2) {
            rows.add(new long[] {ms, 1000L * (ms / 1000 + 1), 0, 4096});
        }
        Collections.shuffle(rows, new Random(7));
        List<LogPlots.Series> out = new ArrayList<>();
        LogPlots.percentiles(out, "j read", rows);
        assertEquals(4, out.size(), "p50, p90, p99, p99.9");
        long bin = LogPlots.binMs(3998);
        assertEquals(400, bin, "a tenth of a run shorter than 10 s");
        double[] xs = new double[10];
        double[] p50 = new double[10];
        for (int i = 0; i < 10; i++) {
            xs[i] = (i + 1) * 0.4;
            p50[i] = (i * 400 / 1000) + 1; // usec
        }
        LogPlots.Series s = out.get(0);
        assertEquals("j read p50", s.label());
        assertArrayEquals(xs, s.x(), 1e-9, "one point per bin, in time order");
        assertArrayEquals(p50, s.y(), 1e-9, "the bin's median");
    }

    @Test
    void shouldLeaveOutABinWithoutCompletions() {
        List<long[]> rows = List.of(new long[] {100, 5000, 0, 4096}, new long[] {3900, 7000, 0, 4096});
        List<LogPlots.Series> out = new ArrayList<>();
        LogPlots.percentiles(out, "j read", rows);
        long bin = LogPlots.binMs(3900);
        assertArrayEquals(new double[] {bin / 1000.0, (3900 / bin + 1) * bin / 1000.0}, out.get(0).x(), 1e-9,
                "two points: the bins between had no completion");
        assertArrayEquals(new double[] {5, 7}, out.get(0).y(), 1e-9);
    }

    @Test
    void shouldDrawLatencyInDecadesWhenItSpansMoreThanTwo() throws Exception {
        LogPlots.Series wide = new LogPlots.Series("p", new double[] {1, 2}, new double[] {50, 20_000});
        String log = LogPlots.svg("t", "time (s)", "completion latency (usec)", List.of(wide), true);
        assertTrue(log.contains("log scale"), log);
        for (String decade : new String[] {">10<", ">100<", ">1000<", ">10000<", ">100000<"}) {
            assertTrue(log.contains(decade), decade + " tick in " + log);
        }
        // 50 us sits between the 10 and 100 ticks, log10(50) = 1.70 of decades 1..5: 17.5% up the plot
        org.w3c.dom.Document d = LogFilesTest.xml(java.nio.file.Files.writeString(
                java.nio.file.Files.createTempFile("plot", ".svg"), log));
        String pts = ((org.w3c.dom.Element) d.getElementsByTagName("polyline").item(0)).getAttribute("points");
        double y0 = Double.parseDouble(pts.split(" ")[0].split(",")[1]);
        double top = 40;
        double bottom = 420;
        assertEquals(bottom - (bottom - top) * (Math.log10(50) - 1) / 4, y0, 1.0, pts);
        LogPlots.Series narrow = new LogPlots.Series("p", new double[] {1, 2}, new double[] {50, 400});
        assertTrue(!LogPlots.svg("t", "x", "y", List.of(narrow), true).contains("log scale"), "linear below 2 decades");
        assertTrue(!LogPlots.svg("t", "x", "y", List.of(wide), false).contains("log scale"), "IOPS stay linear");
    }
}
