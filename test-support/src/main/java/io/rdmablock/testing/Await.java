package io.rdmablock.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waits, bounded, until something a test started has happened on another thread or process.
 *
 * <p>The condition is polled on the calling thread: at once, then with a back-off that starts at
 * {@value #FIRST_PAUSE_MS} ms and doubles up to {@value #MAX_PAUSE_MS} ms between polls (never past the deadline).
 * The deadline is measured with {@link System#nanoTime()}. When the timeout passes without the condition holding,
 * an {@link AssertionError} names what was awaited and the timeout; the condition is polled once more at the
 * deadline so a late success still counts.
 *
 * <p>Use it instead of a fixed {@code Thread.sleep} followed by an assertion: it returns as soon as the condition
 * holds and gives a slow machine the whole timeout. It is not for proving that something did <em>not</em> happen;
 * step a {@link ManualClock} or wait for an event for that.
 *
 * <p>An exception the condition throws propagates at once. An interrupt while pausing ends the wait with an
 * {@link AssertionError} and leaves the thread's interrupt status set.
 */
public final class Await {

    /** First pause between polls, in milliseconds. */
    public static final long FIRST_PAUSE_MS = 1;
    /** Longest pause between polls, in milliseconds. */
    public static final long MAX_PAUSE_MS = 50;

    private Await() {
    }

    /**
     * Polls {@code condition} until it returns {@code true}.
     *
     * @param condition polled on the calling thread, repeatedly: it may act (send a request, take an event) when
     *                  that is how the awaited state is observed
     * @param timeout   how long to wait in all (wall time, measured with {@code System.nanoTime}); must be positive
     * @param what      what is awaited, in words, for the failure message (e.g. "node n1 in the volume's copies")
     * @throws AssertionError when {@code timeout} passes first, or the calling thread is interrupted
     */
    public static void until(BooleanSupplier condition, Duration timeout, String what) {
        Objects.requireNonNull(condition, "condition");
        poll(condition::getAsBoolean, Boolean::booleanValue, timeout, what, false);
    }

    /**
     * Polls {@code supplier} until a value satisfies {@code accept} and returns that value.
     *
     * @param supplier polled on the calling thread; may return {@code null} (then {@code accept} sees {@code null})
     * @param accept   decides whether a polled value is the one awaited
     * @param timeout  how long to wait in all (wall time, measured with {@code System.nanoTime}); must be positive
     * @param what     what is awaited, in words, for the failure message
     * @param <T>      the polled value's type
     * @return the first polled value that {@code accept} accepted
     * @throws AssertionError when {@code timeout} passes first (the message also shows the last polled value), or
     *                        the calling thread is interrupted
     */
    public static <T> T value(Supplier<T> supplier, Predicate<? super T> accept, Duration timeout, String what) {
        return poll(supplier, accept, timeout, what, true);
    }

    private static <T> T poll(Supplier<T> supplier, Predicate<? super T> accept, Duration timeout, String what,
            boolean showLast) {
        Objects.requireNonNull(supplier, "supplier");
        Objects.requireNonNull(accept, "accept");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        long timeoutNs = saturatedNanos(timeout);
        long start = System.nanoTime();
        long pauseMs = FIRST_PAUSE_MS;
        while (true) {
            T v = supplier.get();
            if (accept.test(v)) {
                return v;
            }
            long leftNs = timeoutNs - (System.nanoTime() - start);
            if (leftNs <= 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what
                        + (showLast ? " (last value: " + v + ")" : ""));
            }
            long sleepNs = Math.min(pauseMs * 1_000_000L, leftNs);
            try {
                Thread.sleep(sleepNs / 1_000_000L, (int) (sleepNs % 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                AssertionError err = new AssertionError("interrupted while waiting for " + what);
                err.initCause(e);
                throw err;
            }
            pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
        }
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
