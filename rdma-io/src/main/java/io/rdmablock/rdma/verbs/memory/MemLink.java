package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.QpState;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection of the memory provider: its two queue pairs and the drain that executes their work. Whoever posts
 * (either side's thread, or the fabric timer for a finite RNR wait) calls {@link #kick}; one thread at a time runs
 * the drain (a work-in-progress counter, no lock and no waiting: a thread that finds the drain running leaves its
 * work to the running thread, which loops until nothing is left). So the queues' consumer fields have one writer at a
 * time, and the counter's atomic updates order one drain's writes before the next's reads.
 *
 * <p>Consequence for CPU attribution: when both sides post at the same moment, one thread may execute the other
 * side's copies. Teardown ({@link #breakLink}): both QPs to ERROR, every outstanding WR of both flushed with
 * WR_FLUSH_ERR, DISCONNECTED on both ids (as the soft provider's TCP teardown does).
 */
final class MemLink {
    private static final Logger LOG = LoggerFactory.getLogger(MemLink.class);
    private final MemQp active;
    private final MemQp passive;
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicBoolean disconnectFired = new AtomicBoolean();
    private volatile boolean broken;

    /** Links the two QPs and moves both to RTS (rdma_cm: INIT -> RTR -> RTS at ESTABLISHED). */
    MemLink(MemQp active, MemQp passive) {
        this.active = active;
        this.passive = passive;
        active.link = this;
        passive.link = this;
        if (active.state() == QpState.ERROR || passive.state() == QpState.ERROR) {
            breakLink();
            return;
        }
        active.setState(QpState.RTS);
        passive.setState(QpState.RTS);
        if (active.state() == QpState.ERROR || passive.state() == QpState.ERROR) {
            breakLink(); // moved to ERROR while being linked
        }
    }

    MemQp peerOf(MemQp q) {
        return q == active ? passive : active;
    }

    /** Runs (or hands to the running thread) everything the two queue pairs have to do. */
    void kick() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            try {
                boolean progress;
                do {
                    progress = active.runSends(passive, this);
                    progress |= passive.runSends(active, this);
                    if (broken) {
                        progress |= active.flushAll();
                        progress |= passive.flushAll();
                    }
                } while (progress);
            } catch (RuntimeException | Error e) {
                LOG.error("memory qp {}<->{}: drain failed; moving both to ERROR", active.qpNum(), passive.qpNum(), e);
                markBroken();
                continue; // once more, to flush

            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void markBroken() {
        broken = true;
        active.setState(QpState.ERROR);
        passive.setState(QpState.ERROR);
    }

    /** Tears the connection down: both QPs to ERROR, both flushed, DISCONNECTED on both ids. Any thread. */
    void breakLink() {
        if (!broken) {
            markBroken();
        }
        kick();
        if (disconnectFired.compareAndSet(false, true)) {
            active.fireDisconnected();
            passive.fireDisconnected();
        }
    }
}
