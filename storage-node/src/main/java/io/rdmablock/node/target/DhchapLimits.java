package io.rdmablock.node.target;

/**
 * The limits of the target's DH-HMAC-CHAP work (docs/authentication.md, "Cost"): worker threads and their queue,
 * a budget of DH work per peer IP address, and per queue the transactions allowed before the first success and the
 * least interval between re-authentications. Read once at start from the {@code rdmablock.node.dhchap.*} properties
 * ({@link io.rdmablock.node.NodeConfiguration}).
 *
 * @param threads                   DH worker threads, 1..16
 * @param queueMax                  DH computations waiting for a worker, 1..65536
 * @param addressUnitsPerSecond     DH work a peer IP address earns per second, cost units
 *                                  ({@code DhGroup.cost}: one ffdhe2048 exponentiation = 1), 1..100000
 * @param addressBurstUnits         the budget an idle address accumulates, cost units, 1..1000000
 * @param transactionsBeforeSuccess Negotiates a queue may send before it authenticates, 1..100
 * @param reauthIntervalMs          least time between two re-authentications of a queue, ms, 0..3600000
 */
public record DhchapLimits(int threads, int queueMax, long addressUnitsPerSecond, long addressBurstUnits,
                           int transactionsBeforeSuccess, long reauthIntervalMs) {
    /** 1 thread, 64 queued, 16 units/s, 128 units, 3 transactions, 1000 ms. */
    public static final DhchapLimits DEFAULTS = new DhchapLimits(1, 64, 16, 128, 3, 1000);

    /** @throws IllegalArgumentException naming the property, the value and its bounds when one is out of range */
    public DhchapLimits {
        check("threads", threads, 1, 16);
        check("queueMax", queueMax, 1, 65536);
        check("addressUnitsPerSecond", addressUnitsPerSecond, 1, 100_000);
        check("addressBurstUnits", addressBurstUnits, 1, 1_000_000);
        check("transactionsBeforeSuccess", transactionsBeforeSuccess, 1, 100);
        check("reauthIntervalMs", reauthIntervalMs, 0, 3_600_000);
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException("invalid rdmablock.node.dhchap." + name + ": value=" + v + ", min="
                    + min + ", max=" + max);
        }
    }
}
