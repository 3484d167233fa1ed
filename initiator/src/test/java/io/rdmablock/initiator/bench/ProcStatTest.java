package io.rdmablock.initiator.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
        Thread t = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < sleeps; i++) {
                LockSupport.parkNanos(1_000_000); // each park gives the CPU up: a voluntary switch of this thread
            }
        });
        ProcStat during = null;
        while (t.isAlive()) {
            during = ProcStat.read("self"); // while the thread lives: its switches are in its task's status
            Thread.sleep(50);
        }
        t.join(10_000);
        assertNotNull(during);
        long n = during.minus(before).ctx();
        assertTrue(n >= sleeps / 2, "context switches counted while a thread parked " + sleeps + " times: " + n);
    }
}
