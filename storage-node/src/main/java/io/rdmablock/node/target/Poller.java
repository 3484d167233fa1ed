package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A poller thread running its queues to completion: each round polls every connected queue once, in turn (work
 * completions and store completions in batches, each advancing its requests, and at most
 * {@link FabricQueue#START_BATCH} commands started: a deep queue cannot starve a shallow one) and, every {@link #PENDING_POLL_NS}, the pending ones
 * (no Fabrics Connect yet: they neither slow the round nor keep a poller serving one host from waiting on its CQ),
 * then retires queues that failed: they are disconnected at once and release their memory when their store I/O has
 * drained, without ever blocking the other queues. When rounds find nothing, it keeps polling for
 * {@link TargetOptions#idleSpinNs()} after the last round with work (not at all when its one queue's outstanding
 * commands, at least {@link #storeWaitMin}, are all at the store), then waits on the queue it serves alone: on its
 * CQ (up to {@link #EVENT_WAIT_NS}) when it has no volume I/O in flight, on its volume I/O (up to
 * {@link TargetOptions#idleWaitNs()}; {@link io.rdmablock.node.target.VolumeIo#awaitStore}: the store queue, or the
 * secondaries a replicated write waits on) when it has; otherwise (several queues, a closing queue, a pollable, or a
 * volume I/O that cannot wait) parked for {@link TargetOptions#idleWaitNs()} (20 ms without any queue) - so idle
 * pollers do not burn cores.
 *
 * <p>Besides its queues a poller polls {@link Pollable}s registered by the queues' {@link io.rdmablock.node.target.VolumeIo}s (e.g. the peer
 * queues of a replicated volume's primary), every round after the queues; their work counts like the queues'.
 */
public final class Poller implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);

    /** Longest wait on a CQ's completion channel when the poller serves one idle queue. */
    static final long EVENT_WAIT_NS = 2_000_000L;
    /**
     * Pending queues (no Fabrics Connect yet) are polled at most this often (ns): a Connect waits up to about this
     * (or {@link #EVENT_WAIT_NS} while the poller waits on a connected queue's CQ), and any number of half-open
     * queues costs the connected ones nothing but one pass over them per interval.
     */
    static final long PENDING_POLL_NS = 1_000_000L;

    private final String name;
    private final TargetOptions options;
    private final ConcurrentLinkedQueue<FabricQueue> incoming = new ConcurrentLinkedQueue<>();
    private final ArrayList<FabricQueue> queues = new ArrayList<>();
    /** Queues without a successful Fabrics Connect yet, polled every {@link #PENDING_POLL_NS} (poller thread only). */
    private final ArrayList<FabricQueue> pending = new ArrayList<>();
    private long nextPendingPollNs;
    /** Queues torn down whose store I/O is still draining (they keep their buffers until it has). */
    private final ArrayList<FabricQueue> closing = new ArrayList<>();
    /** Extra work polled every round (poller thread only). */
    private final ArrayList<Pollable> pollables = new ArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    /** True once the loop has ended (stopped or failed): {@link #add} takes no more queues. */
    private volatile boolean dead;
    private volatile Thread thread;

    /**
     * Outstanding commands, all at the store, from which an idle poller waits on the store at once instead of
     * spinning first ({@link TargetTuning#storeWaitMin()}: system property {@code rdmablock.node.storeWaitMin}, at
     * least 1, default 8; a value above the queue's entries turns it off). One wake-up then serves the commands that
     * complete together, while at low depth spinning through the disk's latency stays cheaper than a wake-up per
     * command (docs/bench.md "Node poller spin"). Measured with a disk, 4K QD32 (docs/bench.md "Node store wait"):
     * node CPU per I/O 9.9 vs 14.0 us (randread), 9.3-9.6 vs 13.1 us (randwrite), IOPS the same.
     */
    private final int storeWaitMin;

    Poller(String name, TargetOptions options, int storeWaitMin) {
        if (storeWaitMin < 1) {
            throw new IllegalArgumentException("invalid storeWaitMin (rdmablock.node.storeWaitMin): value="
                    + storeWaitMin + ", min=1");
        }
        this.storeWaitMin = storeWaitMin;
        this.name = name;
        this.options = options;
    }

    void start() {
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /**
     * Something a poller polls every round besides its queues, on its thread: e.g. the queue pairs and store queues a
     * replicated {@link io.rdmablock.node.target.VolumeIo} talks to.
     */
    @FunctionalInterface
    public interface Pollable {
        /**
         * One non-blocking round of work.
         *
         * @param nowNs the round's clock ({@link System#nanoTime()}, read once per round)
         * @return the number of events handled, 0 when idle (the poller then spins, then waits)
         */
        int poll(long nowNs);
    }

    /**
     * Polls {@code p} every round from the next one on, until {@link #removePollable}. Poller thread only (e.g. from
     * a {@link io.rdmablock.node.target.VolumeIo.Factory}, which runs there); no lock.
     *
     * @throws IllegalStateException when called from another thread
     */
    public void addPollable(Pollable p) {
        checkThread();
        pollables.add(java.util.Objects.requireNonNull(p, "pollable"));
    }

    /** Stops polling {@code p} (from the next round on); false when it was not registered. Poller thread only. */
    public boolean removePollable(Pollable p) {
        checkThread();
        return pollables.remove(p);
    }

    private void checkThread() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("poller " + name + " used from thread " + Thread.currentThread().getName());
        }
    }

    /**
     * Hands a connected queue to this poller (from a handshake thread).
     *
     * @return false when the poller's loop has ended (stopped, or failed on an unexpected exception): the queue was
     *         not taken and the caller must give it to another poller or tear it down
     */
    boolean add(FabricQueue q) {
        if (dead) {
            return false;
        }
        incoming.add(q);
        // the loop sets dead before it drains incoming: if it is dead now, either the drain took q (closed) or q is
        // still there and taken back here
        if (dead && incoming.remove(q)) {
            return false;
        }
        LockSupport.unpark(thread);
        return true;
    }

    /** True once the loop has ended: stopped, or failed on an unexpected exception (its queues torn down). */
    boolean isDead() {
        return dead;
    }

    String name() {
        return name;
    }

    @Override
    public void run() {
        long lastWorkNs = System.nanoTime();
        try {
            while (running) {
                long nowNs = System.nanoTime();
                FabricQueue added;
                while ((added = incoming.poll()) != null) {
                    added.poller = this;
                    (added.pending ? pending : queues).add(added);
                    nextPendingPollNs = nowNs; // its Connect may be there already
                }
                int work = 0;
                if (!pending.isEmpty() && nowNs - nextPendingPollNs >= 0) {
                    nextPendingPollNs = nowNs + PENDING_POLL_NS;
                    work += pollPending(nowNs);
                }
                for (int i = 0; i < queues.size(); i++) {
                    FabricQueue q = queues.get(i);
                    work += q.poll(nowNs);
                    if (q.isFatal()) {
                        queues.remove(i--);
                        retire(q, nowNs);
                    }
                }
                for (int i = 0; i < pollables.size(); i++) {
                    work += pollables.get(i).poll(nowNs);
                }
                for (int i = 0; i < closing.size(); i++) {
                    if (closing.get(i).drainStep(nowNs)) {
                        closing.remove(i--);
                    }
                }
                if (work > 0) {
                    lastWorkNs = nowNs;
                } else if (nowNs - lastWorkNs >= options.idleSpinNs() || storeBound()) {
                    idle();
                } else {
                    Thread.onSpinWait();
                }
            }
        } catch (Throwable t) {
            LOG.error("poller {} failed; closing its {} queues, {} pending; it takes no more queues", name,
                    queues.size(), pending.size(), t);
        } finally {
            dead = true;
            for (FabricQueue q : queues) {
                q.close();
            }
            queues.clear();
            for (FabricQueue q : pending) {
                q.close();
            }
            pending.clear();
            for (FabricQueue q : closing) {
                q.close();
            }
            closing.clear();
            FabricQueue q;
            while ((q = incoming.poll()) != null) {
                q.close();
            }
            stopped.countDown();
        }
    }

    /** One pass over the pending queues: a failed one is retired, a connected one joins {@link #queues}. */
    private int pollPending(long nowNs) {
        int work = 0;
        for (int i = 0; i < pending.size(); i++) {
            FabricQueue q = pending.get(i);
            work += q.poll(nowNs);
            if (q.isFatal()) {
                pending.remove(i--);
                retire(q, nowNs);
            } else if (!q.pending) {
                pending.remove(i--);
                queues.add(q);
            }
        }
        return work;
    }

    /** Starts tearing {@code q} down without blocking this poller on its store I/O. */
    private void retire(FabricQueue q, long nowNs) {
        q.beginClose(nowNs);
        if (!q.drainStep(nowNs)) {
            closing.add(q);
        }
    }

    /**
     * True when this poller serves one queue (no other queue, no closing one, no pollable) whose every outstanding
     * command, at least {@link #storeWaitMin} of them, is at the store: what the host may send meanwhile is new
     * commands, which wait at most {@link TargetOptions#idleWaitNs()} or until a store completion ends the wait.
     */
    private boolean storeBound() {
        FabricQueue q = alone();
        if (q == null) {
            return false;
        }
        int n = q.storeInFlight();
        return n >= storeWaitMin && n == q.outstanding();
    }

    /** The one queue this poller serves when it serves nothing else (no closing queue, no pollable), else null. */
    private FabricQueue alone() {
        return queues.size() == 1 && closing.isEmpty() && pollables.isEmpty() ? queues.get(0) : null;
    }

    /**
     * Waits on the queue this poller serves alone, else parks. Waiting instead on the CQ of the queue that last had
     * work among several was measured (ops/bench/replication, soft provider, 2 cores): R=3 4K QD1 p50 875-1020 us
     * instead of 1264 us, but R=3 4K QD32 7.7-9.1k IOPS instead of 10.5k; left out. Also tried (2026-12-07, same
     * bench, in-capsule forwards): with several queues, waiting on a busy queue's store instead of the park, and a
     * 1 us timer slack for the pollers (prctl PR_SET_TIMERSLACK): both raised the secondaries' CPU per write at
     * R=3 4K QD32 (43.5 -> 64.6 and -> 119.6 us with both) and lowered its IOPS (8.6k -> 7.0k, 4.6k); left out.
     */
    private void idle() {
        FabricQueue q = alone();
        int storeInFlight = q == null ? 0 : q.storeInFlight();
        if (storeInFlight > 0 && q.awaitStore(options.idleWaitNs())) {
            // only volume I/O outstanding: its own completion ends the wait (io_uring GETEVENTS, or the one peer a
            // replicated write waits on), not the end of a park; a new capsule waits at most idleWaitNs, as with
            // the park
            return;
        }
        if (q != null && storeInFlight == 0) {
            long nowNs = System.nanoTime();
            // event driven: a completion ends the wait at once, so it can be longer than a park when the queue is
            // alone; beside other queues, it is bounded by idleWaitNs as their park was. A queue handed over
            // meanwhile waits at most this long for its first poll
            q.awaitAndPoll(queues.size() == 1 ? Math.max(options.idleWaitNs(), EVENT_WAIT_NS)
                    : options.idleWaitNs(), nowNs);
            if (q.isFatal()) {
                queues.remove(q);
                retire(q, nowNs);
            }
        } else {
            // no queue at all: sleep longer, add() unparks at once; only pending ones: until their next poll
            long parkNs = !queues.isEmpty() || !closing.isEmpty() ? options.idleWaitNs()
                    : pending.isEmpty() ? 20_000_000L : PENDING_POLL_NS;
            LockSupport.parkNanos(this, parkNs);
        }
    }

    /** Stops the thread; its queues are torn down on it. Waits up to {@code timeoutMs}. */
    void stop(long timeoutMs) {
        running = false;
        Thread t = thread;
        if (t == null) {
            return;
        }
        LockSupport.unpark(t);
        try {
            if (!stopped.await(timeoutMs, TimeUnit.MILLISECONDS)) {
                LOG.warn("poller {} did not stop within {} ms", name, timeoutMs);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
