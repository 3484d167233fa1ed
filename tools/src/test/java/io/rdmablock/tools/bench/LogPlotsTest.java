package io.rdmablock.tools.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
