package io.rdmablock.mgmt.client;

/**
 * The background budget set for one node from the management plane (docs/qos.md, "Background budget"): the bounds
 * of the node's resync, rebuild and verify rate, which adapts between them to the foreground's latency. Set with
 * {@code PATCH /v1/nodes/{nodeId} {"background": {...}}}, stored in the node record, shown by {@code GET /v1/nodes}
 * and sent to the node in every heartbeat answer ({@link HeartbeatResponse#background}).
 *
 * @param maxMiBps the ceiling, MiB/s (2^20 bytes per second), {@value #MIN_MIB_S}..{@value #MAX_MIB_S}: the rate
 *                 with the foreground idle or fast (the node's {@code --resync-mib-s} at start)
 * @param minMiBps the floor, MiB/s, {@value #MIN_MIB_S}..maxMiBps: background work never goes slower (the node's
 *                 {@code --resync-min-mib-s} at start); equal to maxMiBps = a fixed rate
 */
public record NodeBackground(int maxMiBps, int minMiBps) {
    /** Least bound, MiB/s. */
    public static final int MIN_MIB_S = 1;
    /** Greatest bound, MiB/s (the node's {@code --resync-mib-s} bound). */
    public static final int MAX_MIB_S = 100_000;
    /**
     * In a heartbeat answer only: "the node's start-up values" ({@code {"maxMiBps": 0, "minMiBps": 0}}), sent while
     * none is set; never valid in a request.
     */
    public static final NodeBackground STARTUP = new NodeBackground(0, 0);

    /** @return true for {@link #STARTUP} */
    public boolean startup() {
        return maxMiBps == 0 && minMiBps == 0;
    }

    /**
     * Checks the bounds of a setting.
     *
     * @throws IllegalArgumentException naming the field ({@code background.maxMiBps}, {@code background.minMiBps})
     *                                  and its bounds: either outside {@value #MIN_MIB_S}..{@value #MAX_MIB_S}, or
     *                                  the floor above the ceiling
     */
    public void check() {
        range("background.maxMiBps", maxMiBps);
        range("background.minMiBps", minMiBps);
        if (minMiBps > maxMiBps) {
            throw Limits.invalid("background.minMiBps", Integer.toString(minMiBps),
                    "the floor must be at most the ceiling, background.maxMiBps=" + maxMiBps);
        }
    }

    private static void range(String field, int value) {
        if (value < MIN_MIB_S || value > MAX_MIB_S) {
            throw Limits.invalid(field, Integer.toString(value), "min=" + MIN_MIB_S + ", max=" + MAX_MIB_S
                    + " (MiB/s)");
        }
    }
}
