package io.rdmablock.tools.bench;

import io.rdmablock.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class ProcStatTest {
    @Test
    void shouldCountTheContextSwitchesOfEveryThreadNotOnlyTheMainOne() throws InterruptedException {
        ProcStat before = ProcStat.read("self");
        assertNotNull(before, "/proc/self unreadable");
        int sleeps = 200;
        try (Parker p = new Parker(sleeps)) {
            ProcStat during = ProcStat.read("self"); // while the thread lives: its switches are in its task's status
            assertNotNull(during);
            long n = during.minus(before).ctx();
            assertTrue(n >= sleeps / 2, "context switches counted while a thread parked " + sleeps + " times: " + n);
        }
    }

    @Test
    void shouldNeverGoNegativeWhenThreadsOfTheFirstReadingExited() throws InterruptedException {
        // a thread that switched a lot is alive at the first reading and gone at the second (as the bench's job
        // threads between two jobs): its switches must drop out of the difference, not be subtracted from it
        int sleeps = 300;
        ProcStat before;
        try (Parker p = new Parker(sleeps)) {
            before = ProcStat.read("self");
        }
        assertNotNull(before);
        // Thread.join returns when the Java thread ended; its kernel task may linger a moment in /proc/self/task
        ProcStat[] after = new ProcStat[1];
        Await.until(() -> {
            after[0] = ProcStat.read("self");
            return after[0] != null && before.ctx() - after[0].ctx() > sleeps / 2;
        }, Duration.ofSeconds(10), "the exited thread's switches to leave the reading (they were in the first only)");
        long n = after[0].minus(before).ctx();
        assertTrue(n >= 0, "switches of a run in which a thread of the first reading exited: " + n);
    }

    /** A thread that parks {@code sleeps} x 1 ms (a voluntary switch each), then lives on until closed, then exits. */
    private static final class Parker implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);
        private final Thread thread;

        Parker(int sleeps) throws InterruptedException {
            CountDownLatch parked = new CountDownLatch(1);
            thread = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < sleeps; i++) {
                    LockSupport.parkNanos(1_000_000);
                }
                parked.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(parked.await(20, TimeUnit.SECONDS), "the thread did not finish its parks");
        }

        @Override
        public void close() throws InterruptedException {
            release.countDown();
            thread.join(10_000);
        }
    }
}
