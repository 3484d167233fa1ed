package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.SnapshotRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateSnapshotRequest;
import io.rdmablock.mgmt.client.DesiredSnapshot;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Snapshot;
import io.rdmablock.mgmt.client.SnapshotReport;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The volumes' snapshots (docs/snapshots.md): kept in their {@link VolumeRecord} (so a volume's delete
 * takes them with it), changed by compare-and-set like every other volume change (epoch kept), and carried out by
 * the volume's primary, which gets them in its heartbeat answer ({@link #desired}) and reports what it holds
 * ({@link #reconcile}). A snapshot is {@code creating} until the primary reports its id, then {@code ready}; a delete
 * marks it {@code deleting} and the record goes once the primary no longer reports it. A replicated volume's primary
 * takes it as one cut on every in-sync copy and holds it only when every one of them took it (docs/snapshots.md,
 * "Replicated volumes"), so its report alone decides; a snapshot is asked only while every copy is in sync.
 */
public final class SnapshotLedger {
    /** Default bound of a snapshot create's or delete's wait for the primary's report, ms. */
    public static final long DEFAULT_WAIT_MS = 10_000;
    private final ClusterState s;
    private final Function<VolumeRecord, VolumeState> reportedState;
    private volatile long waitMs = DEFAULT_WAIT_MS;

    SnapshotLedger(ClusterState state, Function<VolumeRecord, VolumeState> reportedState) {
        this.s = state;
        this.reportedState = reportedState;
    }

    /**
     * @return how long a snapshot create or delete waits for the primary's report before answering 202, ms
     *         (default {@value #DEFAULT_WAIT_MS})
     */
    public long waitMs() {
        return waitMs;
    }

    /**
     * Sets {@link #waitMs()} (tests shorten it).
     *
     * @throws IllegalArgumentException when {@code ms} &lt; 0
     */
    public void waitMs(long ms) {
        if (ms < 0) {
            throw Limits.invalid("waitMs", Long.toString(ms), "min=0");
        }
        waitMs = ms;
    }

    /**
     * Records a new snapshot {@code creating}, with the next id and the volume's epoch. Errors, in this order: 400
     * {@link ProblemTypes#VALIDATION} (bad volume or snapshot name, naming the field); 404 no such volume; 409
     * {@link ProblemTypes#VOLUME_DELETING}; 409 {@link ProblemTypes#VOLUME_NOT_READY} (not serving, a copy being
     * moved, or a copy of a replicated volume not in sync); 409
     * {@link ProblemTypes#SNAPSHOT_EXISTS}; 409 {@link ProblemTypes#SNAPSHOT_LIMIT}
     * ({@value Limits#MAX_SNAPSHOTS_PER_VOLUME}); 503 store contention.
     *
     * @return the snapshot as recorded ({@code creating})
     */
    public Snapshot create(String volume, CreateSnapshotRequest request) {
        ClusterService.check(() -> Limits.checkName("name", volume));
        String name = request == null ? null : request.name();
        ClusterService.check(() -> Limits.checkSnapshotName("name", name));
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(volume)
                    .orElseThrow(() -> ApiException.volumeNotFound(volume));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw ClusterState.deleting(v);
            }
            var behind = v.copies().stream().filter(c -> c.state() != CopyState.IN_SYNC).findFirst();
            if (behind.isPresent()) {
                throw new ApiException(409, ProblemTypes.VOLUME_NOT_READY, "Volume not ready", "volume " + volume
                        + " has its copy on node " + behind.get().nodeId() + " " + behind.get().state().wireName()
                        + "; a snapshot of a replicated volume needs every copy in sync (resync and rebuild do not"
                        + " carry snapshots yet: a copy that missed the cut would lack it after a failover)");
            }
            VolumeState state = reportedState.apply(v);
            if (state != VolumeState.READY || v.copies().size() != v.replicas()) {
                throw new ApiException(409, ProblemTypes.VOLUME_NOT_READY, "Volume not ready", "volume " + volume
                        + (v.copies().size() != v.replicas() ? " has a copy being moved to another node"
                        : " is " + state.wireName()) + "; a snapshot needs a ready volume");
            }
            if (v.snapshot(name).isPresent()) {
                throw new ApiException(409, ProblemTypes.SNAPSHOT_EXISTS, "Snapshot exists", "volume " + volume
                        + " has a snapshot named " + name + " (state " + stateName(v.snapshot(name).get()) + ")");
            }
            if (v.snapshots().size() >= Limits.MAX_SNAPSHOTS_PER_VOLUME) {
                throw new ApiException(409, ProblemTypes.SNAPSHOT_LIMIT, "Snapshot limit", "volume " + volume
                        + " holds " + v.snapshots().size() + " snapshots, the limit is "
                        + Limits.MAX_SNAPSHOTS_PER_VOLUME + " per volume; delete one first");
            }
            var snap = new SnapshotRecord(v.nextSnapshotId(), name, s.wallMs.getAsLong(), v.epoch(),
                    SnapshotState.CREATING, 0, 0);
            var list = new ArrayList<>(v.snapshots());
            list.add(snap);
            if (s.compareAndSet(current, v.withSnapshots(list, snap.id() + 1))) {
                return snap.toSnapshot(volume);
            }
        }
        throw ClusterState.contention(volume, "recording snapshot " + name);
    }

    /** @return the volume's snapshots, oldest first; 400 bad name, 404 no such volume */
    public List<Snapshot> list(String volume) {
        VolumeRecord v = requireVolume(volume);
        return v.snapshots().stream().map(x -> x.toSnapshot(volume)).toList();
    }

    /** @return the snapshot; 400 bad names, 404 no such volume or {@link ProblemTypes#SNAPSHOT_NOT_FOUND} */
    public Snapshot get(String volume, String name) {
        VolumeRecord v = requireVolume(volume);
        ClusterService.check(() -> Limits.checkSnapshotName("snapshot", name));
        return v.snapshot(name).orElseThrow(() -> notFound(volume, name)).toSnapshot(volume);
    }

    /**
     * The id of snapshot {@code name} for a verify of its copies (docs/snapshots.md, "Verify of a snapshot").
     *
     * @throws ApiException 400 bad names, 404 no such volume or {@link ProblemTypes#SNAPSHOT_NOT_FOUND}, 409
     *                      {@link ProblemTypes#SNAPSHOT_NOT_READY} while it is creating or deleting
     */
    public long readyId(String volume, String name) {
        Snapshot snap = get(volume, name);
        if (snap.state() != SnapshotState.READY) {
            throw new ApiException(409, ProblemTypes.SNAPSHOT_NOT_READY, "Snapshot not ready", "snapshot " + name
                    + " of volume " + volume + " is " + stateName(requireVolume(volume).snapshot(name).orElseThrow())
                    + ": only a ready snapshot is held by every copy");
        }
        return snap.id();
    }

    /** @return the snapshot {@code name} of the volume if it is still there with that id; never throws 404 */
    public Optional<Snapshot> find(String volume, String name, long id) {
        return s.store.volume(volume).flatMap(v -> v.snapshot(name)).filter(x -> x.id() == id)
                .map(x -> x.toSnapshot(volume));
    }

    /**
     * Marks the snapshot {@code deleting} (idempotent): the primary is told to delete it, and the record goes once
     * the primary no longer reports it. Errors: 400 bad names; 404 no such volume or
     * {@link ProblemTypes#SNAPSHOT_NOT_FOUND}; 409 {@link ProblemTypes#ROLLBACK_IN_PROGRESS} (the volume rolls back to
     * it); 503 store contention.
     *
     * @return the snapshot as marked
     */
    public Snapshot markDeleting(String volume, String name) {
        ClusterService.check(() -> Limits.checkName("name", volume));
        ClusterService.check(() -> Limits.checkSnapshotName("snapshot", name));
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(volume)
                    .orElseThrow(() -> ApiException.volumeNotFound(volume));
            VolumeRecord v = current.value();
            SnapshotRecord snap = v.snapshot(name).orElseThrow(() -> notFound(volume, name));
            RollbackLedger.checkNotRollingBackTo(v, snap);
            if (snap.state() == SnapshotState.DELETING) {
                return snap.toSnapshot(volume);
            }
            SnapshotRecord marked = snap.withState(SnapshotState.DELETING);
            var list = v.snapshots().stream().map(x -> x.id() == snap.id() ? marked : x).toList();
            if (s.compareAndSet(current, v.withSnapshots(list, v.nextSnapshotId()))) {
                return marked.toSnapshot(volume);
            }
        }
        throw ClusterState.contention(volume, "marking snapshot " + name + " deleting");
    }

    /**
     * @return the snapshots to send the primary copy of {@code v}: those still to take ({@code creating}) and those
     *         to delete ({@code deleting}, delete = true). Ready ones are left out: the node keeps what the answer
     *         does not mention, and a primary that does not hold a ready one (its copy moved to another node) must
     *         not take it anew from today's data under the old name
     */
    static List<DesiredSnapshot> desired(VolumeRecord v) {
        return v.snapshots().stream().filter(x -> x.state() != SnapshotState.READY)
                .map(x -> new DesiredSnapshot(x.id(), x.name(), x.state() == SnapshotState.DELETING)).toList();
    }

    /**
     * @return {@code v} after its primary reported holding {@code reported}: creating ones reported become ready
     *         (with the reported sizes) unless reported under a copy's name (not confirmed on every copy yet), ready
     *         ones reported take the reported sizes, deleting ones not reported are dropped; a ready one not reported
     *         stays as it is
     */
    static VolumeRecord reconcile(VolumeRecord v, List<SnapshotReport> reported) {
        if (v.snapshots().isEmpty()) {
            return v;
        }
        Map<Long, SnapshotReport> byId = new HashMap<>();
        reported.forEach(r -> byId.put(r.id(), r));
        var next = new ArrayList<SnapshotRecord>(v.snapshots().size());
        for (SnapshotRecord x : v.snapshots()) {
            SnapshotReport r = byId.get(x.id());
            switch (x.state()) {
                case CREATING -> next.add(r == null || unconfirmed(r) ? x
                        : x.withState(SnapshotState.READY).withSizes(r.sizeBytes(), r.exclusiveBytes()));
                case READY -> next.add(r == null ? x : x.withSizes(r.sizeBytes(), r.exclusiveBytes()));
                case DELETING -> {
                    if (r != null) {
                        next.add(x);
                    }
                }
            }
        }
        return next.equals(v.snapshots()) ? v : v.withSnapshots(next, v.nextSnapshotId());
    }

    /**
     * True for a snapshot the primary holds under a copy's name ({@code _<id>}, docs/snapshots.md "Replicated
     * volumes"): taken as a secondary or by a cut not yet confirmed on every copy; it takes it again before it counts.
     */
    private static boolean unconfirmed(SnapshotReport r) {
        return r.name() != null && r.name().startsWith("_");
    }

    private VolumeRecord requireVolume(String volume) {
        ClusterService.check(() -> Limits.checkName("name", volume));
        return s.store.volume(volume).orElseThrow(() -> ApiException.volumeNotFound(volume));
    }

    private static String stateName(SnapshotRecord x) {
        return x.state().name().toLowerCase(java.util.Locale.ROOT);
    }

    private static ApiException notFound(String volume, String name) {
        return new ApiException(404, ProblemTypes.SNAPSHOT_NOT_FOUND, "Snapshot not found",
                "volume " + volume + " has no snapshot named " + name);
    }
}
