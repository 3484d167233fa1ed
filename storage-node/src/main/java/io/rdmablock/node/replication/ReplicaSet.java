package io.rdmablock.node.replication;

import io.rdmablock.node.resync.DirtyRegions;
import io.rdmablock.node.resync.MissedBitmaps;
import io.rdmablock.node.resync.RegionGate;
import io.rdmablock.node.resync.Resyncs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The copies of one volume as its primary sees them: the record's epoch, min-in-sync and which secondaries are in
 * sync, as one immutable {@link View} that the data path reads without a lock (one volatile read per command).
 *
 * <p>Changes: {@link #apply} (the management plane's record, from heartbeats) and {@link #reportFailure} (the data
 * path: a forwarded command failed or timed out). A failure is turned into a compare-and-set at the management
 * plane by the {@link Dropper} on the {@link ReplicaDropper}'s thread, after the copy's missed-regions bitmap was
 * created durably; only when the CAS succeeded (epoch + 1, copy stale) is the new view published. Until then, writes that
 * the copy missed wait ({@link ReplicatedWrites}): nothing is acknowledged on fewer copies than the record says are
 * in sync.
 *
 * <p>The bitmaps of stale copies ({@link DirtyRegions}, file {@code <dir>/<volumeId>.dirty-<nodeId>}) are flushed
 * by the {@link MissedBitmaps} flusher thread when marked; the data path waits for their durable generation.
 */
