package io.rdmablock.node.replica;

import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.util.concurrent.CompletableFuture;

/**
 * The association of a primary with one secondary copy of a volume: opens {@link ForwardQueue}s for the primary's
 * host I/O queues (connection set-up runs off the pollers; the future completes on another thread).
 */
public interface ForwardLink extends AutoCloseable {
    /**
     * Opens a queue of {@code entries} slots whose completions go to {@code listener}; fails when unreachable.
     *
     * @param pd the protection domain of the host queue's device: the forward queue's queue pair is created in it,
     *           so the secondary's RDMA READ can reach the host queue's registered buffers (null in tests)
     */
    CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener listener);

    /**
     * The secondary's fabric address changed (its node re-registered elsewhere): later opens go to {@code address}.
     * No-op by default (links with a fixed peer, tests).
     */
    default void retarget(java.net.InetSocketAddress address) {
    }

    /** Closes the association and every queue it opened. Idempotent. */
    @Override
    void close();
}
