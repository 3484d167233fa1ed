package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The thread that releases torn-down queues' connections and memory, off the pollers: destroying a queue pair or a
 * connection-manager id may wait for the peer or the device (a provider's linger, {@code rdma_destroy_id} waiting
 * for its events), and deregistering memory for the device; a poller must never wait for either. Jobs run one at a
 * time in submission order; a job that throws is logged and the next one runs. Any thread may {@link #submit}.
 */
final class QueueReaper {
    private static final Logger LOG = LoggerFactory.getLogger(QueueReaper.class);
    private static final Runnable STOP = () -> { };

    private final LinkedBlockingQueue<Runnable> jobs = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean stopped;

    QueueReaper(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Runs {@code job} on the reaper thread, or on the caller's when the reaper has stopped. */
    void submit(Runnable job) {
        if (stopped) {
            runQuietly(job);
            return;
        }
        jobs.add(job);
    }

    /** Jobs submitted and not yet finished (approximate). */
    int backlog() {
        return jobs.size();
    }

    /**
     * Runs what is queued, then stops the thread; later {@link #submit}s run on the caller. Waits up to
     * {@code timeoutMs} for the thread.
     */
    void stop(long timeoutMs) {
        jobs.add(STOP);
        try {
            thread.join(timeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("queue reaper did not finish within {} ms: backlog={}", timeoutMs, jobs.size());
        }
        stopped = true;
        Runnable j;
        while ((j = jobs.poll()) != null) {
            runQuietly(j); // submitted while stopping
        }
    }

    private void run() {
        while (true) {
            Runnable j;
            try {
                j = jobs.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (j == STOP) {
                return;
            }
            if (j != null) {
                runQuietly(j);
            }
        }
    }

    private static void runQuietly(Runnable j) {
        try {
            j.run();
        } catch (RuntimeException e) {
            LOG.warn("queue release failed: {}", e.toString());
        }
    }
}
