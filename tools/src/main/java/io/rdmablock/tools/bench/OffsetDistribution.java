package io.rdmablock.tools.bench;

/**
 * A random offset distribution of fio's {@code random_distribution} option: each call returns a block index in
 * {@code [0, nranges)}. One instance per job clone, seeded from the job's seed; not thread-safe (the caller
 * serialises). Values are drawn from 32-bit uniform numbers as fio's {@code __rand()} returns them
 * ({@code FRAND32_MAX = 2^32 - 1}); the generator is SplitMix64 ({@link java.util.SplittableRandom}), not fio's
 * Tausworthe, so the same seed gives another sequence than fio with the same shape.
 */
interface OffsetDistribution {
    /** fio's FRAND32_MAX (lib/rand.h). */
    double FRAND32_MAX = 4294967295.0;
    /** fio's GOLDEN_RATIO_64 (hash.h): {@code __hash_u64(v) = v * GOLDEN_RATIO_64}. */
    long GOLDEN_RATIO_64 = 0x61C8864680B583EBL;

    /** The next block index, 0 .. nranges - 1. */
    long next();

    /** fio's {@code __hash_u64}: spreads the hot values over the range (lib/zipf.c, lib/gauss.c). */
    static long hash(long v) {
        return v * GOLDEN_RATIO_64;
    }
}
