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

    /** Bytes of a {@code struct timespec} on Linux x86-64 / aarch64: {@code tv_sec} (8), {@code tv_nsec} (8). */
    static final long TIMESPEC_BYTES = 16;

    /**
     * Polls {@code nfds} {@code struct pollfd} entries for up to {@code timeoutNs}, to the nanosecond ({@code
     * ppoll(2)}, no signal mask): a poller's short idle waits (100 us and less) must not become {@code poll(2)}'s
     * whole milliseconds.
     *
     * @param timespec a caller-owned native {@code struct timespec} ({@link #TIMESPEC_BYTES}, 8-aligned), written here
     * @return number of ready fds; 0 on timeout or EINTR
     */
    static int ppoll(MemorySegment fds, int nfds, long timeoutNs, MemorySegment timespec) {
        for (int i = 0; i < nfds; i++) {
            fds.set(JAVA_SHORT, i * 8L + 6, (short) 0);
        }
        long ns = Math.max(0, timeoutNs);
        timespec.set(JAVA_LONG, 0, ns / 1_000_000_000L);
        timespec.set(JAVA_LONG, 8, ns % 1_000_000_000L);
        try {
            int n = (int) Native.PPOLL.invokeExact(fds, (long) nfds, timespec, MemorySegment.NULL);
            return Math.max(n, 0);
        } catch (Throwable t) {
            throw new VerbsException("ppoll failed: " + t, 0, t);
        }
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
