package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The target's poller threads and the hand-off of accepted queues to them, round robin. A poller whose loop ended
 * on an unexpected exception has torn down its own queues and takes no more ({@link Poller#add} is false): the next
 * hand-off that meets it replaces it with a new poller in its slot (logged), so the node keeps its poller count and
 * never feeds a dead one. Thread-safe: hand-offs come from the handshake threads, {@link #stop} from the target.
 */
final class PollerPool {
    private static final Logger LOG = LoggerFactory.getLogger(PollerPool.class);

    private final TargetOptions options;
    private final AtomicReferenceArray<Poller> pollers;
    private final AtomicInteger next = new AtomicInteger();
    /** Replacements so far (names the new threads); guarded by this. */
    private int generation;
    /** False once {@link #stop} began: no replacement is started after it; guarded by this. */
    private boolean running = true;

    /** {@link TargetTuning#storeWaitMin()} of every poller. */
    private final int storeWaitMin;

    /** Starts {@link TargetOptions#pollers()} pollers named {@code rdmablock-poller-<slot>}. */
    PollerPool(TargetOptions options, int storeWaitMin) {
        this.options = options;
        this.storeWaitMin = storeWaitMin;
        this.pollers = new AtomicReferenceArray<>(options.pollers());
        for (int i = 0; i < pollers.length(); i++) {
            Poller p = new Poller("rdmablock-poller-" + i, options, storeWaitMin);
            pollers.set(i, p);
            p.start();
        }
    }

    int size() {
        return pollers.length();
    }

    /** The poller in slot {@code i} now (tests). */
    Poller get(int i) {
        return pollers.get(i);
    }

    /**
     * Hands {@code q} to the next live poller, replacing a failed one met on the way.
     *
     * @return false when no poller took it (the pool is stopping); the caller then tears {@code q} down
     */
    boolean handOff(FabricQueue q) {
        for (int tries = 0; tries <= pollers.length(); tries++) {
            int slot = Math.floorMod(next.getAndIncrement(), pollers.length());
            Poller p = pollers.get(slot);
            if (p.add(q)) {
                return true;
            }
            replace(slot, p);
        }
        return false;
    }

    /** Puts a new poller in {@code slot} when {@code failed} is still there and the pool runs. */
    private synchronized void replace(int slot, Poller failed) {
        if (!running || pollers.get(slot) != failed || !failed.isDead()) {
            return;
        }
        Poller p = new Poller("rdmablock-poller-" + slot + "." + ++generation, options, storeWaitMin);
        p.start();
        pollers.set(slot, p);
        LOG.warn("poller replaced: slot={}, failed={}, new={} (the failed poller's queues were torn down)", slot,
                failed.name(), p.name());
    }

    /** Stops every poller (each tears down its queues), waiting up to {@code timeoutMs} for each. */
    void stop(long timeoutMs) {
        synchronized (this) {
            running = false;
        }
        for (int i = 0; i < pollers.length(); i++) {
            pollers.get(i).stop(timeoutMs);
        }
    }
}
