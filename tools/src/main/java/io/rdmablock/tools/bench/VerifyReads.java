package io.rdmablock.tools.bench;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which verify blocks a job clone reads back ({@link Worker}): with {@code verify_backlog=N}, the acknowledged
 * written blocks once N are pending (all of them, before writing more); and the final pass (fio's {@code do_verify})
 * over the region's blocks in order. Thread-safe.
 */
final class VerifyReads {
    private final int backlogLimit;
    private final AtomicLong cursor = new AtomicLong();
    private final Queue<Long> backlog = new ConcurrentLinkedQueue<>();
    private final AtomicInteger backlogSize = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();

    /** @param backlogLimit verify_backlog (0: none) */
    VerifyReads(int backlogLimit) {
        this.backlogLimit = backlogLimit;
    }

    /** A write of {@code block} was acknowledged: it is pending for verify_backlog. */
    void written(long block) {
        if (backlogLimit > 0) {
            backlog.add(block);
            backlogSize.incrementAndGet();
        }
    }

    /** The next pending block to read back now (verify_backlog), or -1 when the clone writes on. */
    long nextBacklog() {
        if (backlogLimit <= 0 || (!draining.get() && backlogSize.get() < backlogLimit)) {
            return -1;
        }
        draining.set(true);
        Long b = backlog.poll();
        if (b == null) {
            draining.set(false);
            return -1;
        }
        backlogSize.decrementAndGet();
        return b;
    }

    /** The next block (0-based) of the final pass, or -1 once all {@code blocks} were handed out. */
    long nextFinal(long blocks) {
        long c = cursor.getAndIncrement();
        return c < blocks ? c : -1;
    }
}
