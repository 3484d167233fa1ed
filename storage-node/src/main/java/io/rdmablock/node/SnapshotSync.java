package io.rdmablock.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.SnapshotReport;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.SnapshotCut;
import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.node.store.Snapshots;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the snapshots the management server asks of this node's primary copies ({@link DesiredVolume#snapshots()},
 * docs/snapshots.md): takes each one the store does not hold (through the volume's write barrier, idempotent by id)
 * and deletes each one marked for deletion; reports what the store holds ({@link #reports}). A replicated volume's
 * snapshot is taken as one cut on every in-sync copy and deleted from every copy ({@link SnapshotCut}): the primary
 * holds one only when every in-sync copy took it. Snapshots the answer does not mention are kept: an answer from an
 * older server, or one that lost its records, never deletes data.
 */
final class SnapshotSync {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotSync.class);

    private final VolumeStore store;
    /** The volume's copies when this node is its primary of a replicated volume, else null. */
    private final Function<String, ReplicaSet> sets;
    /** Failures logged once per volume and snapshot id. */
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    /**
     * Per volume/id/action: failed attempts and the nanoTime before which the next is not made. A replicated cut holds
     * the volume's writes while it waits for its copies: one that failed (a copy unreachable) is tried again after
     * 1 s, 2 s, 4 s ... up to {@value #RETRY_MAX_MS} ms, so an unreachable copy does not stall the writes at every
     * heartbeat.
     */
    private final Map<String, long[]> retries = new ConcurrentHashMap<>();
    static final long RETRY_MAX_MS = 60_000;

    SnapshotSync(VolumeStore store, Function<String, ReplicaSet> sets) {
        this.store = store;
        this.sets = sets;
    }

    /** Brings volume {@code v}'s snapshots to what {@code dv} asks (a primary only). */
    void apply(DesiredVolume dv, StoreVolume v) {
        if (dv.snapshots().isEmpty() || dv.role() != CopyRole.PRIMARY) {
            return;
        }
        ReplicaSet set = dv.copies().size() > 1 ? sets.apply(v.id()) : null;
        if (dv.copies().size() > 1 && set == null) {
            return; // not serving as the primary of its copies yet: the next answer again
        }
        SnapshotCut cut = set == null ? null : new SnapshotCut(set, store.snapshots(), Snapshots.BARRIER_TIMEOUT_MS);
        Snapshots snaps = store.snapshots();
        List<SnapshotInfo> held = snaps.list(v.id());
        for (DesiredSnapshot d : dv.snapshots()) {
            SnapshotInfo have = held.stream().filter(s -> s.id() == d.id()).findFirst().orElse(null);
            String key = v.id() + "/" + d.id() + "/" + d.delete();
            long[] retry = retries.get(key);
            if (retry != null && System.nanoTime() - retry[1] < 0) {
                continue;
            }
            try {
                if (d.delete() && have != null) {
                    if (cut != null) {
                        cut.delete(have.id());
                    } else {
                        snaps.delete(v.id(), have.name());
                    }
                    LOG.info("snapshot deleted: volume={}, snapshot={}, id={}", dv.name(), have.name(), have.id());
                } else if (!d.delete() && (have == null || Snapshots.isCopyName(have.name()))) {
                    // held under its copy name: taken as a secondary, or by a cut not confirmed on every copy (a
                    // primary killed during it): taken again on every copy; a copy alone is complete by itself
                    SnapshotInfo s = cut != null ? cut.take(d.id(), d.name())
                            : have != null ? snaps.rename(v.id(), d.id(), d.name())
                            : snaps.create(v.id(), d.id(), d.name());
                    LOG.info("snapshot taken: volume={}, snapshot={}, id={}, barrierUs={}", dv.name(), s.name(),
                            s.id(), snaps.lastBarrierNs() / 1000);
                }
                retries.remove(key);
            } catch (RuntimeException e) {
                long[] r = retries.computeIfAbsent(key, k -> new long[2]);
                r[0]++;
                r[1] = System.nanoTime() + Math.min(RETRY_MAX_MS, 1000L << Math.min(16, r[0] - 1)) * 1_000_000L;
                if (logged.add(key)) {
                    LOG.warn("snapshot not {}: volume={}, snapshot={}, id={}: {}", d.delete() ? "deleted" : "taken",
                            dv.name(), d.name(), d.id(), e.getMessage());
                }
            }
        }
    }

    /** What the store holds of volume {@code id}, oldest first (empty for a flat volume). */
    List<SnapshotReport> reports(String id) {
        List<SnapshotReport> out = new ArrayList<>();
        try {
            for (SnapshotInfo s : store.snapshots().list(id)) {
                out.add(new SnapshotReport(s.id(), s.name(), s.createdMs(), s.sizeBytes(), s.exclusiveBytes()));
            }
        } catch (java.util.NoSuchElementException e) {
            // deleted meanwhile
        }
        return out;
    }
}
