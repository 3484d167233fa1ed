package io.rdmablock.node.nvmf;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A poller thread running its queues to completion: each round polls every queue (work completions and store
 * completions in batches, each advancing its requests), then closes queues that failed. When a round finds nothing,
 * it spins {@link TargetOptions#idleSpinIterations()} rounds, then waits {@link TargetOptions#idleWaitNs()}: on the
 * CQ's completion channel when it serves one queue with no store I/O in flight, otherwise parked - so idle pollers
 * do not burn cores.
 */
final class Poller implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Poller.class);

    private final String name;
    private final TargetOptions options;
    private final ConcurrentLinkedQueue<RdmaQueue> incoming = new ConcurrentLinkedQueue<>();
    private final ArrayList<RdmaQueue> queues = new ArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile Thread thread;

    Poller(String name, TargetOptions options) {
        this.name = name;
        this.options = options;
    }

    void start() {
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /** Hands a connected queue to this poller (from the acceptor thread). */
    void add(RdmaQueue q) {
        incoming.add(q);
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        int idleRounds = 0;
        try {
            while (running) {
                long nowNs = System.nanoTime();
                RdmaQueue added;
                while ((added = incoming.poll()) != null) {
                    queues.add(added);
                }
                int work = 0;
                for (int i = 0; i < queues.size(); i++) {
                    RdmaQueue q = queues.get(i);
                    work += q.poll(nowNs);
                    if (q.isFatal()) {
                        q.close();
                        queues.remove(i--);
                    }
                }
                if (work > 0) {
                    idleRounds = 0;
                } else if (++idleRounds > options.idleSpinIterations()) {
                    idle();
                } else {
                    Thread.onSpinWait();
                }
            }
        } catch (Throwable t) {
            LOG.error("poller {} failed; closing its {} queues", name, queues.size(), t);
        } finally {
            for (RdmaQueue q : queues) {
                q.close();
            }
            queues.clear();
            RdmaQueue q;
            while ((q = incoming.poll()) != null) {
                q.close();
            }
            stopped.countDown();
        }
    }

    private void idle() {
        if (queues.size() == 1 && queues.get(0).storeInFlight() == 0) {
            RdmaQueue q = queues.get(0);
            q.awaitAndPoll(options.idleWaitNs(), System.nanoTime());
            if (q.isFatal()) {
                q.close();
                queues.remove(0);
            }
        } else {
            // no queue at all: sleep longer, add() unparks at once
            LockSupport.parkNanos(this, queues.isEmpty() ? 20_000_000L : options.idleWaitNs());
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
