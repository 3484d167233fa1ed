package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.emu.EmuDevice;
import io.rdmablock.rdma.verbs.emu.EmuProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code soft} provider: one device, {@code soft0} (an {@link EmuDevice}), and a TCP-based connection manager.
 * Thread-safe.
 */
public final class SoftVerbsProvider extends EmuProvider {
    /** The name of this provider's one device. */
    static final String DEVICE_NAME = "soft0";
    /** Failed {@code accept()} calls of every soft listener of this process ({@link #acceptErrorsTotal}). */
    static final LongAdder ACCEPT_ERRORS = new LongAdder();

    public SoftVerbsProvider() {
        super("soft", DEVICE_NAME, true, "invalid segment: thread-confined (Arena.ofConfined); the soft provider "
                + "moves data on its own threads, register memory of a shared, automatic or global arena", "SoftCq");
    }

    /**
     * Failed {@code accept()} calls (EMFILE, ENFILE, ...) of every soft listener of this process since it started, a
     * monotonic count. Each one paused that listener's accepting for 10 ms to 1 s; none stopped it.
     */
    public static long acceptErrorsTotal() {
        return ACCEPT_ERRORS.sum();
    }

    @Override
    protected CmId newId() {
        return new SoftCmId(this, null, null);
    }

    @Override
    protected CmListener bind(InetSocketAddress bindAddress, int backlog) {
        try {
            return new SoftCmListener(this, bindAddress, backlog);
        } catch (IOException e) {
            throw new VerbsException("rdma_bind_addr failed: " + e.getMessage() + ", address=" + bindAddress, 98, e);
        }
    }
}
