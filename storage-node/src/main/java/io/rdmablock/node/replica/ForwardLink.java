package io.rdmablock.node.replica;

import java.util.concurrent.CompletableFuture;

/**
 * The association of a primary with one secondary copy of a volume: opens {@link ForwardQueue}s for the primary's
 * host I/O queues (connection set-up runs off the pollers; the future completes on another thread).
 */
public interface ForwardLink extends AutoCloseable {
    /** Opens a queue of {@code entries} slots whose completions go to {@code listener}; fails when unreachable. */
    CompletableFuture<ForwardQueue> open(int entries, ForwardQueue.Listener listener);

    /** Closes the association and every queue it opened. Idempotent. */
    @Override
    void close();
}
