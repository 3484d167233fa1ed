package io.rdmablock.rdma.verbs.memory;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuProvider;
import java.net.InetSocketAddress;

/**
 * The {@code memory} provider: one device, {@code mem0} (an {@link EmuDevice}), and a connection manager that connects
 * ids of providers in the same JVM through {@link MemFabric}. Thread-safe. Each instance has its own device (its own
 * key table), so a node and an initiator that each select {@code memory} behave like two hosts on one fabric.
 */
public final class MemVerbsProvider extends EmuProvider {
    /** The name of this provider's one device. */
    static final String DEVICE_NAME = "mem0";

    public MemVerbsProvider() {
        super("memory", DEVICE_NAME, false, "invalid segment: thread-confined (Arena.ofConfined); the memory "
                + "provider moves data on the threads of both ends of a connection, register memory of a shared, "
                + "automatic or global arena", "MemCq");
    }

    @Override
    protected CmId newId() {
        return new MemCmId(this, null);
    }

    @Override
    protected CmListener bind(InetSocketAddress bindAddress, int backlog) {
        return new MemCmListener(this, bindAddress, backlog);
    }
}
