package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsProvider;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code memory} provider: one device, {@code mem0} ({@link MemDevice}), and a connection manager that connects
 * ids of providers in the same JVM through {@link MemFabric}. Thread-safe. Each instance has its own device (its own
 * key table), so a node and an initiator that each select {@code memory} behave like two hosts on one fabric.
 */
public final class MemVerbsProvider implements VerbsProvider {
    private final MemDevice device = new MemDevice(this);
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public List<String> deviceNames() {
        return List.of(MemDevice.NAME);
    }

    MemDevice device() {
        return device;
    }

    @Override
    public CmId createId() {
        checkOpen();
        return track(new MemCmId(this, null));
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        checkOpen();
        if (backlog < 1) {
            throw new IllegalArgumentException("invalid backlog: backlog=" + backlog + ", min=1");
        }
        return track(new MemCmListener(this, bindAddress, backlog));
    }

    <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    void untrack(AutoCloseable resource) {
        open.remove(resource);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("memory verbs provider is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeAll(MemCmListener.class);
        closeAll(MemCmId.class);
        closeAll(MemQp.class);
        closeAll(MemCq.class);
        closeAll(MemMr.class);
        closeAll(MemPd.class);
    }

    private void closeAll(Class<?> kind) {
        for (AutoCloseable c : List.copyOf(open)) {
            if (kind.isInstance(c)) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing everything; keep going
                }
                open.remove(c);
            }
        }
    }
}
