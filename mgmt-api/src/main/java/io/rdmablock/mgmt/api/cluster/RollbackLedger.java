package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.RollbackRecord;
import io.rdmablock.mgmt.api.store.SnapshotRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.DesiredRollback;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RollbackReport;
import io.rdmablock.mgmt.client.RollbackRequest;
import io.rdmablock.mgmt.client.SnapshotState;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeRollback;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * Volume rollbacks (docs/snapshots.md, "Rollback"): kept in the {@link VolumeRecord} ({@link RollbackRecord}), changed
 * by compare-and-set (epoch kept). A request names a {@code ready} snapshot; it is recorded {@code rolling-back} with
 * a new request id and every copy's node pending. While it is, every copy's heartbeat answer carries it
 * ({@link #desired}) and admits no host ({@link #allowedHosts}: hosts are disconnected and refused); each node rolls
 * its copy back to its own snapshot of the same id once per request id and reports it ({@link #reconcile}). The
 * record goes when every copy reported it done (hosts are admitted again), or turns {@code failed} when one reports
 * it cannot (hosts admitted again; the detail names the node and why).
 */
public final class RollbackLedger {
    /** Default bound of a rollback's wait for every copy's report, ms. */
    public static final long DEFAULT_WAIT_MS = 10_000;
    private final ClusterState s;
    private final Function<VolumeRecord, VolumeState> reportedState;
    private volatile long waitMs = DEFAULT_WAIT_MS;

    RollbackLedger(ClusterState state, Function<VolumeRecord, VolumeState> reportedState) {
        this.s = state;
        this.reportedState = reportedState;
    }

    /** @return how long a rollback request waits for every copy's report before answering 202, ms */
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
     * Records a rollback of {@code volume} to {@code request.snapshot()}. A rollback to the same snapshot still
     * rolling back is answered as it is (idempotent). Errors, in this order, nothing written: 400
     * {@link ProblemTypes#VALIDATION} (volume or snapshot name); 404 no such volume; 409
     * {@link ProblemTypes#VOLUME_DELETING}; 404 {@link ProblemTypes#SNAPSHOT_NOT_FOUND}; 409
     * {@link ProblemTypes#SNAPSHOT_NOT_READY}; 409 {@link ProblemTypes#ROLLBACK_IN_PROGRESS} (to another snapshot);
     * 409 {@link ProblemTypes#VOLUME_NOT_READY} (creating or unavailable); 409 {@link ProblemTypes#VOLUME_IN_USE} (a
     * host connected and not {@code force}); 503 store contention.
     *
     * @return the rollback as recorded ({@code rolling-back})
     */
    public RollbackRecord request(String volume, RollbackRequest request) {
        ClusterService.check(() -> Limits.checkName("name", volume));
        String name = request == null ? null : request.snapshot();
        ClusterService.check(() -> Limits.checkSnapshotName("snapshot", name));
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(volume)
                    .orElseThrow(() -> ApiException.volumeNotFound(volume));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw ClusterState.deleting(v);
            }
            SnapshotRecord snap = v.snapshot(name).orElseThrow(() -> new ApiException(404,
                    ProblemTypes.SNAPSHOT_NOT_FOUND, "Snapshot not found",
                    "volume " + volume + " has no snapshot named " + name));
            if (snap.state() != SnapshotState.READY) {
                String is = snap.state().name().toLowerCase(java.util.Locale.ROOT);
                throw new ApiException(409, ProblemTypes.SNAPSHOT_NOT_READY, "Snapshot not ready", "snapshot "
                        + name + " of volume " + volume + " is " + is + "; a rollback needs a ready snapshot");
            }
            RollbackRecord now = v.rollback();
            if (now != null && now.rollingBack()) {
                if (now.snapshotId() == snap.id()) {
                    return now;
                }
                throw new ApiException(409, ProblemTypes.ROLLBACK_IN_PROGRESS, "Rollback in progress", "volume "
                        + volume + " is rolling back to snapshot " + now.snapshot() + " (request " + now.requestId()
                        + ", copies pending " + now.pending() + "); wait until it is done");
            }
            VolumeState state = reportedState.apply(v);
            if (state != VolumeState.READY && state != VolumeState.DEGRADED) {
                throw new ApiException(409, ProblemTypes.VOLUME_NOT_READY, "Volume not ready", "volume " + volume
                        + " is " + state.wireName() + "; a rollback needs a ready volume");
            }
            boolean force = request.force();
            if (!force && !v.connectedHosts().isEmpty()) {
                throw new ApiException(409, ProblemTypes.VOLUME_IN_USE, "Volume in use", "volume " + volume
                        + " has connected hosts " + v.connectedHosts() + "; disconnect them or roll back with"
                        + " force=true (they are disconnected and refused until the rollback is done)");
            }
            var rec = new RollbackRecord(UUID.randomUUID().toString(), snap.id(), snap.name(), force,
                    s.wallMs.getAsLong(), v.copies().stream().map(CopyRecord::nodeId).toList(),
                    VolumeRollback.ROLLING_BACK, null);
            if (s.compareAndSet(current, v.withRollback(rec))) {
                return rec;
            }
        }
        throw ClusterState.contention(volume, "recording a rollback to " + name);
    }

    /**
     * @return the volume's rollback if it is still request {@code requestId}, empty once it is gone (every copy
     *         done); 404 never (a volume deleted meanwhile reads as gone)
     */
    public Optional<RollbackRecord> find(String volume, String requestId) {
        return s.store.volume(volume).map(VolumeRecord::rollback).filter(r -> r.requestId().equals(requestId));
    }

    /** @throws ApiException 409 {@link ProblemTypes#ROLLBACK_IN_PROGRESS} when {@code v} rolls back to {@code snap} */
    static void checkNotRollingBackTo(VolumeRecord v, SnapshotRecord snap) {
        if (fenced(v) && v.rollback().snapshotId() == snap.id()) {
            throw new ApiException(409, ProblemTypes.ROLLBACK_IN_PROGRESS, "Rollback in progress", "volume "
                    + v.name() + " is rolling back to snapshot " + snap.name() + "; it can be deleted once the"
                    + " rollback is done on every copy");
        }
    }

    /** @return the REST shape of {@code v}'s rollback, or null */
    static VolumeRollback view(VolumeRecord v) {
        return v.rollback() == null ? null : v.rollback().toRollback();
    }

    /** @return true while {@code v} rolls back (and is not being deleted): its answers admit no host */
    static boolean fenced(VolumeRecord v) {
        return v.rollback() != null && v.rollback().rollingBack() && v.state() != VolumeState.DELETING;
    }

    /** @return the allowed hosts to answer for {@code v}: none while it rolls back, else its own */
    static List<String> allowedHosts(VolumeRecord v) {
        return fenced(v) ? List.of() : v.allowedHosts();
    }

    /** @return the rollback to send the copy on {@code nodeId}: while rolling back and it is pending, else null */
    static DesiredRollback desired(VolumeRecord v, String nodeId) {
        RollbackRecord r = v.rollback();
        if (!fenced(v) || !r.pending().contains(nodeId)) {
            return null;
        }
        return new DesiredRollback(r.requestId(), r.snapshotId(), r.snapshot());
    }

    /**
     * @return {@code v} after the copy on {@code nodeId} reported {@code report} (null: no report): a copy reporting
     *         the request done leaves the pending list (the record goes with the last one); one reporting it failed
     *         makes it {@code failed}; nodes no longer holding a copy leave the pending list
     */
    static VolumeRecord reconcile(VolumeRecord v, String nodeId, VolumeReport report) {
        RollbackRecord r = v.rollback();
        if (r == null || !r.rollingBack()) {
            return v;
        }
        List<String> pending = new ArrayList<>(r.pending());
        pending.removeIf(n -> v.copyOn(n).isEmpty());
        RollbackReport rr = report == null ? null : report.rollback();
        if (rr != null && rr.requestId().equals(r.requestId()) && pending.contains(nodeId)) {
            if (rr.state() == RollbackReport.State.DONE) {
                pending.remove(nodeId);
            } else if (rr.state() == RollbackReport.State.FAILED) {
                return v.withRollback(r.withPending(pending).failed("copy on node " + nodeId + ": " + rr.detail()));
            }
        }
        if (pending.isEmpty()) {
            return v.withRollback(null);
        }
        return pending.equals(r.pending()) ? v : v.withRollback(r.withPending(pending));
    }
}
