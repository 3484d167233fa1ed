package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import io.rdmablock.rdma.verbs.emu.EmuPd;
import io.rdmablock.rdma.verbs.emu.EmuResources;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The {@code soft} provider: one device, {@code soft0} (an {@link EmuDevice}), and a TCP-based connection manager.
 * Thread-safe.
 */
public final class SoftVerbsProvider implements VerbsProvider {
    /** The name of this provider's one device. */
    static final String DEVICE_NAME = "soft0";
    /** Failed {@code accept()} calls of every soft listener of this process ({@link #acceptErrorsTotal}). */
    static final java.util.concurrent.atomic.LongAdder ACCEPT_ERRORS = new java.util.concurrent.atomic.LongAdder();

    private final EmuResources resources = new EmuResources("soft");
    private final EmuDevice device = new EmuDevice(DEVICE_NAME, "EmuMr", true,
            "invalid segment: thread-confined (Arena.ofConfined); the soft provider "
                    + "moves data on its own threads, register memory of a shared, automatic or global arena",
            resources, capacity -> new SoftCq(this, capacity));

    @Override
    public String name() {
        return "soft";
    }

    @Override
    public List<String> deviceNames() {
        return List.of(DEVICE_NAME);
    }

    /**
     * Failed {@code accept()} calls (EMFILE, ENFILE, ...) of every soft listener of this process since it started, a
     * monotonic count. Each one paused that listener's accepting for 10 ms to 1 s; none stopped it.
     */
    public static long acceptErrorsTotal() {
        return ACCEPT_ERRORS.sum();
    }

    EmuDevice device() {
        return device;
    }

    @Override
    public CmId createId() {
        resources.checkOpen();
        return track(new SoftCmId(this, null, null));
    }

    @Override
    public CmListener listen(InetSocketAddress bindAddress, int backlog) {
        resources.checkOpen();
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
        return resources.track(resource);
    }

    void untrack(AutoCloseable resource) {
        resources.untrack(resource);
    }

    @Override
    public void close() {
        // ids (and their QPs) before CQs/MRs/PDs: reverse order of creation by kind.
        resources.close(SoftCmListener.class, SoftCmId.class, SoftQp.class, SoftCq.class, EmuMr.class,
                EmuPd.class);
    }
}
