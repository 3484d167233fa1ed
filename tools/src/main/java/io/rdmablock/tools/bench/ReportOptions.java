package io.rdmablock.tools.bench;

/**
 * fio's reporting options of one job (fio(1) "Measurements and reporting"; options.c, stat.c of fio 3.33), applied to
 * the normal and JSON reports ({@link FioReport}):
 * <ul>
 * <li>{@code disable_slat}, {@code disable_clat}, {@code disable_lat}: that latency is not reported. Normal output:
 *     its line (and its percentiles) disappear; JSON: {@code slat_ns}/{@code clat_ns}/{@code lat_ns} hold zeros and
 *     {@code N=0}, as fio's. (The bench still times every I/O: a JVM has no gettimeofday cost to save.)</li>
 * <li>{@code disable_bw_measurement} ({@code disable_bw}): JSON {@code bw_min} .. {@code iops_samples} are 0, as fio's.</li>
 * <li>{@code gtod_reduce=1}: all four above and no percentiles (fio's {@code str_gtod_reduce_cb}); a later option
 *     may turn one back on, as in fio.</li>
 * <li>{@code clat_percentiles} (default 1), {@code lat_percentiles}, {@code slat_percentiles} (default 0): which
 *     latencies get a percentile list, in the normal output ({@code clat percentiles (usec):}, {@code lat
 *     percentiles}, {@code slat percentiles}) and in JSON ({@code "percentile"} in that latency's object). Unlike
 *     fio, when {@code lat_percentiles} is not given the JSON {@code lat_ns} still carries percentiles (rdmablock's
 *     own tooling reads the total latency's); {@code lat_percentiles=0} removes them.</li>
 * <li>{@code significant_figures} (1..10, default 4): accepted with a warning, the normal output keeps its fixed
 *     precision (JSON numbers are exact either way).</li>
 * </ul>
 * Bad values fail with {@link IllegalArgumentException} naming option, value, job and bounds ({@link FioValues}).
 */
final class ReportOptions {
    boolean disableLat;
    boolean disableClat;
    boolean disableSlat;
    boolean disableBw;
    boolean clatPercentiles = true;
    /** null: not given (JSON lat_ns keeps its percentiles, the normal output shows none). */
    Boolean latPercentiles;
    boolean slatPercentiles;
    int significantFigures = 4;

    static final java.util.Set<String> OPTIONS = java.util.Set.of("gtod_reduce", "disable_lat", "disable_clat",
            "disable_slat", "disable_bw_measurement", "disable_bw", "clat_percentiles", "lat_percentiles",
            "slat_percentiles", "significant_figures");

    /** Applies option {@code k} of job {@code job}; a warning for the job goes to {@code warnings}. */
    void set(String job, String k, String v, java.util.Set<String> warnings) {
        try {
            switch (k) {
                case "gtod_reduce" -> {
                    if (FioValues.bool(k, v)) {
                        disableLat = disableClat = disableSlat = disableBw = true;
                        clatPercentiles = slatPercentiles = false;
                        latPercentiles = false;
                    }
                }
                case "disable_lat" -> disableLat = FioValues.bool(k, v);
                case "disable_clat" -> disableClat = FioValues.bool(k, v);
                case "disable_slat" -> disableSlat = FioValues.bool(k, v);
                case "disable_bw_measurement", "disable_bw" -> disableBw = FioValues.bool(k, v);
                case "clat_percentiles" -> clatPercentiles = FioValues.bool(k, v);
                case "lat_percentiles" -> latPercentiles = FioValues.bool(k, v);
                case "slat_percentiles" -> slatPercentiles = FioValues.bool(k, v);
                case "significant_figures" -> {
                    significantFigures = FioValues.integer(k, v, 1, 10);
                    warnings.add("significant_figures=" + v + ": the normal output keeps its own precision (3"
                            + " significant digits for IOPS, 1 decimal for sizes); JSON numbers are exact");
                }
                default -> throw new IllegalStateException("unhandled option " + k);
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (job '" + job + "')", e);
        }
    }

    /** Whether the JSON {@code lat_ns} carries percentiles. */
    boolean latPercentilesJson() {
        return latPercentiles == null ? !disableLat : latPercentiles;
    }
}
