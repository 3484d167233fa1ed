package io.rdmablock.node.replica;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The node's resync and verify bandwidth (docs/resync.md, "Throttle"): one token bucket per node, shared by every
 * resync and verify ({@code --resync-mib-s}, default {@value #DEFAULT_MIB_S} MiB/s). A taker may run into debt by
 * one request; the next taker waits until the debt is paid. Thread-safe; blocking.
 */
public final class Throttle {
    /** Default rate, MiB/s. */
    public static final int DEFAULT_MIB_S = 40;
    private final double bytesPerNs;
    private final double burstBytes;
    private double tokens;
    private long lastNs;

    /** @param mibPerSecond the rate, MiB/s, &gt; 0 */
    public Throttle(double mibPerSecond) {
        if (!(mibPerSecond > 0)) {
            throw new IllegalArgumentException("mibPerSecond=" + mibPerSecond + ": > 0");
        }
        this.bytesPerNs = mibPerSecond * (1 << 20) / 1e9;
        this.burstBytes = Math.max(256 * 1024, mibPerSecond * (1 << 20) / 10); // 100 ms worth
        this.tokens = burstBytes;
        this.lastNs = System.nanoTime();
    }

    /**
     * Takes {@code bytes}, waiting as long as the rate says.
     *
     * @return false when {@code stop} said so while waiting (nothing to undo)
     */
    public boolean acquire(long bytes, BooleanSupplier stop) {
        long waitNs;
        synchronized (this) {
            long now = System.nanoTime();
            tokens = Math.min(burstBytes, tokens + (now - lastNs) * bytesPerNs);
            lastNs = now;
            tokens -= bytes;
            waitNs = tokens >= 0 ? 0 : (long) (-tokens / bytesPerNs);
        }
        long until = System.nanoTime() + waitNs;
        while (System.nanoTime() - until < 0) {
            if (stop.getAsBoolean()) {
                return false;
            }
            LockSupport.parkNanos(Math.min(10_000_000L, Math.max(1, until - System.nanoTime())));
        }
        return true;
    }
}
