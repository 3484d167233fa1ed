package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** fio's random_distribution definitions (lib/zipf.c, lib/gauss.c, zone-dist.c): shapes, bounds, parsing. */
class RandomDistributionTest {
    static final long N = 10_000;
    static final int DRAWS = 200_000;

    static long[] histogram(String spec) {
        OffsetDistribution d = RandomDistribution.parse(spec).create(N, 4096, true, new SplittableRandom(42));
        long[] h = new long[(int) N];
        for (int i = 0; i < DRAWS; i++) {
            long b = d.next();
            assertTrue(b >= 0 && b < N, spec + ": " + b);
            h[(int) b]++;
        }
        return h;
    }

    /** Share of the draws that hit the hottest {@code fraction} of the blocks. */
    static double hottestShare(long[] h, double fraction) {
        long[] s = h.clone();
        Arrays.sort(s);
        long sum = 0;
        for (int i = s.length - 1; i >= s.length - (int) (s.length * fraction); i--) {
            sum += s[i];
        }
        return (double) sum / DRAWS;
    }

    @Test
    void shouldSpreadUniformDrawsEvenly() {
        long[] h = histogram("random");
        for (int b = 0; b < 100; b++) { // 100 buckets of 100 blocks: 2000 draws each
            long n = java.util.Arrays.stream(h, b * 100, b * 100 + 100).sum();
            assertEquals(2000, n, 300, "bucket " + b);
        }
    }

    @Test
    void shouldSkewZipfMoreAsThetaGrows() {
        double z08 = hottestShare(histogram("zipf:0.8"), 0.10);
        double z12 = hottestShare(histogram("zipf:1.2"), 0.10);
        assertTrue(z08 > 0.4, "zipf:0.8 hottest 10% " + z08);
        assertTrue(z12 > z08, "zipf:1.2 " + z12 + " vs 0.8 " + z08);
    }

    @Test
    void shouldGiveParetoItsEightyTwentyShape() {
        double p = hottestShare(histogram("pareto:0.2"), 0.20);
        assertTrue(p > 0.7, "pareto:0.2 hottest 20% " + p);
    }

    @Test
    void shouldConcentrateNormalWithSmallDeviation() {
        // the mean of 12 uniforms has a deviation of ~N/12: ~40% of the draws fall on the hottest 10% of blocks
        double n = hottestShare(histogram("normal:5"), 0.10);
        assertTrue(n > 0.3, "normal:5 hottest 10% " + n);
    }

    @Test
    void shouldHitZonesInTheirAccessShare() {
        long[] h = histogram("zoned:60/10:30/20:10/70");
        long first = Arrays.stream(h, 0, (int) (N / 10)).sum();
        long second = Arrays.stream(h, (int) (N / 10), (int) (N * 3 / 10)).sum();
        assertEquals(0.60, (double) first / DRAWS, 0.02);
        assertEquals(0.30, (double) second / DRAWS, 0.02);
        long[] a = histogram("zoned_abs:80/4m:20/30m");
        // 4 MiB of 4 KiB blocks = the first 1024 blocks get 80%
        assertEquals(0.80, (double) Arrays.stream(a, 0, 1024).sum() / DRAWS, 0.02);
    }

    @Test
    void shouldFailZonedAbsBeyondTheRegion() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RandomDistribution.parse("zoned_abs:50/1g:50/1g").create(N, 4096, true, new SplittableRandom(1)));
        assertTrue(e.getMessage().contains("exceed the region"), e.getMessage());
    }

    @Test
    void shouldRejectValuesOutsideFiosBounds() {
        for (String bad : new String[] {"zipf:1", "pareto:1.5", "normal:100", "zoned:50/10:40/10", "zipf:1.1:2",
                "weibull:3"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RandomDistribution.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("invalid random_distribution"), e.getMessage());
        }
    }

    @Test
    void shouldRepeatTheSequenceForTheSameSeed() {
        assertArrayEquals(histogram("zipf:1.1"), histogram("zipf:1.1"));
    }
}
