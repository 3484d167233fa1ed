package io.rdmablock.node.resync;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resync throttle follows the foreground: the floor while host commands are counted, the ceiling once none was
 * for the busy window. Rates are judged with wide margins (a loaded 2-core box oversleeps parks).
 */
class ThrottleTest {
    private static final long CHUNK = 64 << 10;

    /** Bytes taken within {@code ms}, counting a host command before each take when {@code busy}. */
    private static long takenWithin(Throttle t, long ms, boolean busy) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        long taken = 0;
        for (int i = 0; i < 1_000_000 && System.nanoTime() < end; i++) {
            if (busy) {
                t.foreground();
            }
            if (!t.acquire(CHUNK, () -> System.nanoTime() > end)) {
                break;
            }
            taken += CHUNK;
        }
        return taken;
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void runsAtTheFloorWhileTheForegroundIsBusyAndAtTheCeilingWhenIdle() throws InterruptedException {
        Throttle t = new Throttle(2, 200);
        assertFalse(t.busy(), "idle at the start");
        long busy = takenWithin(t, 1_000, true);
        assertTrue(t.busy(), "busy after host commands");
        // 2 MiB/s for 1 s plus the 256 KiB burst (and the one request of debt): well under 4 MiB
        assertTrue(busy <= 4L << 20, "taken while busy: " + busy + " bytes in 1 s at a 2 MiB/s floor");
        assertTrue(busy >= 256 << 10, "taken while busy: " + busy + " bytes (the floor still moves)");
        Await.until(() -> !t.busy(), Duration.ofSeconds(10), "idle once no host command was counted for the window");
        long idle = takenWithin(t, 1_000, false);
        // 200 MiB/s for 1 s; a tenth of it even on a loaded box, and far above the floor
        assertTrue(idle >= 20L << 20, "taken while idle: " + idle + " bytes in 1 s at a 200 MiB/s ceiling");
        assertTrue(t.foregroundCount() > 0);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aWaitingTakerStopsWhenToldAndAFixedRateIgnoresTheForeground() {
        Throttle t = new Throttle(1);
        assertTrue(t.acquire(64L << 20, () -> false), "the first take goes into debt");
        long t0 = System.nanoTime();
        assertFalse(t.acquire(CHUNK, () -> System.nanoTime() - t0 > 50_000_000L), "stopped while waiting");
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "stopped at once, not after the debt");
        assertThrows(IllegalArgumentException.class, () -> new Throttle(8, 4));
        assertThrows(IllegalArgumentException.class, () -> new Throttle(0, 4));
    }
}
