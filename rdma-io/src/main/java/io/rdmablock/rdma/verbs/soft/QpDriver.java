package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.ProviderConfiguration;
import io.rdmablock.rdma.verbs.emu.EmuCq;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Who runs a {@link QpEngine}: one thread at a time runs a step, holding the engine ({@link #busy}, a try-lock that is
 * never waited on). Usually that is the application's own polling thread, as a host drives a NIC: a post sends at once
 * or with the poster's next poll ({@link #kick}: the doorbell, several posts per system call), a poll of a completion
 * queue steps its queue pairs ({@link #pollInline}), and a wait on a completion queue with one queue pair blocks in
 * this engine's selector ({@link #awaitInline}), so a completion is visible to the poller without a wake-up of another
 * thread. The queue pair's own thread ({@link #run}) is the fallback that keeps the RC rules true when nobody polls
 * (a responder must serve the peer's RDMA READ and WRITE whether or not its application polls): it runs the engine
 * once no caller has stepped or waited for {@link #INLINE_GRACE_NS}, when a caller asks for work it cannot do itself,
 * and in ERROR (teardown, lingering), and otherwise sleeps. The holder is the only thread in the engine's selector.
 */
final class QpDriver implements Runnable {
    /**
     * How long after a caller last stepped or waited on the engine its own thread stays asleep (ns; system property
     * {@code rdmablock.soft.inlineGraceNs}, default 1 ms): the longest a peer's request waits when the application
     * stops polling all at once. 0 turns caller-driven progress off (every step on the engine's thread).
     */
    static final long INLINE_GRACE_NS = ProviderConfiguration.current().softInlineGraceNs();
    /**
     * After a poll's step found nothing, the next polls within this long skip the socket (ns; system property
     * {@code rdmablock.soft.repollNs}, default 5 us): a spinning poller then costs a system call per interval, not
     * per round, and a frame that arrives meanwhile waits at most this long.
     */
    static final long REPOLL_NS = ProviderConfiguration.current().softRepollNs();
    /**
     * Polls further apart than this (ns) leave the engine to its thread: a queue pair polled now and then (a pending
     * connection polled every millisecond, say) is served by its thread's selector, on readiness, as before; inline
     * stepping pays only for a poller that keeps polling.
     */
    private static final long RARE_POLL_NS = 200_000L;
    /**
     * While callers keep driving the engine, its thread looks again after the grace, then after twice that and so on
     * up to this (ns): an idle-looking thread per busy queue pair costs ~100 wake-ups per second, not 1000.
     */
    private static final long MAX_CHECK_NS = 8_000_000L;
    /** A post within this long of a caller's step or wait leaves the send to that caller's next poll (ns). */
    private static final long DEFER_NS = 50_000L;
    /** Steps one caller makes in a row when others asked for work meanwhile, before it leaves them to the thread. */
    private static final int INLINE_STEPS = 4;

    private final QpEngine e;
    private final Thread thread;
    /** Held by the one thread running a step (or blocked in the selector). */
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Someone had work for the engine while another thread held it: the holder (or the thread) steps again. */
    private volatile boolean stepWanted;
    /** The holder is blocked in the selector: {@link java.nio.channels.Selector#wakeup} ends it. */
    private volatile boolean selecting;
    /** Last time a caller stepped or waited on the engine ({@link System#nanoTime}). */
    private volatile long inlineAtNs;
    /** A caller waits in the selector until about then: the thread need not look before. */
    private volatile long inlineUntilNs;
    /** When a poll's step last found nothing (0: the last one did something); see {@link #REPOLL_NS}. */
    private long idlePollNs;
    /** Posted work waits for the next step to be sent ({@link #kick}). */
    private volatile boolean txPending;
    /** The previous poll ({@link #pollInline}; plain, racy: a hint). */
    private long lastPollNs;
    /** How long the thread sleeps before it looks again while callers drive (doubles up to MAX_CHECK_NS). */
    private long checkNs = INLINE_GRACE_NS;
    /** Steps the engine's own thread ran (tests: how much of the work callers did not do themselves). */
    private volatile long threadSteps;

    QpDriver(QpEngine e, String threadName) {
        this.e = e;
        thread = new Thread(this, threadName);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * There is work for the engine (any thread, never steps itself): whoever holds it steps again; nobody does: the
     * engine's thread takes it up at once.
     */
    void wake() {
        stepWanted = true;
        if (selecting) {
            e.selector.wakeup();
        } else if (!busy.get()) {
            LockSupport.unpark(thread);
        } // else the holder sees stepWanted when it lets go (release)
    }

    /** Work was posted (the poster's thread): sent right here when the engine is free, or with the next poll. */
    void kick() {
        if (INLINE_GRACE_NS <= 0 || e.inError) {
            wake();
            return;
        }
        long now = System.nanoTime();
        if (now - inlineAtNs < DEFER_NS && !selecting) {
            // the poster polled a moment ago and polls again next: that poll's step sends this together with what
            // else it posts meanwhile (one system call for the round, as a NIC batches doorbells); nobody polls
            // within the grace: the engine's thread sends it
            txPending = true;
            return;
        }
        inlineAtNs = now;
        if (!acquire()) {
            wake();
            return;
        }
        try {
            if (!e.finished) {
                stepWanted = false;
                txPending = false;
                if (!e.transmit() || stepWanted) {
                    stepInline(); // not connected yet, ERROR, or others asked meanwhile: a full step
                }
            }
        } catch (Throwable t) {
            e.failed(t);
        } finally {
            release();
        }
    }

    /** A poll of one of the queue pair's completion queues (the poller's thread): one step when the engine is free. */
    void pollInline() {
        if (INLINE_GRACE_NS <= 0 || e.finished) {
            return;
        }
        long now = System.nanoTime();
        long prev = lastPollNs;
        lastPollNs = now;
        if (now - prev > RARE_POLL_NS && !txPending && now - inlineAtNs > RARE_POLL_NS) {
            return; // polled now and then: its thread serves it (on readiness); the next poll, if soon, steps
        }
        inlineAtNs = now;
        long idle = idlePollNs;
        if (idle != 0 && now - idle < REPOLL_NS && !stepWanted && !txPending) {
            return; // looked a moment ago and found nothing (a racy read: at worst one step more or less)
        }
        if (!acquire()) {
            if (selecting) {
                wake(); // the thread waits in the selector: hand the engine to this caller from its next poll on
            }
            return;
        }
        try {
            idlePollNs = stepInline() ? 0 : now;
        } finally {
            release();
        }
    }

    /**
     * A wait on {@code cq}, one of this queue pair's completion queues, up to {@code maxNs}: steps, and when that did
     * nothing blocks in the selector until the socket has something, work is posted, {@code cq} is woken or the time
     * is up (at least 1 ms: the selector's unit). False when the engine was not free (another thread runs it: the
     * caller waits for its completion push instead). A wait shorter than the selector's unit is a plain park of
     * {@code maxNs} followed by a step.
     */
    /** The selector's unit: a wait shorter than this is not done in the selector ({@link #awaitInline}). */
    static final long SELECT_UNIT_NS = 1_000_000L;

    boolean awaitInline(EmuCq cq, long maxNs) {
        if (INLINE_GRACE_NS <= 0 || e.finished || e.inError || !acquire()) {
            return false;
        }
        try {
            long now = System.nanoTime();
            inlineAtNs = now;
            inlineUntilNs = now + maxNs;
            if (e.finished) {
                return true;
            }
            if (!step()) {
                if (maxNs < SELECT_UNIT_NS) {
                    // the selector cannot wait less than 1 ms: a plain park of maxNs, keeping the engine, then a
                    // step. Handing the queue pair to the engine thread for so short a wait (and taking it back)
                    // cost the primary of a replicated volume 2.4x the CPU per write at QD32 (ops/bench/replication)
                    LockSupport.parkNanos(this, maxNs);
                    stepInline();
                    return true;
                }
                cq.waitingIn(e.qp);
                try {
                    if (!cq.ready()) {
                        select(maxNs);
                    }
                } finally {
                    cq.waitingIn(null);
                }
                stepInline();
            }
            return true;
        } catch (Throwable t) {
            e.failed(t);
            return true;
        } finally {
            inlineAtNs = System.nanoTime();
            release();
        }
    }

    /** One engine step, taking up what was asked for so far (holder only); true on progress. */
    private boolean step() throws java.io.IOException {
        stepWanted = false;
        txPending = false;
        return e.step();
    }

    private boolean acquire() {
        return !busy.get() && busy.compareAndSet(false, true);
    }

    /** Lets go of the engine; work asked for meanwhile, or teardown, goes to the thread. */
    private void release() {
        busy.set(false);
        if (stepWanted || e.stopRequested || e.finished) {
            LockSupport.unpark(thread);
        }
    }

    /** Steps (holder only), again while others asked for work meanwhile, a few times; true on progress. */
    private boolean stepInline() {
        if (e.finished) {
            return false;
        }
        boolean progress = false;
        try {
            int n = 0;
            do {
                progress |= step();
            } while (stepWanted && !e.finished && ++n < INLINE_STEPS);
        } catch (Throwable t) {
            e.failed(t);
            return true;
        }
        return progress;
    }

    /**
     * The caller stops driving for now (it is about to block elsewhere, e.g. parked on a CQ of several queue pairs):
     * the thread takes over at once.
     */
    void handBack() {
        if (inlineAtNs != 0) {
            inlineAtNs = 0;
            inlineUntilNs = 0;
            LockSupport.unpark(thread);
        }
    }

    long threadSteps() {
        return threadSteps;
    }

    /** Waits up to {@code timeoutNs} for the thread to end (false at once when called on it). */
    boolean join(long timeoutNs) {
        if (Thread.currentThread() == thread) {
            return false;
        }
        try {
            thread.join(Math.max(1, timeoutNs / 1_000_000));
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /** The engine's own thread: runs it when no caller does (see the class comment), until torn down. */
    @Override
    public void run() {
        try {
            while (!e.finished) {
                if (!stepWanted && !e.inError && !e.stopRequested && !(txPending && !callerSteppedWithin())
                        && callerDriven()) {
                    continue;
                }
                if (!acquire()) {
                    LockSupport.parkNanos(this, Math.max(INLINE_GRACE_NS, 50_000L));
                    continue;
                }
                try {
                    if (e.finished) {
                        break;
                    }
                    checkNs = INLINE_GRACE_NS;
                    threadSteps++; // only this thread writes it
                    if (!step() && !e.finished && !stepWanted) {
                        select(Long.MAX_VALUE);
                    }
                } catch (Throwable t) {
                    e.failed(t);
                } finally {
                    release();
                }
            }
        } finally {
            while (!busy.compareAndSet(false, true)) { // keep it for good: nobody steps a closed engine
                LockSupport.parkNanos(this, 100_000L);
            }
            e.close();
        }
    }

    /** Blocks in the engine's selector up to {@code maxNs} (at least 1 ms) unless there is work. Holder only. */
    private void select(long maxNs) throws java.io.IOException {
        selecting = true;
        try {
            if (!stepWanted && !e.hasWork()) {
                e.select(maxNs);
            }
        } finally {
            selecting = false;
        }
    }

    /**
     * True (after sleeping) while callers drive the engine: one stepped within {@link #INLINE_GRACE_NS}, or waits in
     * the selector, or holds the engine right now.
     */
    private boolean callerDriven() {
        if (INLINE_GRACE_NS <= 0) {
            return false;
        }
        long now = System.nanoTime();
        long until = Math.max(inlineAtNs + INLINE_GRACE_NS, selecting ? inlineUntilNs + INLINE_GRACE_NS : 0);
        if (until - now > 0 || busy.get()) {
            // callers drive: look again later, less often the longer they keep at it (wake() and handBack() end
            // the sleep at once when a caller needs the thread)
            LockSupport.parkNanos(this, Math.max(until - now, checkNs));
            checkNs = Math.min(MAX_CHECK_NS, checkNs * 2);
            return true;
        }
        return false;
    }

    private boolean callerSteppedWithin() {
        return System.nanoTime() - inlineAtNs < INLINE_GRACE_NS;
    }
}
