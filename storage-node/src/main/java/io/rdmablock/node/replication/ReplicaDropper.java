package io.rdmablock.node.replication;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.locks.LockSupport;

/**
 * The dropper of one {@link ReplicaSet}: the thread ({@code replica-drop-<volumeId>}, a daemon) that acts on what the
 * data path reports, with the set's {@link ReplicaSet.Dropper} (the blocking calls to the management plane).
 *
 * <ul>
 *   <li>A copy that failed ({@link #reportFailure}, once per copy while it is in sync): its missed-regions bitmap is
 *   created durably (empty, since epoch + 1), then the compare-and-set marks it stale at the view's epoch
 *   ({@link ReplicaSet.Dropper#markStale}); on success the set publishes the view without it
 *   ({@link ReplicaSet#dropped}). Refused as not primary: the set is deposed.</li>
 *   <li>A secondary refused this primary's current epoch ({@link #reportFenced}): the record is read
 *   ({@link ReplicaSet.Dropper#primacy}); another primary deposes the set, a higher epoch with this node still
 *   primary is applied ({@link ReplicaSet#apply(long, int, java.util.Map)}).</li>
 * </ul>
 *
 * <p>Holds the thread and the pending fence check (flag and the refused command's epoch). A call that fails is tried
 * again after a back-off of 50 ms, doubled up to 1 s; with nothing to do the thread parks for up to 200 ms (a report
 * wakes it at once). It stops when the set is closed ({@link #wake} then lets it see that). Logs under
 * {@link ReplicaSet}'s category.
 */
final class ReplicaDropper {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSet.class);

    private final ReplicaSet set;
    private final ReplicaSet.Dropper dropper;
    private final Thread thread;
    /** A secondary refused a command as of an older epoch than its own: the record must be read. */
    private volatile boolean fenceCheck;
    /** The epoch of the refused command (the view's then). */
    private volatile long fenceEpoch;

    ReplicaDropper(ReplicaSet set, ReplicaSet.Dropper dropper) {
        this.set = set;
        this.dropper = dropper;
        this.thread = new Thread(this::dropLoop, "replica-drop-" + set.volumeId());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Unparks the thread (a report, or the set closed). */
    void wake() {
        LockSupport.unpark(thread);
    }

    /** {@link ReplicaSet#reportFailure}: start dropping {@code copy} (once per copy). Any thread; never blocks. */
    void reportFailure(ReplicaSet.Copy copy, long epoch, String reason) {
        if (!copy.failureReported && set.view().isInSync(copy.index)) {
            copy.failureReported = true;
            LOG.warn("replica failed: volume={}, node={}, epoch={}: {}; dropping it from the in-sync set",
                    set.volumeId(), copy.nodeId, epoch, reason);
            LockSupport.unpark(thread);
        }
    }

    /** {@link ReplicaSet#reportFenced}: read the record (once until settled). Any thread; never blocks. */
    void reportFenced(ReplicaSet.Copy copy, long epoch) {
        if (!fenceCheck) {
            fenceEpoch = epoch;
            fenceCheck = true;
            LOG.warn("replica refused this primary's epoch: volume={}, node={}, epoch={}; reading the record",
                    set.volumeId(), copy.nodeId, epoch);
            LockSupport.unpark(thread);
        }
    }

    private void dropLoop() {
        long backoffNs = 50_000_000L;
        while (!set.closed()) {
            if (fenceCheck && !set.deposed()) {
                try {
                    if (checkFence()) {
                        backoffNs = 50_000_000L;
                        continue;
                    }
                } catch (RuntimeException e) {
                    LOG.warn("record not read yet (the refused commands wait): volume={}: {}", set.volumeId(),
                            e.toString());
                }
                LockSupport.parkNanos(set, backoffNs);
                backoffNs = Math.min(1_000_000_000L, backoffNs * 2);
                continue;
            }
            ReplicaSet.Copy pending = null;
            ReplicaSet.View v = set.view();
            for (ReplicaSet.Copy c : v.copies()) {
                if (c.failureReported && v.isInSync(c.index)) {
                    pending = c;
                    break;
                }
            }
            if (pending == null) {
                LockSupport.parkNanos(set, 200_000_000L);
                continue;
            }
            try {
                if (pending.missed == null) {
                    // durable before the CAS: once the record says stale, a crash must not lose what it missed
                    pending.missed = set.bitmaps.fresh(pending.nodeId, v.epoch() + 1);
                }
                long newEpoch = dropper.markStale(pending.nodeId, v.epoch());
                set.dropped(pending, newEpoch);
                backoffNs = 50_000_000L;
            } catch (ReplicaSet.NotPrimaryException e) {
                set.depose("the management plane refused to drop " + pending.nodeId + ": " + e.getMessage());
                LockSupport.parkNanos(set, 200_000_000L);
            } catch (RuntimeException e) {
                LOG.warn("dropping replica not confirmed yet (writes it missed wait): volume={}, node={}, epoch={}: "
                        + "{}", set.volumeId(), pending.nodeId, v.epoch(), e.toString());
                LockSupport.parkNanos(set, backoffNs);
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
        // a heartbeat or a drop moved the view on meanwhile: the command is resent
        if (set.view().epoch() > fenceEpoch) {
            fenceCheck = false;
            return true;
        }
        ReplicaSet.Primacy p = dropper.primacy();
        ReplicaSet.View v = set.view();
        if (!p.primary()) {
            set.depose("the record at epoch " + p.epoch() + " names another primary");
            fenceCheck = false;
            return true;
        }
        if (p.epoch() > v.epoch()) {
            set.apply(p.epoch(), p.minInSync(), p.inSync());
            fenceCheck = false;
            return true;
        }
        return false; // still primary at this epoch: the secondary's epoch is from a change not yet visible
    }
}
