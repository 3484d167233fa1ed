package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuPd;
import io.rdmablock.rdma.verbs.emu.EmuResources;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The {@code memory} provider: one device, {@code mem0} (an {@link EmuDevice}), and a connection manager that connects
 * ids of providers in the same JVM through {@link MemFabric}. Thread-safe. Each instance has its own device (its own
 * key table), so a node and an initiator that each select {@code memory} behave like two hosts on one fabric.
 */
public final class MemVerbsProvider implements VerbsProvider {
    /** The name of this provider's one device. */
    static final String DEVICE_NAME = "mem0";

    private final EmuResources resources = new EmuResources("memory");
    private final EmuDevice device = new EmuDevice(DEVICE_NAME, "EmuMr", false,
            "invalid segment: thread-confined (Arena.ofConfined); the memory "
                    + "provider moves data on the threads of both ends of a connection, register memory of a shared, "
                    + "automatic or global arena",
            resources, capacity -> new MemCq(this, capacity));

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public List<String> deviceNames() {
        return List.of(DEVICE_NAME);
    }

    EmuDevice device() {
        return device;
    }

    @Override
    public CmId createId() {
        resources.checkOpen();
        return track(new MemCmId(this, null));
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        resources.checkOpen();
        if (backlog < 1) {
            throw new IllegalArgumentException("invalid backlog: backlog=" + backlog + ", min=1");
        }
        return track(new MemCmListener(this, bindAddress, backlog));
    }

    <T extends AutoCloseable> T track(T resource) {
        return resources.track(resource);
    }

    void untrack(AutoCloseable resource) {
        resources.untrack(resource);
    }

    @Override
    public void close() {
        // ids (and their QPs) before CQs/MRs/PDs: reverse order of creation by kind.
        resources.close(MemCmListener.class, MemCmId.class, MemQp.class, MemCq.class, EmuMr.class,
                EmuPd.class);
    }
}
