package io.rdmablock.node;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.SnapshotReport;
import io.rdmablock.node.store.SnapshotInfo;
import io.rdmablock.node.store.Snapshots;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the snapshots the management server asks of this node's primary copies ({@link DesiredVolume#snapshots()},
 * docs/snapshots.md): takes each one the store does not hold (through the volume's write barrier, idempotent by id)
 * and deletes each one marked for deletion; reports what the store holds ({@link #reports}). Only volumes of one copy
 * in this step: the cut of a replicated volume must travel in its write stream, so their desired snapshots are
 * left alone (the management server refuses them). Snapshots the answer does not mention are kept: an answer from an
 * older server, or one that lost its records, never deletes data.
 */
final class SnapshotSync {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotSync.class);

    private final VolumeStore store;
    /** Failures logged once per volume and snapshot id. */
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    SnapshotSync(VolumeStore store) {
        this.store = store;
    }

    /** Brings volume {@code v}'s snapshots to what {@code dv} asks (a primary of one copy only). */
    void apply(DesiredVolume dv, StoreVolume v) {
        if (dv.snapshots().isEmpty() || dv.role() != CopyRole.PRIMARY || dv.copies().size() > 1) {
            return;
        }
        Snapshots snaps = store.snapshots();
        List<SnapshotInfo> held = snaps.list(v.id());
        for (DesiredSnapshot d : dv.snapshots()) {
            SnapshotInfo have = held.stream().filter(s -> s.id() == d.id()).findFirst().orElse(null);
            try {
                if (d.delete() && have != null) {
                    snaps.delete(v.id(), have.name());
                    LOG.info("snapshot deleted: volume={}, snapshot={}, id={}", dv.name(), have.name(), have.id());
                } else if (!d.delete() && have == null) {
                    SnapshotInfo s = snaps.create(v.id(), d.id(), d.name());
                    LOG.info("snapshot taken: volume={}, snapshot={}, id={}, barrierUs={}", dv.name(), s.name(),
                            s.id(), snaps.lastBarrierNs() / 1000);
                }
            } catch (RuntimeException e) {
                if (logged.add(v.id() + "/" + d.id() + "/" + d.delete())) {
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
