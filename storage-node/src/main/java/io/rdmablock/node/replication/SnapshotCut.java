package io.rdmablock.node.replication;

import io.rdmablock.node.resync.RegionGate;
import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.node.store.Snapshots;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A snapshot of a replicated volume, taken by its primary as one cut on every in-sync copy (docs/snapshots.md,
 * "Replicated volumes"):
 * <ol>
 *   <li>hold every write of the volume ({@link RegionGate#holdAll}): new host writes wait in their queues, and the
 *       hold is in place once every write admitted before has completed on every copy it went to. From then on no
 *       write is in flight on any copy: each holds exactly the writes acknowledged or in the past;</li>
 *   <li>ask every in-sync secondary to take snapshot {@code id} ({@link ForwardLink#copySnapshot}, the vendor admin
 *       command {@code ADMIN_COPY_SNAPSHOT}) and take it on the local copy meanwhile;</li>
 *   <li>let the writes go on.</li>
 * </ol>
 * All or nothing: when any in-sync copy (or the local store) fails, the snapshot is deleted again from every copy
 * that took it and the attempt fails; the caller tries again later (every copy then replaces an id it still holds).
 * The primary takes its own under the copy name ({@link Snapshots#copyName}) and gives it its name only once every
 * in-sync copy confirmed: a snapshot held under a copy name may be incomplete (a primary killed during the cut, or a
 * secondary promoted since), and is not reported as taken; the next attempt takes it again on every copy.
 * Writes are held for the drain, the slowest copy's snapshot (an fdatasync and a synced RocksDB batch) and one
 * admin round trip.
 *
 * <p>Blocking: on the node's agent thread, never a poller.
 */
public final class SnapshotCut {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotCut.class);

    private final ReplicaSet set;
    private final Snapshots local;
    private final long boundNs;

    /**
     * @param set     the volume's copies (this node is its primary)
     * @param local   this node's snapshots
     * @param boundMs longest wait for the writes in flight to complete and for each secondary's answer, ms
     */
    public SnapshotCut(ReplicaSet set, Snapshots local, long boundMs) {
        this.set = set;
        this.local = local;
        this.boundNs = TimeUnit.MILLISECONDS.toNanos(boundMs);
    }

    /**
     * Takes snapshot {@code id} named {@code name} on every in-sync copy at one cut.
     *
     * @return the local copy's snapshot
     * @throws IllegalStateException when the writes did not drain, a copy refused or did not answer, or this node
     *                               is no longer primary; nothing is left taken
     */
    public SnapshotInfo take(long id, String name) {
        String volume = set.volumeId();
        List<Taken> asked = new ArrayList<>();
        SnapshotInfo mine = null;
        RuntimeException failure = null;
        long t0 = System.nanoTime();
        long heldNs;
        ReplicaSet.View view;
        try (RegionGate.Hold ignored = set.gate().holdAll(boundNs, set::closed)) {
            long drainedNs = System.nanoTime() - t0;
            view = set.view();
            if (set.deposed()) {
                throw new IllegalStateException("no longer primary of volume " + volume);
            }
            for (ReplicaSet.Copy c : view.copies()) {
                if (c != null && view.isInSync(c.index)) {
                    asked.add(new Taken(c, c.link.copySnapshot(view.epoch(), id, false, boundNs)));
                }
            }
            try {
                mine = local.takeCopy(volume, id); // under its copy name until every copy confirmed
            } catch (RuntimeException e) {
                failure = e;
            }
            for (Taken t : asked) {
                t.settle(boundNs);
                if (!t.ok() && failure == null) {
                    failure = new IllegalStateException("copy on node " + t.copy.nodeId + " did not take it: "
                            + t.why);
                }
            }
            heldNs = System.nanoTime() - t0;
            LOG.info("replicated snapshot cut: volume={}, id={}, epoch={}, copies={}, drainUs={}, heldUs={}, ok={}",
                    volume, id, view.epoch(), asked.size() + 1, drainedNs / 1000, heldNs / 1000, failure == null);
        } catch (TimeoutException e) {
            throw new IllegalStateException("snapshot " + name + " of volume " + volume + " not taken: "
                    + e.getMessage());
        }
        if (failure == null) {
            try {
                return local.rename(volume, id, name); // the cut is confirmed: reported as taken from now on
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        undo(volume, id, mine != null, asked);
        throw failure instanceof IllegalStateException ise ? ise
                : new IllegalStateException("snapshot " + name + " of volume " + volume + " not taken: " + failure,
                failure);
    }

    /**
     * Deletes snapshot {@code id} from every copy of the volume: the secondaries first (every in-sync one must
     * confirm; the others are asked once, best effort), then the local copy. No hold: a delete changes no data.
     *
     * @throws IllegalStateException when an in-sync copy did not confirm, or a read-only view of the local snapshot
     *                               is open (an export; nothing asked of the copies) (the local snapshot is kept:
     *                               the caller tries again)
     */
    public void delete(long id) {
        local.checkNotInUse(set.volumeId(), id); // an export reads it here: keep every copy until it ended
        ReplicaSet.View view = set.view();
        List<Taken> asked = new ArrayList<>();
        for (ReplicaSet.Copy c : view.copies()) {
            if (c != null && !c.removed) {
                asked.add(new Taken(c, c.link.copySnapshot(view.epoch(), id, true, boundNs)));
            }
        }
        for (Taken t : asked) {
            t.settle(boundNs);
            if (!t.ok() && view.isInSync(t.copy.index)) {
                throw new IllegalStateException("snapshot id " + id + " of volume " + set.volumeId()
                        + " not deleted: copy on node " + t.copy.nodeId + ": " + t.why);
            }
        }
        local.deleteById(set.volumeId(), id);
    }

    /** Deletes a failed cut's snapshot from every copy that took it (best effort: a copy missed replaces it later). */
    private void undo(String volume, long id, boolean mine, List<Taken> asked) {
        if (mine) {
            try {
                local.deleteById(volume, id);
            } catch (RuntimeException e) {
                LOG.warn("failed snapshot cut not undone locally: volume={}, id={}: {}", volume, id, e.toString());
            }
        }
        long epoch = set.view().epoch();
        for (Taken t : asked) {
            if (t.ok()) {
                Taken undo = new Taken(t.copy, t.copy.link.copySnapshot(epoch, id, true, boundNs));
                undo.settle(boundNs);
                if (!undo.ok()) {
                    LOG.warn("failed snapshot cut not undone on node {}: volume={}, id={}: {}", t.copy.nodeId,
                            volume, id, undo.why);
                }
            }
        }
    }

    /** One secondary's answer. */
    private static final class Taken {
        final ReplicaSet.Copy copy;
        final CompletableFuture<Integer> answer;
        String why;

        Taken(ReplicaSet.Copy copy, CompletableFuture<Integer> answer) {
            this.copy = copy;
            this.answer = answer;
        }

        void settle(long boundNs) {
            try {
                int status = answer.get(boundNs, TimeUnit.NANOSECONDS);
                why = status == 0 ? null : "NVMe status 0x" + Integer.toHexString(status);
            } catch (TimeoutException e) {
                why = "no answer within " + boundNs / 1_000_000 + " ms";
            } catch (java.util.concurrent.ExecutionException e) {
                why = String.valueOf(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                why = "interrupted";
            }
        }

        boolean ok() {
            return why == null;
        }
    }
}
