package io.rdmablock.mgmt.api.resync;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CopyTransition;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.MarkCopyStaleRequest;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Copy state transitions asked by a primary (docs/replication.md "stale", docs/resync.md "Copy states") and verify
 * runs (docs/resync.md "Verify"), plus what primaries report about both in their heartbeats. Each transition is a
 * compare-and-set against the revision read, retried on a conflict.
 *
 * <p>Every transition is judged in this order: 404 no such volume; 409 {@link ProblemTypes#NOT_A_SECONDARY} when
 * {@code nodeId} holds no secondary copy; the current volume (200) when the reporter is the primary and the copy is
 * already in the target state (a retry after a lost answer); 409 {@link ProblemTypes#EPOCH_MISMATCH} (member
 * {@code epoch}); 409 {@link ProblemTypes#NOT_PRIMARY}; 409 {@link ProblemTypes#COPY_NOT_STALE} (to syncing from
 * anything but stale) or {@link ProblemTypes#COPY_NOT_SYNCING} (to in_sync from anything but syncing); else the
 * compare-and-set: stale → epoch + 1; syncing → epoch unchanged; in_sync → epoch + 1.
 */
public final class ResyncRecords {
    private final ClusterState s;

    public ResyncRecords(ClusterState state) {
        this.s = state;
    }

    /** Drop (in_sync or syncing → stale, epoch + 1). */
    public VolumeRecord markStale(String name, String nodeId, MarkCopyStaleRequest request) {
        return transition(name, nodeId, request.epoch(), request.reporter(), CopyState.STALE);
    }

    /** Start of a resync (stale → syncing, epoch unchanged). */
    public VolumeRecord markSyncing(String name, String nodeId, CopyTransition request) {
        return transition(name, nodeId, request.epoch(), request.reporter(), CopyState.SYNCING);
    }

    /** End of a resync (syncing → in_sync, epoch + 1). */
    public VolumeRecord markInSync(String name, String nodeId, CopyTransition request) {
        return transition(name, nodeId, request.epoch(), request.reporter(), CopyState.IN_SYNC);
    }

    private VolumeRecord transition(String name, String nodeId, long epoch, String reporter, CopyState target) {
        ApiException.check(() -> {
            Limits.checkName("name", name);
            Limits.checkName("nodeId", nodeId);
            Limits.check(new MarkCopyStaleRequest(epoch, reporter));
        });
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            CopyRecord copy = v.copyOn(nodeId).filter(c -> c.role() == CopyRole.SECONDARY).orElseThrow(() ->
                    new ApiException(409, ProblemTypes.NOT_A_SECONDARY, "Not a secondary", "invalid nodeId: nodeId="
                            + nodeId + " holds no secondary copy of volume " + name + " (copies: "
                            + ClusterState.describe(v) + ")"));
            boolean fromPrimary = v.primary().nodeId().equals(reporter);
            if (fromPrimary && copy.state() == target) {
                return v;
            }
            if (v.epoch() != epoch) {
                throw new ApiException(Problem.of(ProblemTypes.EPOCH_MISMATCH, "Epoch mismatch", 409,
                                "invalid epoch: epoch=" + epoch + ", volume " + name + " is at epoch "
                                        + v.epoch() + " (read it again and adopt it)")
                        .withExtensions(null, null, v.epoch()));
            }
            if (!fromPrimary) {
                throw new ApiException(409, ProblemTypes.NOT_PRIMARY, "Not the primary", "invalid reporter: reporter="
                        + reporter + ", the primary of volume " + name + " at epoch " + v.epoch()
                        + " is " + v.primary().nodeId());
            }
            if (target == CopyState.SYNCING && copy.state() != CopyState.STALE) {
                throw new ApiException(409, ProblemTypes.COPY_NOT_STALE, "Copy not stale", "invalid nodeId: nodeId="
                        + nodeId + ", its copy of volume " + name + " is " + copy.state().wireName()
                        + ": only a stale copy starts a resync");
            }
            if (target == CopyState.IN_SYNC && copy.state() != CopyState.SYNCING) {
                throw new ApiException(409, ProblemTypes.COPY_NOT_SYNCING, "Copy not syncing", "invalid nodeId: "
                        + "nodeId=" + nodeId + ", its copy of volume " + name + " is " + copy.state().wireName()
                        + ": only a syncing copy is declared in sync (ask .../syncing first)");
            }
            CopyRecord changed = copy.withState(target);
            if (target == CopyState.SYNCING) {
                VolumeRecord next = v.withCopy(changed);
                if (s.compareAndSet(current, next)) {
                    return next;
                }
            } else {
                VolumeRecord next = v.withEpoch(v.epoch() + 1, changed);
                if (s.compareAndSetEpoch(current, next)) {
                    return next;
                }
            }
        }
        throw ClusterState.contention(name, "marking copy " + nodeId + " " + target.wireName());
    }

    // ---- progress ----

    /**
     * Takes the resyncs and verify run a volume's primary reported: progress shown on GET, the resync byte counter
     * (growth of each resync's syncedBytes; a resync that starts again counts from 0), the verify run's state.
     */
    public void primaryReported(VolumeRecord v, VolumeReport r) {
        if (r == null) {
            s.resyncs.remove(v.id());
            return;
        }
        s.resyncs.put(v.id(), r.resyncs());
        Map<String, Long> now = new HashMap<>();
        for (ResyncProgress p : r.resyncs()) {
            if (p == null || p.nodeId() == null) {
                continue;
            }
            String key = ClusterState.copyKey(v.id(), p.nodeId());
            long before = s.resyncCounted.getOrDefault(key, 0L);
            long synced = Math.max(0, p.syncedBytes());
            s.resyncBytesTotal.addAndGet(synced >= before ? synced - before : synced);
            now.put(key, synced);
        }
        v.copies().forEach(c -> s.resyncCounted.remove(ClusterState.copyKey(v.id(), c.nodeId())));
        s.resyncCounted.putAll(now);
        VerifyReport run = s.verifies.get(v.id());
        VerifyReport reported = r.verify();
        if (run != null && reported != null && run.id().equals(reported.id()) && reported.state() != null
                && !finished(run)) {
            s.verifies.put(v.id(), reported);
        }
    }

    /** @return the primary's last report about the resync of the copy on {@code nodeId}, or null */
    public ResyncProgress progress(VolumeRecord v, String nodeId) {
        for (ResyncProgress p : s.resyncs.getOrDefault(v.id(), List.of())) {
            if (p != null && nodeId.equals(p.nodeId())) {
                return p;
            }
        }
        return null;
    }

    /** @return seconds left at the reported rate (rounded up), or null when the rate is not known */
    public static Long etaSeconds(ResyncProgress p) {
        if (p.bytesPerSecond() <= 0) {
            return null;
        }
        long left = Math.max(0, p.totalBytes() - p.syncedBytes());
        return (left + p.bytesPerSecond() - 1) / p.bytesPerSecond();
    }

    // ---- verify ----

    /**
     * Starts a verify run: 202 with a new run (pending, totalBytes the volume size); a run pending or running is
     * answered as it is. Errors: 404; 409 {@link ProblemTypes#VOLUME_NOT_READY} when the volume is not serving
     * (creating, deleting, or its primary unavailable) or has fewer than two in-sync copies to compare.
     *
     * @param serving the volume's derived state is ready or degraded
     */
    /**
     * As {@link #startVerify(VolumeRecord, VolumeState)}; with {@code snapshotId} the run compares that snapshot's
     * copies (docs/snapshots.md, "Verify of a snapshot"; the caller checked it exists and is ready). A run pending or
     * running (of the volume or of any snapshot) is answered as it is.
     */
    public VerifyReport startVerify(VolumeRecord v, VolumeState derived, Long snapshotId) {
        VerifyReport run = s.verifies.get(v.id());
        if (run != null && !finished(run)) {
            return run;
        }
        if (derived != VolumeState.READY && derived != VolumeState.DEGRADED) {
            throw new ApiException(409, ProblemTypes.VOLUME_NOT_READY, "Volume not ready", "invalid name: volume "
                    + v.name() + " is " + derived.wireName() + ": a verify needs a serving primary");
        }
        if (v.inSyncCount() < 2) {
            throw new ApiException(409, ProblemTypes.VOLUME_NOT_READY, "Volume not ready", "invalid name: volume "
                    + v.name() + " has " + v.inSyncCount() + " in-sync copy (copies: " + ClusterState.describe(v)
                    + "): a verify compares at least 2");
        }
        VerifyReport fresh = new VerifyReport(UUID.randomUUID().toString(), VerifyState.PENDING, List.of(), 0,
                v.sizeBytes(), List.of(), 0, null);
        s.verifies.put(v.id(), fresh);
        if (snapshotId == null) {
            verifySnapshots.remove(v.id());
        } else {
            verifySnapshots.put(v.id(), snapshotId);
        }
        return fresh;
    }

    /** @return the latest run; 404 {@link ProblemTypes#NOT_FOUND} (detail naming the volume) before any */
    public VerifyReport verifyStatus(VolumeRecord v) {
        VerifyReport run = s.verifies.get(v.id());
        if (run == null) {
            throw new ApiException(404, ProblemTypes.NOT_FOUND, "No verify run", "volume " + v.name()
                    + " has no verify run since this server started (start one with POST /v1/volumes/" + v.name()
                    + "/verify)");
        }
        return run;
    }

    /** @return the id the primary must carry out (a run pending or running), or null */
    public String verifyIdFor(VolumeRecord v) {
        VerifyReport run = s.verifies.get(v.id());
        return run == null || finished(run) ? null : run.id();
    }

    /** @return the snapshot id the run {@link #verifyIdFor} names compares, or null (the live volume, or no run) */
    public Long verifySnapshotIdFor(VolumeRecord v) {
        return verifyIdFor(v) == null ? null : verifySnapshots.get(v.id());
    }

    /** Per volume id: the snapshot its latest verify run compares (absent: the live volume); memory only, as runs. */
    private final java.util.Map<String, Long> verifySnapshots = new java.util.concurrent.ConcurrentHashMap<>();

    static boolean finished(VerifyReport run) {
        return run.state() == VerifyState.DONE || run.state() == VerifyState.FAILED;
    }

    /** @return volume name → differing regions of its last finished run (done), for the metrics gauge */
    public Map<String, Long> differingRegions() {
        Map<String, Long> out = new HashMap<>();
        for (VolumeRecord v : s.store.volumes()) {
            VerifyReport run = s.verifies.get(v.id());
            if (run != null && run.state() == VerifyState.DONE) {
                out.put(v.name(), run.differing());
            }
        }
        return out;
    }
}
