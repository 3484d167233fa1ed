package io.rdmablock.tools.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
        ProcStat after = ProcStat.read("self");
        assertNotNull(before);
        assertNotNull(after);
        long n = after.minus(before).ctx();
        assertTrue(before.ctx() - after.ctx() > sleeps / 2, "the thread's switches were in the first reading only");
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
