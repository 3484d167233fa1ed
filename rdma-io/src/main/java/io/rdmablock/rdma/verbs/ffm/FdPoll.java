package io.rdmablock.rdma.verbs.ffm;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** {@code poll(2)} with a nanosecond timeout, and eventfd signalling, for the channel waits. */
final class FdPoll {
    private FdPoll() {
    }

    /**
     * Polls {@code nfds} {@code struct pollfd} entries for up to {@code timeoutNs} (rounded up to whole ms).
     *
     * @return number of ready fds; 0 on timeout or EINTR
     */
    static int poll(MemorySegment fds, int nfds, long timeoutNs) {
        for (int i = 0; i < nfds; i++) {
            fds.set(JAVA_SHORT, i * 8L + 6, (short) 0);
        }
        long ms = (Math.max(0, timeoutNs) + 999_999) / 1_000_000;
        int timeoutMs = (int) Math.min(Integer.MAX_VALUE, ms);
        try {
            int n = (int) Native.POLL.invokeExact(fds, (long) nfds, timeoutMs);
            return Math.max(n, 0);
        } catch (Throwable t) {
            throw new VerbsException("poll failed: " + t, 0, t);
        }
    }

    /** Adds 1 to an eventfd counter (wakes its poller). */
    static void signalEventFd(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment one = a.allocate(JAVA_LONG);
            one.set(JAVA_LONG, 0, 1L);
            long ignored = (long) Native.WRITE.invokeExact(fd, one, 8L);
        } catch (Throwable t) {
            throw new VerbsException("eventfd write failed: " + t, 0, t);
        }
    }

    /** Resets a non-blocking eventfd counter. */
    static void drainEventFd(int fd, MemorySegment buf8) {
        try {
            long ignored = (long) Native.READ.invokeExact(fd, buf8, 8L);
        } catch (Throwable t) {
            throw new VerbsException("eventfd read failed: " + t, 0, t);
        }
    }
}
