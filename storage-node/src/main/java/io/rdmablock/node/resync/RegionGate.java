package io.rdmablock.node.resync;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Region exclusion between a volume's live writes and the region walks of its resyncs and verifies
 * (docs/resync.md, "No copied region older than a write"): while a walker works on region R (copy it to a target,
 * or read it from every copy), a live write touching R is held; the walker starts R only once every live write
 * touching R admitted before has completed everywhere.
 *
 * <p>Data path (the host queues' pollers, {@link io.rdmablock.node.replication.ReplicatedWrites}): one volatile read of {@link #state()} per
 * write; only while a walk runs ({@link #active}) a write also increments the striped in-flight counter of each
 * region it touches ({@link #tryEnter}: {@value #STRIPES} stripes, region index modulo) and reads the walkers'
 * regions; no lock. Writes admitted while no walk ran are not counted: {@link #openWalker} waits until every
 * registered writer has published that none of those is still in flight ({@link Writer#drainedState()}).
 *
 * <p>Regions are {@link #regionBytes()} long (64 KiB, the bitmap's); at most {@value #WALKERS} walkers per volume.
 */
public final class RegionGate {
    /** Stripes of the in-flight counters. */
    static final int STRIPES = 64;
    /** Walkers (resyncs and verifies) of one volume at once. */
    static final int WALKERS = 4;
    private static final long IDLE = -1;
    /** A walker's region that holds every write of the volume ({@link #holdAll}). */
    private static final long ALL = -2;

    /** A hold of every write of the volume ({@link #holdAll}); {@link #close} lets them go on. */
    public interface Hold extends AutoCloseable {
        @Override
        void close();
    }

    /** A host queue's write side, as the gate sees it. */
    public interface Writer {
        /** The last {@link #state()} this writer saw with none of its uncounted writes in flight. */
        int drainedState();
    }

    private final long regionBytes;
    private final AtomicIntegerArray inFlight = new AtomicIntegerArray(STRIPES);
    private final AtomicLongArray walking = new AtomicLongArray(WALKERS);
    private final boolean[] walkerUsed = new boolean[WALKERS];
    private final CopyOnWriteArrayList<Writer> writers = new CopyOnWriteArrayList<>();
    /** generation << 1 | (1 while a walk runs). */
    private volatile int state;
    private int walkers;

    /** @param regionBytes region size, bytes, a power of two */
    public RegionGate(long regionBytes) {
        this.regionBytes = regionBytes;
        for (int i = 0; i < WALKERS; i++) {
            walking.set(i, IDLE);
        }
    }

    public long regionBytes() {
        return regionBytes;
    }

    /** One volatile read: the data path's check. */
    public int state() {
        return state;
    }

    /** True when {@code state} says a walk runs (writes are counted). */
    public static boolean active(int state) {
        return (state & 1) != 0;
    }

    public void register(Writer w) {
        writers.add(w);
    }

    public void unregister(Writer w) {
        writers.remove(w);
    }

    /**
     * Counts a write of {@code [offset, offset + length)} as in flight, unless a walker is on one of its regions.
     *
     * @return true when admitted (call {@link #exit} when it completed everywhere), false when it must be held
     *         (nothing counted; try again later)
     */
    public boolean tryEnter(long offset, long length) {
        if (length <= 0) {
            return true;
        }
        long first = offset / regionBytes;
        long last = (offset + length - 1) / regionBytes;
        long end = Math.min(last, first + STRIPES - 1);
        for (long r = first; r <= end; r++) {
            inFlight.incrementAndGet((int) (r % STRIPES));
        }
        for (int w = 0; w < WALKERS; w++) {
            long r = walking.get(w);
            if (r == ALL || r != IDLE && r >= first && r <= last) {
                exit(offset, length);
                return false;
            }
        }
        return true;
    }

    /** The write admitted by {@link #tryEnter} with the same range completed everywhere. */
    public void exit(long offset, long length) {
        if (length <= 0) {
            return;
        }
        long first = offset / regionBytes;
        long last = (offset + length - 1) / regionBytes;
        long end = Math.min(last, first + STRIPES - 1);
        for (long r = first; r <= end; r++) {
            inFlight.decrementAndGet((int) (r % STRIPES));
        }
    }

    /**
     * Starts counting writes and waits until no uncounted write is in flight.
     *
     * @return the walker id for {@link #enter} and {@link #closeWalker}
     * @throws TimeoutException when no walker id is free, or the writers did not drain within {@code boundNs}
     */
    int openWalker(long boundNs, BooleanSupplier stop) throws TimeoutException {
        int id = -1;
        synchronized (this) {
            for (int i = 0; i < WALKERS && id < 0; i++) {
                if (!walkerUsed[i]) {
                    walkerUsed[i] = true;
                    id = i;
                }
            }
            if (id < 0) {
                throw new TimeoutException("already " + WALKERS + " walks on this volume");
            }
            if (walkers++ == 0) {
                state = (((state >>> 1) + 1) << 1) | 1;
            }
        }
        try {
            awaitWriters(boundNs, stop);
        } catch (TimeoutException e) {
            closeWalker(id);
            throw e;
        }
        return id;
    }

    /**
     * Waits until every registered writer polled after this call (so every write that read an older view of the set
     * has finished its admission: marked its bits, chosen its copies). Only while a walk runs.
     *
     * @throws TimeoutException when they did not within {@code boundNs}
     */
    void barrier(long boundNs, BooleanSupplier stop) throws TimeoutException {
        synchronized (this) {
            state = (((state >>> 1) + 1) << 1) | (state & 1);
        }
        awaitWriters(boundNs, stop);
    }

    private void awaitWriters(long boundNs, BooleanSupplier stop) throws TimeoutException {
        long deadline = System.nanoTime() + boundNs;
        for (Writer w : writers) {
            while (w.drainedState() != state && writers.contains(w)) {
                if (stop.getAsBoolean() || System.nanoTime() - deadline > 0) {
                    throw new TimeoutException("host queues did not drain their writes within "
                            + boundNs / 1_000_000 + " ms");
                }
                LockSupport.parkNanos(500_000L);
            }
        }
    }

    /**
     * Holds every write of the volume and returns once every write admitted before has completed everywhere (the
     * local copy and every copy it went to): a replicated snapshot's cut (docs/snapshots.md, "Replicated volumes").
     * Writes arriving meanwhile are held in their queues ({@code Phase.HELD}), never failed; FLUSH (no range) goes on.
     * Uses one walker id until {@link Hold#close}.
     *
     * @throws TimeoutException when no walker id is free or the writes did not complete within {@code boundNs}
     *                          (nothing is held any more)
     */
    public Hold holdAll(long boundNs, BooleanSupplier stop) throws TimeoutException {
        long deadline = System.nanoTime() + boundNs;
        int id = openWalker(boundNs, stop);
        walking.set(id, ALL);
        try {
            for (int stripe = 0; stripe < STRIPES; stripe++) {
                for (int spins = 0; inFlight.get(stripe) != 0; spins++) {
                    if (stop.getAsBoolean() || System.nanoTime() - deadline > 0) {
                        throw new TimeoutException("writes still in flight after " + boundNs / 1_000_000 + " ms");
                    }
                    if (spins > 100) {
                        LockSupport.parkNanos(20_000L);
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }
        } catch (TimeoutException e) {
            closeWalker(id);
            throw e;
        }
        return () -> closeWalker(id);
    }

    /** Ends walker {@code id}; the last one stops the counting. */
    synchronized void closeWalker(int id) {
        walking.set(id, IDLE);
        walkerUsed[id] = false;
        if (--walkers == 0) {
            state = state & ~1;
        }
    }

    /**
     * Walker {@code id} takes region {@code region}: from now on writes touching it are held; returns once every
     * counted write of its stripe completed.
     *
     * @throws TimeoutException when they did not within {@code boundNs} (the region is released again)
     */
    void enter(int id, long region, long boundNs, BooleanSupplier stop) throws TimeoutException {
        walking.set(id, region);
        int stripe = (int) (region % STRIPES);
        long deadline = System.nanoTime() + boundNs;
        for (int spins = 0; inFlight.get(stripe) != 0; spins++) {
            if (stop.getAsBoolean() || System.nanoTime() - deadline > 0) {
                walking.set(id, IDLE);
                throw new TimeoutException("writes to region " + region + " still in flight after "
                        + boundNs / 1_000_000 + " ms");
            }
            if (spins > 100) {
                LockSupport.parkNanos(50_000L);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** Walker {@code id} is done with its region: held writes go on at their next poll. */
    void leave(int id) {
        walking.set(id, IDLE);
    }

    /** Writes counted in flight in region {@code region}'s stripe (tests). */
    int inFlight(long region) {
        return inFlight.get((int) (region % STRIPES));
    }
}
