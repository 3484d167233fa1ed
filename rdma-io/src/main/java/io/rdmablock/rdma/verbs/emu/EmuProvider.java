package io.rdmablock.rdma.verbs.emu;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.VerbsProvider;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * An emulated provider: one device ({@link EmuDevice}), its open resources ({@link EmuResources}) and the checks of
 * its connection-manager calls; the transport makes the ids and listeners. Shared implementation of the emulated
 * providers, not an API for users. Thread-safe.
 */
public abstract class EmuProvider implements VerbsProvider {
    private final String name;
    protected final EmuResources resources;
    protected final EmuDevice device;

    /**
     * @param name the provider's name ({@code soft}, {@code memory})
     * @param deviceName its one device's name ({@code soft0}, {@code mem0})
     * @param mrViews see {@link EmuDevice#EmuDevice}
     * @param confinedSegmentMessage see {@link EmuDevice#EmuDevice}
     * @param cqName see {@link EmuDevice#EmuDevice}
     */
    protected EmuProvider(String name, String deviceName, boolean mrViews, String confinedSegmentMessage,
            String cqName) {
        this.name = name;
        this.resources = new EmuResources(name);
        this.device = new EmuDevice(deviceName, "EmuMr", mrViews, confinedSegmentMessage, resources, cqName);
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final List<String> deviceNames() {
        return List.of(device.name());
    }

    public final EmuDevice device() {
        return device;
    }

    /** A new active id of the transport. */
    protected abstract CmId newId();

    /** A listener of the transport bound at {@code bindAddress} (arguments checked). */
    protected abstract CmListener bind(InetSocketAddress bindAddress, int backlog);

    @Override
    public final CmId createId() {
        resources.checkOpen();
        return track(newId());
    }

    @Override
    public final CmListener listen(InetSocketAddress bindAddress, int backlog) {
        resources.checkOpen();
        if (backlog < 1) {
            throw new IllegalArgumentException("invalid backlog: backlog=" + backlog + ", min=1");
        }
        return track(bind(bindAddress, backlog));
    }

    public final <T extends AutoCloseable> T track(T resource) {
        return resources.track(resource);
    }

    public final void untrack(AutoCloseable resource) {
        resources.untrack(resource);
    }

    @Override
    public final void close() {
        // ids (and their QPs) before CQs/MRs/PDs: reverse order of creation by kind.
        resources.close(CmListener.class, CmId.class, QueuePair.class, EmuCq.class, EmuMr.class, EmuPd.class);
    }
}
