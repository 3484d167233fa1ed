package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A memory-provider listener, bound in {@link MemFabric}. Connect requests wait in a queue of {@code backlog}
 * entries; a connect that finds it full fails UNREACHABLE (as a full TCP backlog would time out). Closing the listener
 * fails the requests not yet taken with CONNECT_ERROR. Thread-safe.
 */
final class MemCmListener implements CmListener {
    private static final long POLL_SLICE_NS = TimeUnit.MILLISECONDS.toNanos(20);
    private final MemVerbsProvider provider;
    private final InetSocketAddress bound;
    private final ArrayBlockingQueue<MemCmId> requests;
    private volatile boolean closed;

    MemCmListener(MemVerbsProvider provider, InetSocketAddress bindAddress, int backlog) {
        this.provider = provider;
        this.requests = new ArrayBlockingQueue<>(backlog);
        this.bound = MemFabric.bind(this, bindAddress);
    }

    MemVerbsProvider provider() {
        return provider;
    }

    /** Queues a passive id for {@link #getRequest}; false when closed or the backlog is full. */
    boolean offer(MemCmId request) {
        return !closed && requests.offer(request);
    }

    @Override
    public InetSocketAddress localAddress() {
        return bound;
    }

    @Override
    public CmId getRequest(long timeoutNs) {
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        try {
            while (!closed) {
                long left = deadline - System.nanoTime();
                MemCmId id = requests.poll(Math.max(0, Math.min(left, POLL_SLICE_NS)), TimeUnit.NANOSECONDS);
                if (id != null) {
                    return id;
                }
                if (left <= 0) {
                    return null;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        MemFabric.unbind(this, bound);
        for (MemCmId id; (id = requests.poll()) != null; ) {
            id.failRequest(new CmException("rdma_connect failed: CONNECT_ERROR (listener closed), remote=" + bound,
                    CmEventType.CONNECT_ERROR, null));
        }
        provider.untrack(this);
    }
}
