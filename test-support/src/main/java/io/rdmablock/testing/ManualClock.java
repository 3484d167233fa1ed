package io.rdmablock.testing;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A {@code nanoTime} source a test steps by hand: pass it where production code takes a {@link LongSupplier} of
 * nanoseconds (in place of {@code System::nanoTime}), then {@link #advance} it to make time pass without sleeping.
 *
 * <p>Readings are nanoseconds on an arbitrary origin, like {@link System#nanoTime()}: only differences mean
 * anything. Time never moves by itself and never goes backwards. Thread-safe: reads and advances are atomic, so
 * a poller thread may read while the test thread advances.
 */
public final class ManualClock implements LongSupplier {

    private final AtomicLong nowNs;

    /** A clock that starts at an arbitrary non-zero reading (1 s, in nanoseconds), so code that treats 0 as "unset" still works. */
    public ManualClock() {
        this(1_000_000_000L);
    }

    /**
     * A clock that starts at {@code startNs}.
     *
     * @param startNs first reading, in nanoseconds
     */
    public ManualClock(long startNs) {
        this.nowNs = new AtomicLong(startNs);
    }

    /** @return the current reading, in nanoseconds */
    @Override
    public long getAsLong() {
        return nowNs.get();
    }

    /** @return the current reading, in nanoseconds (same as {@link #getAsLong()}) */
    public long nanoTime() {
        return nowNs.get();
    }

    /**
     * Moves the clock forward.
     *
     * @param step how far; zero or positive
     * @return the new reading, in nanoseconds
     */
    public long advance(Duration step) {
        return advanceNanos(step.toNanos());
    }

    /**
     * Moves the clock forward.
     *
     * @param stepNs how far, in nanoseconds; zero or positive
     * @return the new reading, in nanoseconds
     */
    public long advanceNanos(long stepNs) {
        if (stepNs < 0) {
            throw new IllegalArgumentException("a clock does not go backwards: " + stepNs + " ns");
        }
        return nowNs.addAndGet(stepNs);
    }

    @Override
    public String toString() {
        return "ManualClock[" + nowNs.get() + " ns]";
    }
}
