package io.rdmablock.node.replica;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The copies of one volume as its primary sees them: the record's epoch, min-in-sync and which secondaries are in
 * sync, as one immutable {@link View} that the data path reads without a lock (one volatile read per command).
 *
 * <p>Changes: {@link #apply} (the management plane's record, from heartbeats) and {@link #reportFailure} (the data
 * path: a forwarded command failed or timed out). A failure is turned into a compare-and-set at the management
 * plane by the {@link Dropper} on its own thread; only when it succeeded (epoch + 1, copy stale) is the copy's
 * missed-regions bitmap created durably and the new view published. Until then, writes that the copy missed wait
 * ({@link ReplicatedWrites}): nothing is acknowledged on fewer copies than the record says are in sync.
 *
 * <p>The bitmaps of stale copies ({@link DirtyRegions}, file {@code <dir>/<volumeId>.dirty-<nodeId>}) are flushed
 * by the {@link #flusher} thread when marked; the data path waits for their durable generation.
 */
public final class ReplicaSet implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSet.class);

    /** A secondary copy; {@link #index} is stable for the life of the set (bit of {@link View#inSync}). */
    public static final class Copy {
        public final int index;
        public final String nodeId;
        final ForwardLink link;
        volatile DirtyRegions missed;
        volatile boolean failureReported;

        Copy(int index, String nodeId, ForwardLink link) {
            this.index = index;
            this.nodeId = nodeId;
            this.link = link;
        }

        /** The missed-regions bitmap while stale, else null. */
        public DirtyRegions missed() {
            return missed;
        }
    }

    /**
     * What the primary acts on: {@code epoch} (put in every forwarded command), {@code minInSync} (counting the
     * primary), {@code inSync} (bit {@link Copy#index} set = that secondary is in sync, gets every write).
     */
    public record View(long epoch, int minInSync, long inSync, Copy[] copies) {
        /** Copies in sync, the primary included. */
        public int inSyncCount() {
            return 1 + Long.bitCount(inSync);
        }

        public boolean isInSync(int index) {
            return (inSync & (1L << index)) != 0;
        }
    }

    /** Does the compare-and-set that drops a copy; blocking, run on the dropper thread. */
    public interface Dropper {
        /**
         * Asks the management plane to mark {@code nodeId} stale at {@code epoch}.
         *
         * @return the record's epoch afterwards (epoch + 1 on success, or the current one when the record had moved
         *         on and already shows the copy stale)
         * @throws RuntimeException when the management plane cannot be reached or refuses (retried)
         */
        long markStale(String nodeId, long epoch);

        /**
         * Reads the management plane's record of the volume (a secondary refused this primary's epoch as stale,
         * docs/failover.md "Old primary"). Blocking, on the dropper thread.
         *
         * @throws RuntimeException when the management plane cannot be reached (retried)
         */
        default Primacy primacy() {
            throw new UnsupportedOperationException("no record reader: cannot tell whether this node is still primary");
        }
    }

    /**
     * The record as the management plane has it: its epoch, whether it still names this node primary, its
     * min-in-sync and which secondaries it shows in sync.
     */
    public record Primacy(long epoch, boolean primary, int minInSync, Map<String, Boolean> inSync) {
    }

    /**
     * Thrown by a {@link Dropper} when the management plane answers that this node is no longer the volume's primary
     * (409 not-primary, or the copy it reports is the primary now): this set is deposed.
     */
    public static final class NotPrimaryException extends RuntimeException {
        public NotPrimaryException(String message) {
            super(message);
        }
    }

    private final String volumeId;
    private final long volumeBytes;
    private final Path bitmapDir;
    private final Dropper dropper;
    private final Thread flusher;
    private final Thread dropperThread;
    private volatile View view;
    private volatile boolean closed;
    /** Set once the management plane showed another primary: every host command is answered ANA Transition. */
    private volatile boolean deposed;
    /** A secondary refused a command as of an older epoch than its own: the record must be read. */
    private volatile boolean fenceCheck;
    /** The epoch of the refused command (the view's then). */
    private volatile long fenceEpoch;
    private volatile Runnable onDeposed = () -> { };
    /** Next index for a new copy (copies are only added in this scope: indices never reused). */
    private int nextIndex;

    /**
     * @param volumeId    the volume's id (bitmap file names)
     * @param volumeBytes size of the volume, bytes (bitmap size)
     * @param bitmapDir   directory of the bitmaps (beside the volume data)
     * @param epoch       the record's epoch, >= 1
     * @param minInSync   the record's min-in-sync, >= 1
     * @param secondaries node id -> (link, in sync?) for every secondary copy in the record, in record order
     */
    public ReplicaSet(String volumeId, long volumeBytes, Path bitmapDir, long epoch, int minInSync,
                      List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries, Dropper dropper) {
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch=" + epoch + ": >= 1");
        }
        if (secondaries.size() > 63) {
            throw new IllegalArgumentException("secondaries=" + secondaries.size() + ": at most 63");
        }
        this.volumeId = volumeId;
        this.volumeBytes = volumeBytes;
        this.bitmapDir = bitmapDir;
        this.dropper = dropper;
        Copy[] copies = new Copy[secondaries.size()];
        long inSync = 0;
        for (var e : secondaries) {
            Copy c = new Copy(nextIndex++, e.getKey(), e.getValue().getKey());
            copies[c.index] = c;
            if (e.getValue().getValue()) {
                inSync |= 1L << c.index;
            } else {
                c.missed = loadOrFull(c.nodeId, epoch);
            }
        }
        this.view = new View(epoch, minInSync, inSync, copies);
        this.flusher = new Thread(this::flushLoop, "replica-bitmaps-" + volumeId);
        this.flusher.setDaemon(true);
        this.dropperThread = new Thread(this::dropLoop, "replica-drop-" + volumeId);
        this.dropperThread.setDaemon(true);
        flusher.start();
        dropperThread.start();
    }

    /** The current view; one volatile read. */
    public View view() {
        return view;
    }

    public String volumeId() {
        return volumeId;
    }

    /**
     * The data path saw {@code copy} fail a command sent at {@code epoch}: start dropping it (once per copy). Any
     * thread; never blocks.
     */
    public void reportFailure(Copy copy, long epoch, String reason) {
        if (!copy.failureReported && view.isInSync(copy.index)) {
            copy.failureReported = true;
            LOG.warn("replica failed: volume={}, node={}, epoch={}: {}; dropping it from the in-sync set", volumeId,
                    copy.nodeId, epoch, reason);
            LockSupport.unpark(dropperThread);
        }
    }

    /**
     * The data path saw {@code copy} answer Reservation Conflict to a command sent at {@code epoch}, which is this
     * set's current epoch: the secondary accepted a later epoch this primary does not know (a promotion elsewhere, or
     * a change the record has and this set not yet). The dropper thread reads the record: another primary deposes
     * this set; this node still primary at a higher epoch is adopted (the command is sent again). Any thread.
     */
    public void reportFenced(Copy copy, long epoch) {
        if (!fenceCheck) {
            fenceEpoch = epoch;
            fenceCheck = true;
            LOG.warn("replica refused this primary's epoch: volume={}, node={}, epoch={}; reading the record",
                    volumeId, copy.nodeId, epoch);
            LockSupport.unpark(dropperThread);
        }
    }

    /** True once the management plane showed that this node is no longer the volume's primary. */
    public boolean deposed() {
        return deposed;
    }

    /** Runs {@code action} (once) when this set is deposed, e.g. the subsystem's ANA Change. */
    public void onDeposed(Runnable action) {
        this.onDeposed = action;
        if (deposed) {
            action.run();
        }
    }

    private void depose(String why) {
        if (deposed) {
            return;
        }
        LOG.warn("no longer the primary of volume {} ({}): host commands are answered ANA Transition until the next "
                + "heartbeat makes this copy a secondary", volumeId, why);
        try {
            onDeposed.run(); // the subsystem shows ANA Change before the first command is answered ANA Transition
        } catch (RuntimeException e) {
            LOG.warn("deposed action failed: volume={}: {}", volumeId, e.toString());
        }
        deposed = true;
    }

    /** Wakes the flusher: a bitmap was marked. Any thread. */
    public void bitmapMarked() {
        LockSupport.unpark(flusher);
    }

    /**
     * The management plane's record: adopts a higher epoch and the copies it shows stale (a copy it shows in sync
     * that this set dropped stays dropped: only resync brings a copy back). Agent thread.
     */
    public synchronized void apply(long epoch, int minInSync, Map<String, Boolean> inSyncByNode) {
        View v = view;
        if (epoch < v.epoch()) {
            return;
        }
        long inSync = v.inSync();
        for (Copy c : v.copies()) {
            Boolean s = inSyncByNode.get(c.nodeId);
            if ((s == null || !s) && v.isInSync(c.index)) {
                if (c.missed == null) {
                    c.missed = fresh(c.nodeId, epoch); // it got every write until now
                }
                inSync &= ~(1L << c.index);
            }
        }
        view = new View(epoch, minInSync, inSync, v.copies());
    }

    private void dropLoop() {
        long backoffNs = 50_000_000L;
        while (!closed) {
            if (fenceCheck && !deposed) {
                try {
                    if (checkFence()) {
                        backoffNs = 50_000_000L;
                        continue;
                    }
                } catch (RuntimeException e) {
                    LOG.warn("record not read yet (the refused commands wait): volume={}: {}", volumeId, e.toString());
                }
                LockSupport.parkNanos(this, backoffNs);
                backoffNs = Math.min(1_000_000_000L, backoffNs * 2);
                continue;
            }
            Copy pending = null;
            View v = view;
            for (Copy c : v.copies()) {
                if (c.failureReported && v.isInSync(c.index)) {
                    pending = c;
                    break;
                }
            }
            if (pending == null) {
                LockSupport.parkNanos(this, 200_000_000L);
                continue;
            }
            try {
                if (pending.missed == null) {
                    // durable before the CAS: once the record says stale, a crash must not lose what it missed
                    pending.missed = fresh(pending.nodeId, v.epoch() + 1);
                }
                long newEpoch = dropper.markStale(pending.nodeId, v.epoch());
                dropped(pending, newEpoch);
                backoffNs = 50_000_000L;
            } catch (NotPrimaryException e) {
                depose("the management plane refused to drop " + pending.nodeId + ": " + e.getMessage());
                LockSupport.parkNanos(this, 200_000_000L);
            } catch (RuntimeException e) {
                LOG.warn("dropping replica not confirmed yet (writes it missed wait): volume={}, node={}, epoch={}: "
                        + "{}", volumeId, pending.nodeId, v.epoch(), e.toString());
                LockSupport.parkNanos(this, backoffNs);
                backoffNs = Math.min(1_000_000_000L, backoffNs * 2);
            }
        }
    }

    /**
     * Reads the record after a secondary refused this primary's epoch.
     *
     * @return true when settled (deposed, or a higher epoch adopted); false to read again after a back-off
     */
    private boolean checkFence() {
        if (view.epoch() > fenceEpoch) { // a heartbeat or a drop moved the view on meanwhile: the command is resent
            fenceCheck = false;
            return true;
        }
        Primacy p = dropper.primacy();
        View v = view;
        if (!p.primary()) {
            depose("the record at epoch " + p.epoch() + " names another primary");
            fenceCheck = false;
            return true;
        }
        if (p.epoch() > v.epoch()) {
            apply(p.epoch(), p.minInSync(), p.inSync());
            fenceCheck = false;
            return true;
        }
        return false; // still primary at this epoch: the secondary's epoch is from a change not yet visible
    }

    /**
     * The CAS succeeded: the new view (without the copy) is published; its bitmap is durable already. The copy's
     * forward queues are closed by their own pollers when they see the view ({@link ReplicatedWrites#poll}).
     */
    private synchronized void dropped(Copy c, long newEpoch) {
        View v = view;
        view = new View(Math.max(newEpoch, v.epoch()), v.minInSync(), v.inSync() & ~(1L << c.index), v.copies());
        LOG.warn("replica dropped from the in-sync set: volume={}, node={}, epoch={} -> {}, inSync={}/{}", volumeId,
                c.nodeId, v.epoch(), view.epoch(), view.inSyncCount(), v.copies().length + 1);
    }

    /** A stale copy's bitmap at start: the persisted one, or all regions when nothing proves what it missed. */
    private DirtyRegions loadOrFull(String nodeId, long epoch) {
        DirtyRegions d = DirtyRegions.load(bitmapFile(nodeId), volumeBytes);
        if (d == null) {
            LOG.warn("no valid missed-regions bitmap for stale copy: volume={}, node={}: every region marked (its "
                    + "resync must be full)", volumeId, nodeId);
            d = DirtyRegions.create(bitmapFile(nodeId), DirtyRegions.DEFAULT_REGION_BYTES, volumeBytes, epoch);
            d.markAll();
            d.flush();
        }
        return d;
    }

    /** An empty bitmap, durable, for a copy that got every write until now. */
    private DirtyRegions fresh(String nodeId, long sinceEpoch) {
        DirtyRegions d = DirtyRegions.create(bitmapFile(nodeId), DirtyRegions.DEFAULT_REGION_BYTES, volumeBytes,
                sinceEpoch);
        d.flush();
        return d;
    }

    private Path bitmapFile(String nodeId) {
        return bitmapDir.resolve(volumeId + ".dirty-" + nodeId);
    }

    private void flushLoop() {
        while (!closed) {
            boolean any = false;
            for (Copy c : view.copies()) {
                DirtyRegions d = c.missed;
                if (d != null && d.needsFlush()) {
                    try {
                        d.flush();
                    } catch (RuntimeException e) {
                        LOG.error("missed-regions bitmap not written (writes to that copy's regions wait): volume={},"
                                + " node={}: {}", volumeId, c.nodeId, e.toString());
                        LockSupport.parkNanos(this, 100_000_000L);
                    }
                    any = true;
                }
            }
            if (!any) {
                LockSupport.parkNanos(this, 100_000_000L);
            }
        }
    }

    /** Copies by state, for answers and logs. */
    public List<String> describe() {
        View v = view;
        List<String> out = new ArrayList<>();
        for (Copy c : v.copies()) {
            out.add(c.nodeId + "=" + (v.isInSync(c.index) ? "in_sync" : "stale"));
        }
        return out;
    }

    /** Stops the threads and closes the links. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(flusher);
        LockSupport.unpark(dropperThread);
        for (Copy c : view.copies()) {
            c.link.close();
        }
    }
}
