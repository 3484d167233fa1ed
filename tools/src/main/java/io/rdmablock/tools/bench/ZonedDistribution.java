package io.rdmablock.tools.bench;

import java.util.List;
import java.util.SplittableRandom;

/**
 * {@code random_distribution=zoned:a/s:a/s...} and {@code zoned_abs:a/size:...}: fio's zoned distributions
 * ({@code zone-dist.c} {@code __td_zone_gen_index}, {@code io_u.c} {@code __get_next_rand_offset_zoned[_abs]}): a
 * value v in 1..100 picks the zone whose cumulative access percentage covers v; the block is uniform inside that
 * zone. Zones are laid out from the start of the region in the order given; for {@code zoned} their sizes are
 * percentages of the region, for {@code zoned_abs} bytes (converted to blocks of {@code blockBytes}, rounded down).
 * Fails when {@code zoned_abs} zones exceed the region, as fio does ("zoned_abs sizes exceed file size").
 */
final class ZonedDistribution implements OffsetDistribution {
    /** One zone: share of the accesses (percent) and its size (percent of the region, or bytes for zoned_abs). */
    record Zone(int accessPercent, long size) {
    }

    private final SplittableRandom rng;
    private final long[] startBlock = new long[100];
    private final long[] blocks = new long[100];

    /**
     * @param absolute   sizes are bytes (zoned_abs), else percentages (zoned)
     * @param nranges    blocks in the region
     * @param blockBytes bytes per block (the alignment of the offsets), for zoned_abs sizes
     */
    ZonedDistribution(List<Zone> zones, boolean absolute, long nranges, long blockBytes, SplittableRandom rng) {
        this.rng = rng;
        int aprev = 0;
        long sprev = 0;
        for (Zone z : zones) {
            for (int j = aprev; j < aprev + z.accessPercent() && j < 100; j++) {
                if (absolute) {
                    startBlock[j] = sprev / blockBytes;
                    blocks[j] = (sprev + z.size()) / blockBytes - startBlock[j];
                } else {
                    startBlock[j] = sprev * nranges / 100;
                    blocks[j] = nranges * (sprev + z.size()) / 100 - startBlock[j];
                }
                if (startBlock[j] + blocks[j] > nranges) {
                    throw new IllegalArgumentException("invalid random_distribution: zoned_abs sizes exceed the"
                            + " region: " + (sprev + z.size()) + " bytes, region " + nranges * blockBytes + " bytes");
                }
                blocks[j] = Math.max(1, blocks[j]);
                if (startBlock[j] + blocks[j] > nranges) {
                    startBlock[j] = nranges - blocks[j];
                }
            }
            aprev += z.accessPercent();
            sprev += z.size();
        }
    }

    @Override
    public long next() {
        int v = rng.nextInt(100); // fio: rand_between(1, 100), index v - 1
        return startBlock[v] + rng.nextLong(blocks[v]);
    }
}
