package io.rdmablock.node.replication;

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

    /**
     * Asks the secondary for a peer lease of {@code leaseMs} at {@code epoch} (docs/failover.md, "Peer lease") on
     * one of its open associations, off the caller's thread. The future completes with the lease granted, ms (0:
     * refused, or no association open); exceptionally when the secondary did not answer. 0 by default (links
     * without an admin queue, tests).
     */
    default CompletableFuture<Long> renewLease(long epoch, long leaseMs) {
        return CompletableFuture.completedFuture(0L);
    }

    /**
     * Asks the secondary to take ({@code delete} false) or delete a snapshot of its copy at {@code epoch}
     * ({@link io.rdmablock.rdma.fabric.Opcodes#ADMIN_COPY_SNAPSHOT}) on one of its associations, off the caller's
     * thread, waiting at most {@code timeoutNs} for the answer. The future completes with the answer's NVMe status
     * (0: done), or exceptionally when the secondary could not be reached or did not answer. Failed by default
     * (links without an admin queue, tests).
     */
    default CompletableFuture<Integer> copySnapshot(long epoch, long snapshotId, boolean delete, long timeoutNs) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("no admin queue on this link"));
    }

    /** Closes the association and every queue it opened. Idempotent. */
    @Override
    void close();
}
