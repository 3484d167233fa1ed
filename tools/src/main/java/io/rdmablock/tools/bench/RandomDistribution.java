package io.rdmablock.tools.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The parsed value of fio's {@code random_distribution} ({@code options.c} {@code str_random_distribution_cb},
 * {@code parse_zoned_distribution}, {@code zone_split_ddir}): {@code random}, {@code zipf[:theta[:center]]}
 * (default theta 1.1, != 1), {@code pareto[:h[:center]]} (default 0.2, 0 < h < 1), {@code normal[:dev[:center]]}
 * (percent, 0 <= dev < 100), {@code zoned:a/s:...} and {@code zoned_abs:a/size:...}, optionally one list per
 * direction separated by commas (read,write; a single list applies to both). Zone access percentages must add up to
 * 100 (entries without one share the rest), size percentages to at most 100 (zoned zones without a size share
 * the rest of the region, as in fio's {@code zone_split_ddir}); center is 0..1.
 *
 * @param readZones  zones for reads (and for writes when {@code writeZones} is null)
 * @param writeZones zones for writes, or null
 */
record RandomDistribution(Kind kind, double value, double center, List<ZonedDistribution.Zone> readZones,
                          List<ZonedDistribution.Zone> writeZones) {

    enum Kind { RANDOM, ZIPF, PARETO, NORMAL, ZONED, ZONED_ABS }

    static final RandomDistribution UNIFORM = new RandomDistribution(Kind.RANDOM, 0, -1, null, null);

    /** @throws IllegalArgumentException naming random_distribution, the value and its bounds */
    static RandomDistribution parse(String v) {
        String s = v.strip().toLowerCase(Locale.ROOT);
        if (s.equals("random")) {
            return UNIFORM;
        }
        if (s.startsWith("zoned_abs:") || s.startsWith("zoned:")) {
            boolean abs = s.startsWith("zoned_abs:");
            String[] dirs = s.substring(s.indexOf(':') + 1).split(",", -1);
            List<ZonedDistribution.Zone> r = zones(dirs[0], abs);
            List<ZonedDistribution.Zone> w = dirs.length > 1 && !dirs[1].isBlank() ? zones(dirs[1], abs) : null;
            return new RandomDistribution(abs ? Kind.ZONED_ABS : Kind.ZONED, 0, -1, r, w);
        }
        String[] p = s.split(":");
        Kind k = switch (p[0]) {
            case "zipf" -> Kind.ZIPF;
            case "pareto" -> Kind.PARETO;
            case "normal", "gauss" -> Kind.NORMAL;
            default -> throw new IllegalArgumentException("invalid random_distribution: '" + v
                    + "', allowed=random|zipf[:theta]|pareto[:h]|normal[:dev]|zoned:a/s:...|zoned_abs:a/size:...");
        };
        double val = k == Kind.ZIPF ? 1.1 : k == Kind.PARETO ? 0.2 : 0.0;
        double center = -1;
        try {
            if (p.length > 1) {
                val = Double.parseDouble(p[1]);
            }
            if (p.length > 2) {
                center = Double.parseDouble(p[2]);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid random_distribution: '" + v + "' is not a number");
        }
        if (center != -1 && (center < 0 || center > 1)) {
            throw new IllegalArgumentException("invalid random_distribution: center=" + center + ", min=0, max=1");
        }
        switch (k) {
            case ZIPF -> {
                if (val == 1.0 || val <= 0) {
                    throw new IllegalArgumentException("invalid random_distribution: zipf theta=" + val + ", want > 0 and != 1");
                }
            }
            case PARETO -> {
                if (val <= 0 || val >= 1) {
                    throw new IllegalArgumentException("invalid random_distribution: pareto h=" + val + ", min>0, max<1");
                }
            }
            default -> {
                if (val < 0 || val >= 100) {
                    throw new IllegalArgumentException("invalid random_distribution: normal dev=" + val + ", min=0, max<100");
                }
            }
        }
        return new RandomDistribution(k, val, center, null, null);
    }

    private static List<ZonedDistribution.Zone> zones(String list, boolean absolute) {
        List<String[]> raw = new ArrayList<>();
        for (String e : list.split(":")) {
            if (!e.isBlank()) {
                raw.add(e.split("/", -1));
            }
        }
        int perc = 0;
        int missing = 0;
        long sperc = 0;
        for (String[] r : raw) {
            if (r[0].isBlank()) {
                missing++;
            } else {
                perc += FioValues.integer("random_distribution", r[0], 0, 100);
            }
            if (!absolute && r.length > 1 && !r[1].isBlank()) {
                sperc += FioValues.integer("random_distribution", r[1], 0, 100);
            }
        }
        if (raw.isEmpty() || perc > 100 || sperc > 100 || (missing == 0 && perc < 100)) {
            throw new IllegalArgumentException("invalid random_distribution: zone access percentages add up to " + perc
                    + (sperc > 100 ? ", sizes to " + sperc : "") + " in '" + list + "', want 100");
        }
        int sizeMissing = 0;
        for (String[] r : raw) {
            sizeMissing += r.length < 2 || r[1].isBlank() ? 1 : 0;
        }
        List<ZonedDistribution.Zone> out = new ArrayList<>();
        for (String[] r : raw) {
            int a = r[0].isBlank() ? (100 - perc) / missing : Integer.parseInt(r[0].strip());
            boolean noSize = r.length < 2 || r[1].isBlank();
            if (noSize && absolute) {
                throw new IllegalArgumentException("invalid random_distribution: zoned_abs zone '"
                        + String.join("/", r) + "' has no size");
            }
            // zoned: zones without a size share the rest of the region (fio's zone_split_ddir)
            long size = noSize ? (100 - sperc) / sizeMissing
                    : absolute ? FioValues.size("random_distribution", r[1]) : Long.parseLong(r[1].strip());
            out.add(new ZonedDistribution.Zone(a, size));
        }
        return out;
    }

    /** A generator over {@code nranges} blocks of {@code blockBytes}, for reads or writes. */
    OffsetDistribution create(long nranges, long blockBytes, boolean read, SplittableRandom rng) {
        return switch (kind) {
            case RANDOM -> new UniformDistribution(nranges, rng);
            case ZIPF -> new ZipfDistribution(nranges, value, center, rng);
            case PARETO -> new ParetoDistribution(nranges, value, center, rng);
            case NORMAL -> new GaussDistribution(nranges, value, center, rng);
            case ZONED, ZONED_ABS -> new ZonedDistribution(read || writeZones == null ? readZones : writeZones,
                    kind == Kind.ZONED_ABS, nranges, blockBytes, rng);
        };
    }
}
