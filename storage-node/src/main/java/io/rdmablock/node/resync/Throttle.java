package io.rdmablock.node.resync;

import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The node's resync and verify bandwidth (docs/resync.md, "Throttle"): one token bucket per node, shared by every
 * resync and verify, whose rate follows the node's foreground (application) I/O, after DRBD's dynamic resync
 * controller ({@code c-min-rate} / {@code c-max-rate} in drbd.conf(5)): while a host command reached a volume this
 * node is primary of within the last {@value #BUSY_WINDOW_MS} ms, the bucket fills at the floor
 * ({@code --resync-min-mib-s}, default {@value #DEFAULT_MIN_MIB_S} MiB/s); when the foreground is idle, at the
 * ceiling ({@code --resync-mib-s}, default {@value #DEFAULT_MIB_S} MiB/s).
 *
 * <p>The data path only counts ({@link #foreground()}: one {@link LongAdder} increment per host command, no lock, no
 * clock read); the takers sample the count when they take tokens. A taker may run into debt by one request; the
 * next taker waits until the debt is paid, at the rate of the moment (re-judged at least every 10 ms). Thread-safe;
 * {@link #acquire} blocks.
 */
public final class Throttle {
    /** Default ceiling, MiB/s ({@code --resync-mib-s}): the rate while the foreground is idle. */
    public static final int DEFAULT_MIB_S = 40;
    /** Default floor, MiB/s ({@code --resync-min-mib-s}): the rate while the foreground is busy. */
    public static final int DEFAULT_MIN_MIB_S = 4;
    /** The foreground counts as busy this long after a host command was last seen, ms. */
    public static final long BUSY_WINDOW_MS = 150;
    private static final long BUSY_WINDOW_NS = BUSY_WINDOW_MS * 1_000_000L;
    private static final long MAX_PARK_NS = 10_000_000L;

    private final double minBytesPerNs;
    private final double maxBytesPerNs;
    private final LongAdder foreground = new LongAdder();
    private double tokens;
    private long lastNs;
    private long seenCount;
    /** When {@link #seenCount} last changed, ns; starts a window in the past (idle). */
    private long seenNs;

    /** A bucket at one rate whatever the foreground does: {@code mibPerSecond}, &gt; 0. */
    public Throttle(double mibPerSecond) {
        this(mibPerSecond, mibPerSecond);
    }

    /**
     * @param minMibPerSecond the rate while the foreground is busy, MiB/s, &gt; 0 and &lt;= {@code maxMibPerSecond}
     * @param maxMibPerSecond the rate while the foreground is idle, MiB/s
     * @throws IllegalArgumentException for rates out of those bounds
     */
    public Throttle(double minMibPerSecond, double maxMibPerSecond) {
        if (!(minMibPerSecond > 0) || !(maxMibPerSecond >= minMibPerSecond)) {
            throw new IllegalArgumentException("minMibPerSecond=" + minMibPerSecond + ", maxMibPerSecond="
                    + maxMibPerSecond + ": want 0 < min <= max");
        }
        this.minBytesPerNs = minMibPerSecond * (1 << 20) / 1e9;
        this.maxBytesPerNs = maxMibPerSecond * (1 << 20) / 1e9;
        this.lastNs = System.nanoTime();
        this.seenNs = lastNs - 2 * BUSY_WINDOW_NS;
        this.tokens = burst(maxBytesPerNs);
    }

    /** 100 ms worth of {@code bytesPerNs}, at least 256 KiB (a few regions), bytes. */
    private static double burst(double bytesPerNs) {
        return Math.max(256 * 1024, bytesPerNs * 100_000_000L);
    }

    /** Data path (any poller thread): a host command reached a volume this node is primary of. */
    public void foreground() {
        foreground.increment();
    }

    /** Host commands counted by {@link #foreground()} so far. */
    public long foregroundCount() {
        return foreground.sum();
    }

    /** Whether the foreground counts as busy now (a host command within the window), as a taker would judge it. */
    public synchronized boolean busy() {
        long now = System.nanoTime();
        refill(now);
        return now - seenNs < BUSY_WINDOW_NS;
    }

    /** Under the lock: samples the foreground, adds the tokens earned since the last call; returns the rate now. */
    private double refill(long now) {
        long count = foreground.sum();
        if (count != seenCount) {
            seenCount = count;
            seenNs = now; // seen within (previous sample, now]: judged at now, the later end
        }
        double rate = now - seenNs < BUSY_WINDOW_NS ? minBytesPerNs : maxBytesPerNs;
        long dt = now - lastNs;
        lastNs = now;
        tokens = Math.min(burst(rate), tokens + dt * rate);
        return rate;
    }

    /**
     * Takes {@code bytes}: at once when the bucket is not in debt (it may go into debt by this request), else waits
     * until the debt is paid at the rate of the moment.
     *
     * @return false when {@code stop} said so while waiting (nothing taken)
     */
    public boolean acquire(long bytes, BooleanSupplier stop) {
        while (true) { // bounded: the debt is at most one request, paid at >= the floor rate (or stop)
            long waitNs;
            synchronized (this) {
                long now = System.nanoTime();
                double rate = refill(now);
                if (tokens >= 0) {
                    tokens -= bytes;
                    return true;
                }
                waitNs = Math.min(MAX_PARK_NS, Math.max(1, (long) (-tokens / rate)));
            }
            if (stop.getAsBoolean()) {
                return false;
            }
            LockSupport.parkNanos(waitNs);
        }
    }
}
