package io.rdmablock.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ManualClockTest {

    @Test
    void shouldOnlyMoveWhenAdvanced() {
        ManualClock clock = new ManualClock(100);
        assertEquals(100, clock.getAsLong());
        assertEquals(100, clock.getAsLong());
        assertEquals(100 + 2_000_000, clock.advance(Duration.ofMillis(2)));
        assertEquals(100 + 2_000_005, clock.advanceNanos(5));
        assertEquals(100 + 2_000_005, clock.nanoTime());
    }

    @Test
    void shouldNotGoBackwards() {
        ManualClock clock = new ManualClock();
        assertThrows(IllegalArgumentException.class, () -> clock.advanceNanos(-1));
    }

    @Test
    void shouldKeepEveryStepUnderConcurrentAdvances() throws InterruptedException {
        ManualClock clock = new ManualClock(0);
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int j = 0; j < 10_000; j++) {
                    clock.advanceNanos(1);
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertEquals(40_000, clock.getAsLong());
    }
}
