package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.VerbsProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code soft} provider: one device, {@code soft0} ({@link SoftDevice}), and a TCP-based connection manager.
 * Thread-safe.
 */
public final class SoftVerbsProvider implements VerbsProvider {
    private final SoftDevice device = new SoftDevice(this);
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    @Override
    public String name() {
        return "soft";
    }

    @Override
    public List<String> deviceNames() {
        return List.of(SoftDevice.NAME);
    }

    SoftDevice device() {
        return device;
    }

    @Override
    public CmId createId() {
        checkOpen();
        return track(new SoftCmId(this, null, null));
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        checkOpen();
        if (backlog < 1) {
            throw new IllegalArgumentException("invalid backlog: backlog=" + backlog + ", min=1");
        }
        try {
            return track(new SoftCmListener(this, bindAddress, backlog));
        } catch (IOException e) {
            throw new VerbsException("rdma_bind_addr failed: " + e.getMessage() + ", address=" + bindAddress, 98, e);
        }
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
            throw new IllegalStateException("soft verbs provider is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // ids (and their QPs) before CQs/MRs/PDs: reverse order of creation by kind.
        closeAll(SoftCmListener.class);
        closeAll(SoftCmId.class);
        closeAll(SoftQp.class);
        closeAll(SoftCq.class);
        closeAll(SoftMr.class);
        closeAll(SoftPd.class);
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
