package io.rdmablock.tools.bench;

import java.util.SplittableRandom;

/**
 * {@code random_distribution=zipf:theta[:center]}: fio's Zipf generator, {@code lib/zipf.c} ({@code zipf_init},
 * {@code zipf_next}), line for line: zeta(n) summed over at most 10 M ranks ({@code ZIPF_MAX_GEN}), rank 1 and 2 by the
 * zeta tests, the rest by Gray's approximation, then {@code __hash_u64} and the random (or centre) offset, modulo
 * {@code nranges}. theta > 0 and != 1; fio's default theta is 1.1.
 */
final class ZipfDistribution implements OffsetDistribution {
    static final long ZIPF_MAX_GEN = 10_000_000L;
    private final SplittableRandom rng;
    private final long nranges;
    private final double theta;
    private final double zeta2;
    private final double zetan;
    private final long randOff;

    /** @param center 0..1, or -1 for a random offset (fio's default) */
    ZipfDistribution(long nranges, double theta, double center, SplittableRandom rng) {
        if (theta <= 0 || theta == 1.0) {
            throw new IllegalArgumentException("invalid random_distribution: zipf theta=" + theta + ", want > 0 and != 1");
        }
        this.nranges = nranges;
        this.theta = theta;
        this.rng = rng;
        long r = rand32(rng);
        this.randOff = center != -1 ? (long) (nranges * center) : r;
        this.zeta2 = Math.pow(1.0, theta) + Math.pow(0.5, theta);
        double z = 0;
        long toGen = Math.min(nranges, ZIPF_MAX_GEN);
        for (long i = 0; i < toGen; i++) {
            z += Math.pow(1.0 / (i + 1), theta);
        }
        this.zetan = z;
    }

    static long rand32(SplittableRandom rng) {
        return rng.nextInt() & 0xFFFFFFFFL;
    }

    @Override
    public long next() {
        double n = nranges;
        double alpha = 1.0 / (1.0 - theta);
        double eta = (1.0 - Math.pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
        double randUni = rand32(rng) / FRAND32_MAX;
        double randZ = randUni * zetan;
        long val;
        if (randZ < 1.0) {
            val = 1;
        } else if (randZ < 1.0 + Math.pow(0.5, theta)) {
            val = 2;
        } else {
            val = 1 + (long) (n * Math.pow(eta * randUni - eta + 1.0, alpha));
        }
        val--;
        return Long.remainderUnsigned(OffsetDistribution.hash(val) + randOff, nranges);
    }
}
