package io.rdmablock.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {

    @Test
    void shouldReturnOnceConditionHolds() {
        AtomicInteger polls = new AtomicInteger();
        Await.until(() -> polls.incrementAndGet() >= 3, Duration.ofSeconds(5), "third poll");
        assertEquals(3, polls.get());
    }

    @Test
    void shouldReturnFirstAcceptedValue() {
        AtomicInteger n = new AtomicInteger();
        int v = Await.value(n::incrementAndGet, x -> x >= 4, Duration.ofSeconds(5), "four");
        assertEquals(4, v);
    }

    @Test
    void shouldFailNamingWhatAndTimeout() {
        AssertionError e = assertThrows(AssertionError.class,
                () -> Await.until(() -> false, Duration.ofMillis(30), "the impossible"));
        assertTrue(e.getMessage().contains("the impossible"), e.getMessage());
        assertTrue(e.getMessage().contains("30 ms"), e.getMessage());
        assertTrue(!e.getMessage().contains("last value"), e.getMessage());
    }

    @Test
    void shouldShowLastValueOnTimeout() {
        AssertionError e = assertThrows(AssertionError.class,
                () -> Await.value(() -> "stale", "fresh"::equals, Duration.ofMillis(20), "a fresh value"));
        assertTrue(e.getMessage().contains("stale"), e.getMessage());
    }

    @Test
    void shouldStopOnInterruptAndKeepStatus() {
        Thread.currentThread().interrupt();
        try {
            assertThrows(AssertionError.class, () -> Await.until(() -> false, Duration.ofSeconds(5), "never"));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void shouldRejectNonPositiveTimeout() {
        assertThrows(IllegalArgumentException.class, () -> Await.until(() -> true, Duration.ZERO, "x"));
    }
}
