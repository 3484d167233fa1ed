package io.rdmablock.node.target;

import io.rdmablock.rdma.verbs.CmId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The end of each queue's connection handshake, off the acceptor thread: {@code rdma_accept} (with the soft
 * provider: the ACCEPT message out, then the peer's RTU awaited) waits up to {@link TargetOptions#connectTimeoutNs()}
 * for the peer, so done on the acceptor one silent peer would hold every other host's connection for that long.
 * Here each accept runs on a pooled thread: an idle one if there is one (handshakes that complete at once reuse a few
 * threads), else a new one (idle threads end after 10 s), at most {@code min(2 x maxPendingQueues, }{@value
 * #MAX_THREADS}{@code )}. Every queue in a handshake counts as pending ({@link TargetOptions.PendingLimits}), so the
 * pending limits bound the handshakes per node and per address (at most {@code maxPendingQueues}, 1024 by default,
 * wait at once; the thread cap has room for threads that are just returning to the pool); a handshake beyond the
 * thread cap is refused (the queue torn down, logged). A queue evicted by a newer one ({@link PendingQueues#admit})
 * no longer counts: its id is disconnected, which ends its accept at once (soft provider; a verbs device's accept
 * ends at its deadline), and its thread tears it down instead of handing it off. A
 * peer that never completes is dropped at its deadline (the accept fails, the queue is torn down, its pending place
 * freed). A completed queue goes to a poller ({@link PollerPool#handOff}). Thread-safe.
 */
final class QueueHandshakes {
    private static final Logger LOG = LoggerFactory.getLogger(QueueHandshakes.class);
    /** Most handshake threads, whatever the pending limit. */
    static final int MAX_THREADS = 4096;

    private final ThreadPoolExecutor pool;
    private final long timeoutNs;
    private final int maxThreads;

    /**
     * @param maxPending the node's pending limit ({@link TargetOptions.PendingLimits#maxPerNode()}, &gt;= 1)
     * @param timeoutNs  the longest wait for one peer's handshake (ns, &gt; 0)
     */
    QueueHandshakes(int maxPending, long timeoutNs) {
        AtomicInteger ids = new AtomicInteger();
        this.maxThreads = (int) Math.min(2L * Math.max(1, maxPending), MAX_THREADS);
        // no queue: a handshake never waits behind stalled ones; the pending limits keep it within maxThreads
        this.pool = new ThreadPoolExecutor(0, maxThreads, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "rdmablock-handshake-" + ids.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        this.timeoutNs = timeoutNs;
    }

    /**
     * Accepts {@code q}'s connection with {@code acceptPrivateData} on a handshake thread, then hands it to
     * {@code handOff}; a failed accept, or a hand-off that returns false, tears the queue down (logged). Never blocks.
     */
    void accept(RdmaQueue q, CmId id, byte[] acceptPrivateData, Predicate<RdmaQueue> handOff) {
        try {
            pool.execute(() -> finish(q, id, acceptPrivateData, handOff));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            if (pool.isShutdown()) {
                q.fail("shutdown", "target stopping: handshake not started");
            } else {
                LOG.warn("handshake refused: {} handshake threads busy (cap min(2 x maxPendingQueues, {})), qid={}, "
                        + "peer={}", maxThreads, MAX_THREADS, q.qid, q.peer);
                q.fail("no resources", "handshake threads at their cap: " + maxThreads);
            }
            q.close();
        }
    }

    private void finish(RdmaQueue q, CmId id, byte[] acceptPrivateData, Predicate<RdmaQueue> handOff) {
        try {
            id.accept(acceptPrivateData, timeoutNs);
        } catch (RuntimeException e) {
            if (!q.evicted) { // an evicted queue's disconnect ends its accept; PendingQueues logged the eviction
                LOG.warn("accept failed: qid={}, peer={}, timeoutMs={}: {}", q.qid, q.peer, timeoutNs / 1_000_000,
                        e.toString());
            }
            q.fail("accept", e.toString());
            q.close();
            return;
        }
        if (q.evicted) {
            q.fail("evicted", "pending limit");
            q.close();
            return;
        }
        LOG.debug("queue accepted: qid={}, entries={}, peer={}", q.qid, q.entries, q.peer);
        if (!handOff.test(q)) {
            q.fail("shutdown", "target stopping: no poller takes the queue");
            q.close();
        }
    }

    /** Handshakes running now. */
    int inProgress() {
        return pool.getActiveCount();
    }

    /**
     * Takes no new handshake and waits up to {@code timeoutMs} for those under way (each ends by its own deadline).
     */
    void stop(long timeoutMs) {
        pool.shutdown();
        try {
            if (!pool.awaitTermination(timeoutMs, TimeUnit.MILLISECONDS)) {
                LOG.warn("handshakes still under way after {} ms: {}", timeoutMs, inProgress());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
