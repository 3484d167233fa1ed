package io.rdmablock.tools.bench;

import java.util.SplittableRandom;

/**
 * {@code random_distribution=normal:dev[:center]}: fio's generator, {@code lib/gauss.c} ({@code gauss_init},
 * {@code gauss_next}): the mean of 12 uniform values in {@code [0, nranges]} (central limit), plus a deviation of up
 * to {@code dev} percent of the range ({@code stddev = ceil(nranges * dev / 100)}, at most half the range), then
 * {@code __hash_u64} and the centre offset ({@code nranges * (center - 0.5)}, 0 without a centre), modulo
 * {@code nranges}. 0 <= dev < 100.
 */
final class GaussDistribution implements OffsetDistribution {
    static final int GAUSS_ITERS = 12;
    private final SplittableRandom rng;
    private final long nranges;
    private final long stddev;
    private final long randOff;

    GaussDistribution(long nranges, double dev, double center, SplittableRandom rng) {
        if (dev < 0 || dev >= 100) {
            throw new IllegalArgumentException("invalid random_distribution: normal dev=" + dev + ", want 0 <= dev < 100");
        }
        this.nranges = nranges;
        this.rng = rng;
        long sd = 0;
        if (dev != 0.0) {
            sd = (long) Math.ceil(nranges * dev / 100.0);
            sd = Math.min(sd, nranges / 2);
        }
        this.stddev = sd;
        this.randOff = center == -1 ? 0 : (long) (nranges * (center - 0.5));
    }

    private long gaussDev() {
        if (stddev == 0) {
            return 0;
        }
        long r = ZipfDistribution.rand32(rng);
        long vr = (long) (stddev * (r / (FRAND32_MAX + 1.0)));
        return vr - stddev / 2;
    }

    @Override
    public long next() {
        long sum = 0;
        for (int i = 0; i < GAUSS_ITERS; i++) {
            sum += Long.remainderUnsigned(ZipfDistribution.rand32(rng), nranges + 1);
        }
        sum = (sum + GAUSS_ITERS - 1) / GAUSS_ITERS;
        if (stddev != 0) {
            long dev = gaussDev();
            while (dev + sum >= nranges) {
                dev /= 2;
            }
            sum += dev;
        }
        return Long.remainderUnsigned(OffsetDistribution.hash(sum) + randOff, nranges);
    }
}
