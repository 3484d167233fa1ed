package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import java.util.concurrent.TimeoutException;
import io.rdmablock.node.qos.BackgroundBudget;

import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

/**
 * One region-at-a-time pass over a volume under the {@link RegionGate} (the part a resync and a verify share): for
 * each region chosen, in offset order, takes the node's background budget's tokens, takes the region in the gate (writes touching it
 * are held, those in flight complete first), runs the step, leaves the region. Counts the bytes done and the rate
 * over the last seconds. One thread (the resync's or verify's).
 */
final class RegionWalk implements AutoCloseable {
    /** What is done with one region (read it locally, write it to a target, or compare the copies). */
    interface Step {
        /** @param lengthBytes the region's length (less than the region size at the volume's end) */
        void region(int index, long offsetBytes, int lengthBytes) throws Exception;
    }

    /** The walk was stopped (role change, deposition, close). */
    static final class StoppedException extends Exception {
        StoppedException() {
            super("stopped");
        }
    }

    private static final long SAMPLE_NS = 500_000_000L;
    private static final int SAMPLES = 10; // rate over the last 5 s

    private final RegionGate gate;
    private final BackgroundBudget budget;
    private final BooleanSupplier stop;
    private final long boundNs;
    private final long volumeBytes;
    private final long[] sampleNs = new long[SAMPLES];
    private final long[] sampleBytes = new long[SAMPLES];
    private int sample;
    private int walker = -1;
    private volatile long doneBytes;
    private volatile long bytesPerSecond;

    /** @param boundNs longest wait for the writes of a region, or of the host queues at the start */
    RegionWalk(ReplicaSet set, BackgroundBudget budget, BooleanSupplier stop, long boundNs) {
        this.gate = set.gate();
        this.budget = budget;
        this.stop = stop;
        this.boundNs = boundNs;
        this.volumeBytes = set.volumeBytes();
    }

    /** Region size, bytes. */
    long regionBytes() {
        return gate.regionBytes();
    }

    int regionCount() {
        return (int) ((volumeBytes + gate.regionBytes() - 1) / gate.regionBytes());
    }

    /** Length of region {@code index}, bytes. */
    int lengthOf(int index) {
        return (int) Math.min(gate.regionBytes(), volumeBytes - index * gate.regionBytes());
    }

    /** Starts counting the volume's writes (waits until none admitted uncounted is in flight). */
    void open() throws TimeoutException {
        walker = gate.openWalker(boundNs, stop);
    }

    /** Waits until every host queue polled once (every write that read an older view has marked its bits). */
    void barrier() throws TimeoutException {
        gate.barrier(boundNs, stop);
    }

    /** Runs {@code step} for each region {@code include} accepts, in order. */
    void run(IntPredicate include, Step step) throws Exception {
        if (walker < 0) {
            throw new IllegalStateException("walk not opened");
        }
        long region = gate.regionBytes();
        int count = regionCount();
        sampleNs[0] = System.nanoTime();
        for (int r = 0; r < count; r++) {
            if (!include.test(r)) {
                continue;
            }
            if (stop.getAsBoolean()) {
                throw new StoppedException();
            }
            int length = lengthOf(r);
            if (!budget.acquire(length, stop)) {
                throw new StoppedException();
            }
            gate.enter(walker, r, boundNs, stop);
            try {
                step.region(r, r * region, length);
            } finally {
                gate.leave(walker);
            }
            doneBytes += length;
            rate();
        }
    }

    private void rate() {
        long now = System.nanoTime();
        if (now - sampleNs[sample] < SAMPLE_NS) {
            return;
        }
        sample = (sample + 1) % SAMPLES;
        sampleNs[sample] = now;
        sampleBytes[sample] = doneBytes;
        int oldest = (sample + 1) % SAMPLES;
        if (sampleNs[oldest] == 0) {
            oldest = 0;
        }
        long dt = now - sampleNs[oldest];
        bytesPerSecond = dt <= 0 ? 0 : (long) ((doneBytes - sampleBytes[oldest]) * 1e9 / dt);
    }

    /** Bytes done so far. */
    long doneBytes() {
        return doneBytes;
    }

    /** Rate over the last few seconds, bytes/s (0 = not known yet). */
    long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Stops counting (the last walk of the volume). Idempotent. */
    @Override
    public void close() {
        if (walker >= 0) {
            gate.closeWalker(walker);
            walker = -1;
        }
    }
}
