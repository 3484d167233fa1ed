package io.rdmablock.rdma.verbs;

import java.net.InetSocketAddress;

/** A listening {@code rdma_cm_id} ({@link VerbsProvider#listen}). Thread-safe. */
public interface CmListener extends AutoCloseable {
    /** Bound address; the real port when 0 was asked for. */
    InetSocketAddress localAddress();

    /**
     * Waits up to {@code timeoutNs} for a CONNECT_REQUEST.
     *
     * @return the passive-side id of the request, or null on timeout or after {@link #close()}
     */
    CmId getRequest(long timeoutNs);

    /** Stops listening; a thread blocked in {@link #getRequest} returns null. Idempotent. */
    @Override
    void close();
}
