package io.rdmablock.rdma.verbs.ffm;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FdPoll#ppoll}: a sub-millisecond wait stays sub-millisecond (poll(2) would round it up to 1 ms). */
class FdPollTest {

    @Test
    void shouldWaitLessThanAMillisecondForA200MicrosecondTimeoutAndSeeASignal() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) Native.EVENTFD.invokeExact(0, Native.EFD_NONBLOCK | Native.EFD_CLOEXEC);
            assertTrue(fd >= 0, "eventfd");
            MemorySegment fds = arena.allocate(8);
            fds.set(JAVA_INT, 0, fd);
            fds.set(JAVA_SHORT, 4, (short) Native.POLLIN);
            MemorySegment ts = arena.allocate(FdPoll.TIMESPEC_BYTES, 8);
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 20; i++) { // the shortest of 20: a loaded machine may stretch some
                long t0 = System.nanoTime();
                assertEquals(0, FdPoll.ppoll(fds, 1, 200_000, ts), "nothing ready: a timeout");
                best = Math.min(best, System.nanoTime() - t0);
            }
            assertTrue(best < 1_000_000, "shortest 200 us wait took " + best / 1000 + " us (poll(2) rounds to 1 ms)");
            FdPoll.signalEventFd(fd);
            assertEquals(1, FdPoll.ppoll(fds, 1, 1_000_000_000L, ts), "signalled: ready");
            assertTrue((fds.get(JAVA_SHORT, 6) & Native.POLLIN) != 0, "POLLIN in revents");
            int rc = (int) Native.CLOSE.invokeExact(fd);
            assertEquals(0, rc);
        }
    }
}