public final class ReplicaSet implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSet.class);

    /** A secondary copy; {@link #index} is stable for the life of the set (bit of {@link View#inSync}). */
    public static final class Copy {
        public final int index;
        public final String nodeId;
        public final ForwardLink link;
        public volatile DirtyRegions missed;
        volatile boolean failureReported;
        /** The record no longer lists the copy (replaced): a tombstone, its index never reused. */
        public volatile boolean removed;
        /** A live write forwarded to the copy while syncing failed: its resync aborts (set by the data path). */
        public volatile boolean syncAbort;
        /** Its resync is declaring it in sync (Dekker pair with {@link #syncAbort}, see {@link ReplicatedWrites}). */
        public volatile boolean promoting;

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
    public record View(long epoch, int minInSync, long inSync, long syncing, Copy[] copies) {
        public View(long epoch, int minInSync, long inSync, Copy[] copies) {
            this(epoch, minInSync, inSync, 0, copies);
        }

        /** Bit {@link Copy#index} set = that copy is being resynced: it gets every write too, not counted in sync. */
        public boolean isSyncing(int index) {
            return (syncing & (1L << index)) != 0;
        }

        /** Copies every write is forwarded to: in sync or syncing. */
        public long targets() {
            return inSync | syncing;
        }

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
         * Asks the management plane to move {@code nodeId} stale -> syncing at {@code epoch} (docs/resync.md; a copy
         * already syncing is answered as it is). Blocking, on the resync's thread.
         *
         * @throws NotPrimaryException when this node is no longer primary
         * @throws RuntimeException    when refused or unreachable (the resync is tried again later)
         */
        default void markSyncing(String nodeId, long epoch) {
            throw new UnsupportedOperationException("no resync transitions");
        }

        /**
         * Asks the management plane to move {@code nodeId} syncing -> in_sync at {@code epoch}.
         *
         * @return the record's epoch afterwards (epoch + 1)
         * @throws RuntimeException when refused or unreachable (the resync aborts)
         */
        default long markInSync(String nodeId, long epoch) {
            throw new UnsupportedOperationException("no resync transitions");
        }

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
    private final Dropper dropper;
    /** The missed-regions bitmap files of the stale copies and their flusher thread. */
    final MissedBitmaps bitmaps;
    /** The thread that drops failed copies and reads the record when a secondary refused the epoch. */
    private final ReplicaDropper drops;
    private volatile View view;
    private volatile boolean closed;
    /** Set once the management plane showed another primary: every host command is answered ANA Transition. */
    private volatile boolean deposed;
    private volatile Runnable onDeposed = () -> { };
    private final RegionGate gate = new RegionGate(DirtyRegions.DEFAULT_REGION_BYTES);
    private volatile Resyncs resyncs;
    /** Most copies over the set's life (indices are never reused; forward arrays are sized by it). */
    public static final int MAX_COPIES = 16;
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
        this(volumeId, volumeBytes, bitmapDir, epoch, minInSync, secondaries, dropper, true);
    }

    /**
     * As above; {@code trustBitmaps} false (a newly promoted primary: its bitmaps, if any, are from before another
     * primary's writes) marks every stale copy's bitmap full, whatever file is on disk.
     */
    public ReplicaSet(String volumeId, long volumeBytes, Path bitmapDir, long epoch, int minInSync,
                      List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries, Dropper dropper,
                      boolean trustBitmaps) {
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch=" + epoch + ": >= 1");
        }
        if (secondaries.size() > MAX_COPIES) {
            throw new IllegalArgumentException("secondaries=" + secondaries.size() + ": at most " + MAX_COPIES);
        }
        this.volumeId = volumeId;
        this.volumeBytes = volumeBytes;
        this.dropper = dropper;
        this.bitmaps = new MissedBitmaps(this, volumeId, volumeBytes, bitmapDir);
        Copy[] copies = new Copy[secondaries.size()];
        long inSync = 0;
        for (var e : secondaries) {
            Copy c = new Copy(nextIndex++, e.getKey(), e.getValue().getKey());
            copies[c.index] = c;
            if (e.getValue().getValue()) {
                inSync |= 1L << c.index;
            } else {
                c.missed = trustBitmaps ? bitmaps.loadOrFull(c.nodeId, epoch) : bitmaps.full(c.nodeId, epoch);
            }
        }
        this.view = new View(epoch, minInSync, inSync, copies);
        this.drops = new ReplicaDropper(this, dropper);
        bitmaps.start();
        drops.start();
    }

    /** The region exclusion of this volume's writes and walks. */
    public RegionGate gate() {
        return gate;
    }

    /** The volume's size, bytes. */
    public long volumeBytes() {
        return volumeBytes;
    }

    /** Starts resyncing the copies this set shows stale ({@link Resyncs#tick} at each {@link #apply}). */
    public void resyncs(Resyncs r) {
        this.resyncs = r;
        r.tick();
    }

    /** The resyncs of this set, or null when it does not resync. */
    public Resyncs resyncs() {
        return resyncs;
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
        drops.reportFailure(copy, epoch, reason);
    }

    /**
     * The data path saw {@code copy} answer Reservation Conflict to a command sent at {@code epoch}, which is this
     * set's current epoch: the secondary accepted a later epoch this primary does not know (a promotion elsewhere, or
     * a change the record has and this set not yet). The dropper thread reads the record: another primary deposes
     * this set; this node still primary at a higher epoch is adopted (the command is sent again). Any thread.
     */
    public void reportFenced(Copy copy, long epoch) {
        drops.reportFenced(copy, epoch);
    }

    /** True once closed (no longer primary, deleted). */
    public boolean closed() {
        return closed;
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

    /** No longer the volume's primary (seen by the {@link ReplicaDropper}): runs the {@link #onDeposed} action. */
    void depose(String why) {
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
        bitmaps.wake();
    }

    /** The fabric address of {@code nodeId}'s copy is now {@code address} (see {@link ForwardLink#retarget}). */
    public void retarget(String nodeId, java.net.InetSocketAddress address) {
        if (address == null) {
            return;
        }
        for (Copy c : view.copies()) {
            if (c.nodeId.equals(nodeId) && !c.removed) {
                c.link.retarget(address);
            }
        }
    }

    /**
     * The management plane's record: adopts a higher epoch and the copies it shows stale (a copy it shows in sync
     * that this set dropped stays dropped: only resync brings a copy back). Agent thread.
     */
    public void apply(long epoch, int minInSync, Map<String, Boolean> inSyncByNode) {
        apply(epoch, minInSync, inSyncByNode, null);
    }

    /**
     * As {@link #apply(long, int, Map)}; with {@code newLink} non-null the record's copies are followed: a copy this
     * set does not know (a rebuild target) is added stale with a full bitmap (nothing proves what it holds), a copy
     * the record no longer lists is removed (its link closed, its resync stopped, its bitmap deleted). Then starts
     * the resyncs due. Agent thread.
     */
    public void apply(long epoch, int minInSync, Map<String, Boolean> inSyncByNode,
                      java.util.function.Function<String, ForwardLink> newLink) {
        synchronized (this) {
            View v = view;
            if (epoch < v.epoch()) {
                return;
            }
            long inSync = v.inSync();
            long syncing = v.syncing();
            Copy[] copies = v.copies();
            for (Copy c : copies) {
                Boolean s = inSyncByNode.get(c.nodeId);
                if (s == null && newLink != null && !c.removed) {
                    removeCopy(c);
                    inSync &= ~(1L << c.index);
                    syncing &= ~(1L << c.index);
                    continue;
                }
                if ((s == null || !s) && v.isInSync(c.index)) {
                    if (c.missed == null) {
                        c.missed = bitmaps.fresh(c.nodeId, epoch); // it got every write until now
                    }
                    inSync &= ~(1L << c.index);
                }
            }
            if (newLink != null) {
                copies = addCopies(copies, inSyncByNode, newLink, epoch);
            }
            view = new View(epoch, minInSync, inSync, syncing, copies);
        }
        Resyncs r = resyncs;
        if (r != null) {
            r.tick();
        }
    }

    private Copy[] addCopies(Copy[] copies, Map<String, Boolean> record,
                             java.util.function.Function<String, ForwardLink> newLink, long epoch) {
        for (String node : record.keySet()) {
            boolean known = false;
            for (Copy c : copies) {
                known |= c.nodeId.equals(node) && !c.removed;
            }
            if (known) {
                continue;
            }
            if (nextIndex >= MAX_COPIES) {
                LOG.error("copy not added (more than {} copies over this replica set's life): volume={}, node={}",
                        MAX_COPIES, volumeId, node);
                continue;
            }
            Copy c = new Copy(nextIndex++, node, newLink.apply(node));
            c.missed = bitmaps.full(node, epoch); // never in sync with this primary: only a full resync proves it
            copies = java.util.Arrays.copyOf(copies, c.index + 1);
            copies[c.index] = c;
            LOG.info("copy added to the replica set (stale, full resync): volume={}, node={}", volumeId, node);
        }
        return copies;
    }

    private void removeCopy(Copy c) {
        c.removed = true;
        Resyncs r = resyncs;
        if (r != null) {
            r.stop(c);
        }
        c.link.close();
        DirtyRegions d = c.missed;
        c.missed = null;
        if (d != null) {
            d.delete();
        }
        LOG.info("copy removed from the replica set (no longer in the record): volume={}, node={}", volumeId,
                c.nodeId);
    }

    /** Its resync starts: every write is forwarded to {@code c} too from the next command on. */
    public synchronized void startSyncing(Copy c) {
        View v = view;
        view = new View(v.epoch(), v.minInSync(), v.inSync(), v.syncing() | (1L << c.index), v.copies());
    }

    /** Its resync ended without it in sync (abort, stop): writes are no longer forwarded to it. */
    public synchronized void stopSyncing(Copy c) {
        View v = view;
        view = new View(v.epoch(), v.minInSync(), v.inSync(), v.syncing() & ~(1L << c.index), v.copies());
    }

    /**
     * The management plane declared {@code c} in sync at {@code newEpoch}: the view counts it in sync, then its
     * bitmap is deleted.
     */
    public void resynced(Copy c, long newEpoch) {
        synchronized (this) {
            View v = view;
            long bit = 1L << c.index;
            view = new View(Math.max(newEpoch, v.epoch()), v.minInSync(), v.inSync() | bit, v.syncing() & ~bit,
                    v.copies());
            c.failureReported = false;
        }
        DirtyRegions d = c.missed;
        c.missed = null;
        if (d != null) {
            d.delete();
        }
        LOG.info("copy back in sync: volume={}, node={}, epoch={}, copies={}", volumeId, c.nodeId, view.epoch(),
                describe());
    }

    /** Blocking: the management plane's CAS of the copy's state (resync thread). */
    public Dropper dropper() {
        return dropper;
    }

    /** Adopts an epoch the management plane answered (a resync's abort). */
    public synchronized void adoptEpoch(long epoch) {
        View v = view;
        if (epoch > v.epoch()) {
            view = new View(epoch, v.minInSync(), v.inSync(), v.syncing(), v.copies());
        }
    }

    /**
     * The CAS succeeded: the new view (without the copy) is published; its bitmap is durable already. The copy's
     * forward queues are closed by their own pollers when they see the view ({@link ReplicatedWrites#poll}).
     */
    synchronized void dropped(Copy c, long newEpoch) {
        View v = view;
        view = new View(Math.max(newEpoch, v.epoch()), v.minInSync(), v.inSync() & ~(1L << c.index), v.syncing(),
                v.copies());
        LOG.warn("replica dropped from the in-sync set: volume={}, node={}, epoch={} -> {}, inSync={}/{}", volumeId,
                c.nodeId, v.epoch(), view.epoch(), view.inSyncCount(), v.copies().length + 1);
    }

    /** Copies by state, for answers and logs. */
    public List<String> describe() {
        View v = view;
        List<String> out = new ArrayList<>();
        for (Copy c : v.copies()) {
            if (!c.removed) {
                out.add(c.nodeId + "=" + (v.isInSync(c.index) ? "in_sync" : v.isSyncing(c.index) ? "syncing"
                        : "stale"));
            }
        }
        return out;
    }

    /** Stops the threads and closes the links. */
    @Override
    public void close() {
        closed = true;
        Resyncs r = resyncs;
        if (r != null) {
            r.close();
        }
        bitmaps.wake();
        drops.wake();
        for (Copy c : view.copies()) {
            c.link.close();
        }
    }
}
