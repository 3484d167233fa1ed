package io.rdmablock.node.target;

/**
 * The target's share of the node's configuration ({@link io.rdmablock.node.NodeConfiguration}, read and checked once
 * at start): connection caps, DH-HMAC-CHAP limits, the pollers' store wait threshold, the epoch window of secondary
 * copies, and whether store buffers are registered.
 *
 * @param connectLimits        controller, queue, registered-memory and keep-alive caps ({@link ConnectLimits})
 * @param dhchap               DH-HMAC-CHAP limits ({@link DhchapLimits})
 * @param storeWaitMin         outstanding commands, all at the store, from which an idle poller waits on the store at
 *                             once instead of spinning first ({@code rdmablock.node.storeWaitMin}), &gt;= 1
 * @param epochWindow          how far above the volume's epoch the management plane told this node a forwarded
 *                             command's epoch may be ({@code rdmablock.node.epochWindow}), 1..{@value #MAX_EPOCH_WINDOW}
 * @param registerStoreBuffers register each queue's data buffers with io_uring as fixed buffers
 *                             ({@code rdmablock.target.registerStoreBuffers})
 */
public record TargetTuning(ConnectLimits connectLimits, DhchapLimits dhchap, int storeWaitMin, long epochWindow,
                           boolean registerStoreBuffers) {
    /** Default {@link #storeWaitMin}: 8 commands (docs/bench.md "Node store wait"). */
    public static final int DEFAULT_STORE_WAIT_MIN = 8;
    /** Default {@link #epochWindow}: 16 epochs. */
    public static final long DEFAULT_EPOCH_WINDOW = 16;
    /** Largest {@link #epochWindow}. */
    public static final long MAX_EPOCH_WINDOW = 1_000_000;
    /** Every default. */
    public static final TargetTuning DEFAULTS = new TargetTuning(ConnectLimits.DEFAULTS, DhchapLimits.DEFAULTS,
            DEFAULT_STORE_WAIT_MIN, DEFAULT_EPOCH_WINDOW, true);

    /** @throws IllegalArgumentException naming the property when a value is out of its bounds */
    public TargetTuning {
        java.util.Objects.requireNonNull(connectLimits, "connectLimits");
        java.util.Objects.requireNonNull(dhchap, "dhchap");
        if (storeWaitMin < 1) {
            throw new IllegalArgumentException("invalid rdmablock.node.storeWaitMin: value=" + storeWaitMin
                    + ", min=1, max=" + Integer.MAX_VALUE);
        }
        if (epochWindow < 1 || epochWindow > MAX_EPOCH_WINDOW) {
            throw new IllegalArgumentException("invalid rdmablock.node.epochWindow: value=" + epochWindow
                    + ", min=1, max=" + MAX_EPOCH_WINDOW);
        }
    }

    /** The same with another {@link #storeWaitMin} (tests). */
    public TargetTuning withStoreWaitMin(int n) {
        return new TargetTuning(connectLimits, dhchap, n, epochWindow, registerStoreBuffers);
    }
}
