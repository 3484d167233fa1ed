package io.rdmablock.tools.bench;

import java.util.SplittableRandom;

/**
 * {@code random_distribution=pareto:h[:center]}: fio's Pareto generator, {@code lib/zipf.c} ({@code pareto_init},
 * {@code pareto_next}): {@code (nranges - 1) * u^(log h / log(1 - h))}, hashed, plus the random (or centre) offset,
 * modulo {@code nranges}. 0 < h < 1; fio's default h is 0.2.
 */
final class ParetoDistribution implements OffsetDistribution {
    private final SplittableRandom rng;
    private final long nranges;
    private final double paretoPow;
    private final long randOff;

    /** @param center 0..1, or -1 for a random offset */
    ParetoDistribution(long nranges, double h, double center, SplittableRandom rng) {
        if (h <= 0 || h >= 1) {
            throw new IllegalArgumentException("invalid random_distribution: pareto h=" + h + ", want 0 < h < 1");
        }
        this.nranges = nranges;
        this.rng = rng;
        long r = ZipfDistribution.rand32(rng);
        this.randOff = center != -1 ? (long) (nranges * center) : r;
        this.paretoPow = Math.log(h) / Math.log(1.0 - h);
    }

    @Override
    public long next() {
        double rand = ZipfDistribution.rand32(rng) / FRAND32_MAX;
        long n = (long) ((nranges - 1) * Math.pow(rand, paretoPow));
        return Long.remainderUnsigned(OffsetDistribution.hash(n) + randOff, nranges);
    }
}
