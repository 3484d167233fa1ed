package io.rdmablock.node.target;

/**
 * Caps on what unauthenticated peers can make a node hold, checked at each Fabrics Connect, and the bounds of the
 * keep-alive timeout (KATO). Beyond a cap the Connect is answered Connect Controller Busy (SCT 1, SC 81h, DNR 1; as
 * Linux nvmet answers when it cannot allocate a controller) and the node logs the cap and its system property.
 * Read once from system properties by the node's configuration ({@code io.rdmablock.node.NodeConfiguration},
 * docs/configuration.md); docs/wire-protocol.md section 1.5.
 *
 * @param maxControllers          live controllers of volume subsystems on the node, 1-1048576
 *                                ({@code rdmablock.node.maxControllers}, default 4096)
 * @param maxDiscoveryControllers live discovery controllers on the node, 1-1048576
 *                                ({@code rdmablock.node.maxDiscoveryControllers}, default 1024): kept apart from
 *                                {@code maxControllers} so discovery connections never crowd volume hosts out
 * @param maxControllersPerHost   live controllers of one host NQN on the node, any subsystem, 1-1048576
 *                                ({@code rdmablock.node.maxControllersPerHost}, default 256)
 * @param maxQueuesPerHost        connected queues (admin and I/O) of one host NQN on the node, 1-16777216
 *                                ({@code rdmablock.node.maxQueuesPerHost}, default 4096); a controller's own I/O
 *                                queues are bounded by {@link TargetOptions#maxIoQueues()}
 * @param maxRegisteredBytes      registered queue memory of the node (bytes, {@link Target#registeredQueueBytes()}),
 *                                1 MiB-1 TiB ({@code rdmablock.node.maxRegisteredBytes}, default 8 GiB): a Connect
 *                                whose queue buffers would go beyond it is refused. Checked before each queue's
 *                                buffers are registered; Connects on different pollers at the same moment may go
 *                                beyond it by at most one queue each
 * @param defaultKatoMs           KATO (ms) of a volume subsystem's controller whose Connect (or Set Features 0Fh)
 *                                asks for 0 (no keep-alive), 1000-{@code maxKatoMs}
 *                                ({@code rdmablock.node.defaultKatoMs}, default 120000), so no controller is unbounded;
 *                                a discovery controller's KATO 0 is {@value #DISCOVERY_KATO_MS} ms, as Linux nvmet's
 *                                {@code NVMET_DISC_KATO_MS}
 * @param maxKatoMs               largest KATO (ms) of any controller, 1000-86400000
 *                                ({@code rdmablock.node.maxKatoMs}, default 3600000 = 1 h); larger asks are lowered
 *                                to it (logged)
 */
public record ConnectLimits(int maxControllers, int maxDiscoveryControllers, int maxControllersPerHost,
                            int maxQueuesPerHost, long maxRegisteredBytes, int defaultKatoMs, int maxKatoMs) {
    /** KATO (ms) of a discovery controller whose Connect asks for 0 (Linux nvmet {@code NVMET_DISC_KATO_MS}). */
    public static final int DISCOVERY_KATO_MS = 120_000;
    /** The defaults (see the record's parameters). */
    public static final ConnectLimits DEFAULTS = new ConnectLimits(4096, 1024, 256, 4096, 8L << 30, 120_000,
            3_600_000);

    public ConnectLimits {
        check("maxControllers", maxControllers, 1, 1 << 20);
        check("maxDiscoveryControllers", maxDiscoveryControllers, 1, 1 << 20);
        check("maxControllersPerHost", maxControllersPerHost, 1, 1 << 20);
        check("maxQueuesPerHost", maxQueuesPerHost, 1, 1 << 24);
        check("maxRegisteredBytes", maxRegisteredBytes, 1L << 20, 1L << 40);
        check("maxKatoMs", maxKatoMs, 1_000, 86_400_000);
        check("defaultKatoMs", defaultKatoMs, 1_000, maxKatoMs);
    }

    /**
     * The KATO (ms) a controller gets for the {@code requestedMs} of its Connect or Set Features 0Fh (read as
     * unsigned): 0 is {@link #DISCOVERY_KATO_MS} on a discovery controller, {@link #defaultKatoMs} otherwise; above
     * {@link #maxKatoMs} is {@link #maxKatoMs}. Never 0.
     */
    int katoMs(boolean discovery, int requestedMs) {
        long ms = Integer.toUnsignedLong(requestedMs);
        if (ms == 0) {
            return Math.min(discovery ? DISCOVERY_KATO_MS : defaultKatoMs, maxKatoMs);
        }
        return (int) Math.min(ms, maxKatoMs);
    }

    /** {@code rdmablock.node.<name>}, the property's full name (for log lines). */
    static String property(String name) {
        return "rdmablock.node." + name;
    }

    private static void check(String field, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid " + field + " (" + property(field) + "): " + field + "=" + v
                    + ", min=" + min + ", max=" + max);
        }
    }
}
