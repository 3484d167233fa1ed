package io.rdmablock.initiator;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * One path of a multipath device: the controller association with one copy's node ({@link NvmeBlockDevice} in path
 * mode). A copy that cannot be reached when the device opens, or whose association was declared lost, is
 * (re)connected by a background thread every {@code reconnectDelayMs} until the multipath closes. A path is
 * {@link #suspect} from when it was fenced or lost until its association is re-established: it is not chosen meanwhile
 * even if its last ANA answer said Optimized.
 */
final class Path {
    private static final Logger LOG = LoggerFactory.getLogger(Path.class);

    final String fabricAddress;
    final InetSocketAddress address;
    volatile String nodeId;
    volatile boolean suspect;
    /** An association with this copy was established at least once (a lost one can be reported unreachable). */
    volatile boolean everConnected;
    private volatile NvmeBlockDevice dev;
    /** Devices declared lost and replaced: kept until close, buffers allocated from them may still be in use. */
    private final List<NvmeBlockDevice> retired = new ArrayList<>();
    private Thread connector;
    private volatile boolean closed;
    private String lastError;

    Path(String fabricAddress, String nodeId) {
        this.fabricAddress = fabricAddress;
        this.address = VolumeLocator.parseAddress(fabricAddress);
        this.nodeId = nodeId;
    }

    NvmeBlockDevice device() {
        return dev;
    }

    /** Connected, live and not fenced: its ANA state may be asked. */
    boolean usable() {
        NvmeBlockDevice d = dev;
        return d != null && !suspect && d.state() == AssociationState.LIVE;
    }

    /** Every device of this path, current and retired (buffer ownership, close). */
    synchronized List<NvmeBlockDevice> devices() {
        List<NvmeBlockDevice> all = new ArrayList<>(retired);
        if (dev != null) {
            all.add(dev);
        }
        return all;
    }

    /** Opens the association on the caller's thread; rethrows what failed. */
    void open(Function<Path, NvmeBlockDevice> opener) {
        NvmeBlockDevice d = opener.apply(this);
        synchronized (this) {
            if (closed) {
                d.close();
                return;
            }
            suspect = false;
            everConnected = true;
            dev = d;
        }
    }

    /** The current device was declared lost: it is retired and a new association is tried in the background. */
    synchronized void replaceLost(Function<Path, NvmeBlockDevice> opener, long delayMs) {
        if (dev != null && dev.state() == AssociationState.LOST) {
            retired.add(dev);
            dev = null;
            suspect = true;
            connectInBackground(opener, delayMs);
        }
    }

    /** Tries {@link #open} every {@code delayMs} (at least 100 ms) on a daemon thread until it succeeds or close. */
    synchronized void connectInBackground(Function<Path, NvmeBlockDevice> opener, long delayMs) {
        if (closed || (connector != null && connector.isAlive())) {
            return;
        }
        long delayNs = TimeUnit.MILLISECONDS.toNanos(Math.max(100, delayMs));
        connector = Thread.ofPlatform().daemon().name("rdmablock-path-" + fabricAddress).start(() -> {
            while (!closed && dev == null) {
                try {
                    open(opener);
                    LOG.info("path to {} (node {}) connected", fabricAddress, nodeId);
                    return;
                } catch (RuntimeException e) {
                    String msg = String.valueOf(e.getMessage());
                    if (!msg.equals(lastError)) {
                        LOG.warn("path to {} (node {}) not connected, retrying every {} ms: {}", fabricAddress,
                                nodeId, delayNs / 1_000_000, msg);
                        lastError = msg;
                    }
                }
                long until = System.nanoTime() + delayNs;
                while (!closed && System.nanoTime() - until < 0) {
                    LockSupport.parkNanos(until - System.nanoTime());
                }
            }
        });
    }

    /** Stops the background connect (bounded wait) and closes every device of this path. */
    void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = connector;
        }
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (NvmeBlockDevice d : devices()) {
            d.close();
        }
    }

    @Override
    public String toString() {
        return fabricAddress + " (node " + nodeId + ")";
    }
}
