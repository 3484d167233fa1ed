package io.rdmablock.tools.bench;

import java.util.SplittableRandom;

/** {@code random_distribution=random} (fio's default): every block of the region equally likely. */
final class UniformDistribution implements OffsetDistribution {
    private final SplittableRandom rng;
    private final long nranges;

    /** @param nranges blocks, at least 1 */
    UniformDistribution(long nranges, SplittableRandom rng) {
        if (nranges < 1) {
            throw new IllegalArgumentException("invalid nranges: nranges=" + nranges + ", min=1");
        }
        this.nranges = nranges;
        this.rng = rng;
    }

    @Override
    public long next() {
        return rng.nextLong(nranges);
    }
}
