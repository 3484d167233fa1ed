package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.mgmt.client.ResyncProgress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One resync of one stale copy by the primary (docs/resync.md, "The primary's side"), on its own thread:
 * <ol>
 *   <li>opens its association ({@link CopyChannel}); unreachable: ends, tried again later;</li>
 *   <li>asks the management plane stale -> syncing ({@link ReplicaSet.Dropper#markSyncing});</li>
 *   <li>opens a {@link RegionWalk} (writes counted), puts the copy in the view's syncing set (every write forwarded
 *       to it too), waits until every host queue saw that, and takes a snapshot of the copy's bitmap (all regions
 *       when full);</li>
 *   <li>copies each region of the snapshot (local store into the registered buffer, WRITE to the copy);</li>
 *   <li>asks syncing -> in_sync ({@link ReplicaSet.Dropper#markInSync}); the view then counts it in sync at the new
 *       epoch and its bitmap is deleted.</li>
 * </ol>
 * A failure after step 2 (its association, a region's WRITE, a live write forwarded to it, the CAS) aborts: the copy
 * leaves the syncing set and goes back to stale by the ordinary {@code markStale}, its bits all kept. A stop (role
 * change, deposition, the copy removed, the set closed) ends it at once without any transition.
 */
final class Resync implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Resync.class);

    /** How a resync ended. */
    enum Outcome { RUNNING, IN_SYNC, UNREACHABLE, ABORTED, STOPPED }

    private final ReplicaSet set;
    private final ReplicaSet.Copy copy;
    private final Resyncs.Context ctx;
    private final RegionWalk walk;
    private volatile boolean stopped;
    private volatile String abortReason;
    private volatile boolean full;
    private volatile long totalBytes;
    private volatile Outcome outcome = Outcome.RUNNING;

    Resync(ReplicaSet set, ReplicaSet.Copy copy, Resyncs.Context ctx) {
        this.set = set;
        this.copy = copy;
        this.ctx = ctx;
        this.walk = new RegionWalk(set, ctx.budget(), this::mustStop, ctx.boundNs());
    }

    ReplicaSet.Copy copy() {
        return copy;
    }

    Outcome outcome() {
        return outcome;
    }

    /** Stops at once (no transition asked). Any thread. */
    void stop() {
        stopped = true;
    }

    /** A live write forwarded to the copy failed: abort. Any thread. */
    void abort(String why) {
        if (abortReason == null) {
            abortReason = why;
        }
    }

    private boolean mustStop() {
        return halted() || copy.syncAbort;
    }

    /** Stopped, deposed, closed or removed: end without any transition. */
    private boolean halted() {
        return stopped || set.deposed() || set.closed() || copy.removed;
    }

    /** Progress for the heartbeat, or null before the copy is syncing. */
    ResyncProgress progress() {
        long total = totalBytes;
        return total == 0 && !full ? null : new ResyncProgress(copy.nodeId, full, Math.min(total, walk.doneBytes()),
                total, walk.bytesPerSecond());
    }

    @Override
    public void run() {
        try {
            outcome = resync();
        } catch (RuntimeException e) {
            LOG.error("resync failed: volume={}, node={}", set.volumeId(), copy.nodeId, e);
            outcome = Outcome.ABORTED;
        }
    }

    private Outcome resync() {
        CopyChannel ch;
        try {
            ch = CopyChannel.open(copy, (int) walk.regionBytes(), ctx.timeoutNs(), ctx.openTimeoutNs());
        } catch (Exception e) {
            LOG.info("resync not started, copy unreachable (tried again in {} ms): volume={}, node={}: {}",
                    ctx.retryNs() / 1_000_000, set.volumeId(), copy.nodeId, e.toString());
            return Outcome.UNREACHABLE;
        }
        try (ch; LocalStore local = ctx.local().open()) {
            try {
                set.dropper().markSyncing(copy.nodeId, set.view().epoch());
            } catch (RuntimeException e) {
                LOG.warn("resync not started, stale -> syncing refused: volume={}, node={}: {}", set.volumeId(),
                        copy.nodeId, e.toString());
                return Outcome.UNREACHABLE;
            }
            return copyAll(ch, local);
        }
    }

    private Outcome copyAll(CopyChannel ch, LocalStore local) {
        boolean syncing = false;
        try (walk) {
            walk.open();
            copy.syncAbort = false;
            set.startSyncing(copy);
            syncing = true;
            walk.barrier(); // every write either marked its bits already or is forwarded to the copy
            DirtyRegions d = copy.missed;
            AtomicLongArray snapshot = snapshot(d);
            LOG.info("resync started: volume={}, node={}, {} regions of {} ({})", set.volumeId(), copy.nodeId,
                    totalBytes / walk.regionBytes(), walk.regionCount(), full ? "full" : "incremental");
            walk.run(r -> (snapshot.get(r >>> 6) & (1L << (r & 63))) != 0, (r, offset, length) -> {
                local.read(offset, ch.buffer().asSlice(0, length));
                ch.io(CopyChannel.WRITE, ctx.nsid(), set.view().epoch(), offset, length, ctx.lbaSize());
                ctx.copiedBytes().add(length);
            });
            copy.promoting = true; // before reading syncAbort: a live write's failure is seen here or waits for us
            try {
                if (copy.syncAbort || mustStop()) {
                    throw copy.syncAbort ? new IllegalStateException("a live write to it failed: " + abortReason)
                            : new RegionWalk.StoppedException();
                }
                long epoch = set.dropper().markInSync(copy.nodeId, set.view().epoch());
                set.resynced(copy, epoch);
                syncing = false;
            } finally {
                copy.promoting = false;
            }
            LOG.info("resync done, copy in sync: volume={}, node={}, copied {} bytes", set.volumeId(), copy.nodeId,
                    walk.doneBytes());
            return Outcome.IN_SYNC;
        } catch (Exception e) {
            if (!halted()) {
                return abort(syncing, e instanceof RegionWalk.StoppedException
                        ? "a live write forwarded to it failed: " + abortReason : e.toString());
            }
            LOG.warn("resync stopped: volume={}, node={} (role change, deposition or the copy removed)",
                    set.volumeId(), copy.nodeId);
            if (syncing) {
                set.stopSyncing(copy);
            }
            return Outcome.STOPPED;
        }
    }

    private AtomicLongArray snapshot(DirtyRegions d) {
        int regions = walk.regionCount();
        AtomicLongArray s = new AtomicLongArray((regions + 63) / 64);
        int marked = 0;
        long bytes = 0;
        for (int r = 0; r < regions; r++) {
            if (d == null || d.isMarked(r)) {
                s.set(r >>> 6, s.get(r >>> 6) | (1L << (r & 63)));
                marked++;
                bytes += walk.lengthOf(r);
            }
        }
        full = marked == regions;
        totalBytes = bytes;
        return s;
    }

    /** Back to stale (its bits kept): out of the syncing set, then the CAS syncing -> stale. */
    private Outcome abort(boolean syncing, String why) {
        LOG.warn("resync aborted: volume={}, node={}: {}; copy back to stale, its bits kept", set.volumeId(),
                copy.nodeId, why);
        if (!syncing) {
            return Outcome.ABORTED;
        }
        set.stopSyncing(copy);
        try {
            set.adoptEpoch(set.dropper().markStale(copy.nodeId, set.view().epoch()));
        } catch (RuntimeException e) {
            LOG.warn("abort not confirmed by the management plane (its next resync asks syncing again): volume={}, "
                    + "node={}: {}", set.volumeId(), copy.nodeId, e.toString());
        }
        return Outcome.ABORTED;
    }
}
