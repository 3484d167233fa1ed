package io.rdmablock.node.target;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class TimerSlackTest {
    @Test
    void shouldSetTheCallingThreadsSlackOnly() throws InterruptedException {
        assumeTrue(TimerSlack.current() > 0, "prctl(PR_GET_TIMERSLACK) unavailable (not Linux)");
        AtomicLong inThread = new AtomicLong();
        AtomicLong other = new AtomicLong();
        Thread t = Thread.ofPlatform().start(() -> {
            assertTrue(TimerSlack.set(1_000));
            inThread.set(TimerSlack.current());
        });
        t.join(10_000);
        Thread u = Thread.ofPlatform().start(() -> other.set(TimerSlack.current()));
        u.join(10_000);
        assertEquals(1_000, inThread.get(), "the thread's own slack");
        assertTrue(other.get() != 1_000, "another thread keeps its slack: " + other.get());
    }

    @Test
    void shouldRefuseZero() {
        assertThrows(IllegalArgumentException.class, () -> TimerSlack.set(0));
    }
}
