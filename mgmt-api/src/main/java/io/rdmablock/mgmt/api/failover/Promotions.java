package io.rdmablock.mgmt.api.failover;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.PrimarySilence;
import io.rdmablock.mgmt.client.PromoteRequest;
import io.rdmablock.mgmt.client.UnreachableReport;
import io.rdmablock.mgmt.client.VolumeState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Failover of the management plane (docs/failover.md, "Promotion"; docs/resync.md, "Lease on a switchover"):
 * unreachable reports, the liveness sweep's automatic promotion, the operator's promotion, switchovers asked by
 * {@code Rebuilds}, and the lease a new primary must still wait out. Every change of the primary is one
 * compare-and-set, epoch + 1, that also moves every {@code syncing} copy to {@code stale}. No lock: the
 * compare-and-sets decide; times are on the monotonic clock of {@link ClusterState}.
 */
public final class Promotions {
    private static final Logger LOG = LoggerFactory.getLogger(Promotions.class);
    private final ClusterState s;
    /** Names of volumes whose lost primary has no in-sync copy to promote, logged once. */
    private final Set<String> unpromotableLogged = ConcurrentHashMap.newKeySet();
    private final AtomicLong promotions = new AtomicLong();

    public Promotions(ClusterState state) {
        this.s = state;
    }

    public long count() {
        return promotions.get();
    }

    /**
     * Records that {@code request.reporter()} cannot reach the copy on {@code nodeId}. A report about an older epoch
     * than the record's is answered but not recorded (epoch 0: unknown, recorded). Errors: 400, 404 volume or copy.
     */
    public VolumeRecord reportUnreachable(String name, String nodeId, UnreachableReport request) {
        ApiException.check(() -> {
            Limits.checkName("name", name);
            Limits.checkName("nodeId", nodeId);
            Limits.check(request);
        });
        VolumeRecord v = s.store.volume(name).orElseThrow(() -> ApiException.volumeNotFound(name));
        v.copyOn(nodeId).orElseThrow(() -> ClusterState.copyNotFound(v, nodeId));
        if (request.epoch() == 0 || request.epoch() >= v.epoch()) {
            s.unreachableAtNanos.put(ClusterState.copyKey(v.id(), nodeId), s.now());
            LOG.info("unreachable report: volume={}, copy on {}, epoch={}, reporter={}", name, nodeId,
                    request.epoch(), request.reporter());
        } else {
            LOG.info("unreachable report ignored (older epoch {} < {}): volume={}, copy on {}, reporter={}",
                    request.epoch(), v.epoch(), name, nodeId, request.reporter());
        }
        return v;
    }

    /**
     * Records a secondary's report, in its heartbeat, that the primary renewed no peer lease on it for a lease
     * ({@link PrimarySilence}; docs/failover.md "Promotion"): the same second signal as a host's unreachable report,
     * counted only from a copy the primary must renew its peer lease on ({@code in_sync} or {@code syncing}; a stale
     * copy gets no renewals, so its silence says nothing) about the primary the record names now at the record's
     * epoch (an older view is ignored). Logged when it starts (not again while it lasts, the heartbeat repeats it).
     */
    public void primarySilent(VolumeRecord v, CopyRecord reporter, PrimarySilence silence) {
        if (reporter.state() == CopyState.STALE || !v.primary().nodeId().equals(silence.nodeId())
                || silence.epoch() != v.epoch()) {
            return;
        }
        String key = ClusterState.copyKey(v.id(), silence.nodeId());
        Long before = s.unreachableAtNanos.put(key, s.now());
        if (before == null || s.elapsedMs(before) > s.leaseMs) {
            LOG.info("primary silent: volume={}, primary {} renewed no peer lease on the copy on {} for {} ms "
                    + "(epoch {}); promoted once its lease lapses too", v.name(), silence.nodeId(), reporter.nodeId(),
                    silence.silentMs(), v.epoch());
        }
    }

    /**
     * One liveness pass: every replicated volume whose primary is lost ({@link #primaryLost}) gets, by one
     * compare-and-set, its lowest-id in-sync secondary on a node that heartbeated within half the lease as primary.
     *
     * @return the volumes promoted in this pass
     */
    public int sweep() {
        int promoted = 0;
        for (VolumeRecord listed : s.store.volumes()) {
            if (!s.leading()) {
                return promoted; // lost the lease: stop deciding at once
            }
            if (listed.state() == VolumeState.DELETING || listed.copies().size() < 2 || !primaryLost(listed)) {
                unpromotableLogged.remove(listed.name());
                continue;
            }
            for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
                Versioned<VolumeRecord> current = s.store.volumeVersioned(listed.name()).orElse(null);
                if (current == null || !primaryLost(current.value())) {
                    break;
                }
                VolumeRecord v = current.value();
                CopyRecord candidate = freshInSyncSecondary(v, Set.of());
                if (candidate == null) {
                    if (unpromotableLogged.add(v.name())) {
                        LOG.error("volume {} unavailable: its primary on {} is lost (no heartbeat within the lease of "
                                + "{} ms, reported unreachable) and no in-sync copy is on a node that is up (copies: "
                                + "{}); an operator may promote a copy with acceptDataLoss", v.name(),
                                v.primary().nodeId(), s.leaseMs, ClusterState.describe(v));
                    }
                    break;
                }
                VolumeRecord next = promoted(v, candidate.nodeId(), false);
                if (s.compareAndSetEpoch(current, next)) {
                    afterPromotion(v, next, "primary lost");
                    promoted++;
                    break;
                }
            }
        }
        return promoted;
    }

    /** @return the lowest-id in-sync secondary of {@code v} whose node heartbeated within half the lease, or null */
    public CopyRecord freshInSyncSecondary(VolumeRecord v, Set<String> excluded) {
        return v.copies().stream()
                .filter(c -> c.role() == CopyRole.SECONDARY && c.state() == CopyState.IN_SYNC
                        && !excluded.contains(c.nodeId()) && s.heartbeatFresh(c.nodeId()))
                .min(Comparator.comparing(CopyRecord::nodeId)).orElse(null);
    }

    /**
     * The operator's promotion (see {@code ClusterService.promote}). Judged: 404 volume; 409 deleting; 404 copy; 409
     * promote-refused (already primary); 409 primary-alive; 409 promote-refused (not in sync, no acceptDataLoss).
     */
    public VolumeRecord promote(String name, PromoteRequest request) {
        ApiException.check(() -> {
            Limits.checkName("name", name);
            Limits.check(request);
        });
        String nodeId = request.nodeId();
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw ClusterState.deleting(v);
            }
            CopyRecord copy = v.copyOn(nodeId).orElseThrow(() -> ClusterState.copyNotFound(v, nodeId));
            if (copy.role() == CopyRole.PRIMARY) {
                throw new ApiException(409, ProblemTypes.PROMOTE_REFUSED, "Promote refused", "invalid nodeId: nodeId="
                        + nodeId + " already holds the primary copy of volume " + name + " (epoch " + v.epoch() + ")");
            }
            String primaryNode = v.primary().nodeId();
            if (s.leaseHeld(primaryNode)) {
                throw new ApiException(409, ProblemTypes.PRIMARY_ALIVE, "Primary alive", "the primary of volume " + name
                        + " on node " + primaryNode + " heartbeated " + s.elapsedMs(s.lastSeen(primaryNode))
                        + " ms ago, within the lease of " + s.leaseMs + " ms: stop that node (or wait) and retry");
            }
            boolean inSync = copy.state() == CopyState.IN_SYNC;
            if (!inSync && !request.acceptDataLoss()) {
                throw new ApiException(409, ProblemTypes.PROMOTE_REFUSED, "Promote refused", "invalid acceptDataLoss: "
                        + "acceptDataLoss=false, the copy on " + nodeId + " is " + copy.state().wireName()
                        + ": writes acknowledged since it left the in-sync set would be lost; repeat with "
                        + "acceptDataLoss=true to promote it anyway");
            }
            VolumeRecord next = promoted(v, nodeId, !inSync);
            if (s.compareAndSetEpoch(current, next)) {
                if (!inSync) {
                    s.dataLossPromotionAtNanos.put(v.id(), s.now());
                }
                afterPromotion(v, next, inSync ? "operator" : "operator, data loss accepted");
                return next;
            }
        }
        throw ClusterState.contention(name, "promoting " + nodeId);
    }

    /**
     * A switchover asked by {@code Rebuilds} (the primary's node is draining, removed or down for good): the in-sync
     * secondary on {@code newPrimary} becomes primary by one compare-and-set (epoch + 1). The new primary waits out
     * the old one's lease ({@link #leaseWaitMs}).
     *
     * @return true when written
     */
    public boolean switchover(Versioned<VolumeRecord> current, String newPrimary, String why) {
        VolumeRecord v = current.value();
        VolumeRecord next = promoted(v, newPrimary, false);
        if (!s.compareAndSetEpoch(current, next)) {
            return false;
        }
        afterPromotion(v, next, why);
        return true;
    }

    /**
     * @return {@code v} at epoch + 1 with the copy on {@code newPrimary} primary and in sync, the old primary a stale
     *         secondary, every {@code syncing} copy stale (its resync source is gone) and (othersStale) every other
     *         copy stale; no connected hosts until the new primary reports
     */
    static VolumeRecord promoted(VolumeRecord v, String newPrimary, boolean othersStale) {
        var next = new ArrayList<CopyRecord>();
        for (CopyRecord c : v.copies()) {
            if (c.nodeId().equals(newPrimary)) {
                next.add(new CopyRecord(c.nodeId(), CopyRole.PRIMARY, CopyState.IN_SYNC, c.provisioned()));
            } else if (c.role() == CopyRole.PRIMARY) {
                next.add(ClusterState.secondary(c, CopyState.STALE));
            } else {
                next.add(othersStale || c.state() == CopyState.SYNCING ? c.withState(CopyState.STALE) : c);
            }
        }
        return v.withCopies(v.epoch() + 1, next).withConnectedHosts(List.of());
    }

    private void afterPromotion(VolumeRecord before, VolumeRecord after, String why) {
        promotions.incrementAndGet();
        s.unreachableAtNanos.remove(ClusterState.copyKey(before.id(), before.primary().nodeId()));
        s.resyncs.remove(before.id());
        unpromotableLogged.remove(before.name());
        LOG.warn("volume {} promoted ({}): primary {} -> {}, epoch {} -> {}, copies: {}", before.name(), why,
                before.primary().nodeId(), after.primary().nodeId(), before.epoch(), after.epoch(),
                ClusterState.describe(after));
    }

    /**
     * True when the primary of {@code v} is lost: its node has no heartbeat within the lease and an unreachable report
     * about its copy arrived after that node's last heartbeat.
     */
    public boolean primaryLost(VolumeRecord v) {
        String p = v.primary().nodeId();
        long seen = s.lastSeen(p);
        if (s.elapsedMs(seen) <= s.leaseMs) {
            return false;
        }
        Long report = s.unreachableAtNanos.get(ClusterState.copyKey(v.id(), p));
        return report != null && report - seen > 0;
    }

    /** Notes that the answer being built tells {@code nodeId} it is the primary of {@code v}, now. */
    public void toldPrimary(VolumeRecord v, String nodeId) {
        s.toldPrimaryAtNanos.computeIfAbsent(v.id(), k -> new ConcurrentHashMap<>()).put(nodeId, s.now());
    }

    /**
     * How long the primary on {@code nodeId} must still wait before serving, ms (docs/resync.md, "Lease on a
     * switchover"): for every other node this server told it was primary of {@code v}, {@code that answer's time +
     * lease - now} (>= 0), the largest. A node that could have been told so by a previous instance of this server
     * (within a lease of this server's start, a copy this server has not told) makes it unknown: null (one full
     * lease). A node this server told it was primary whose heartbeat is being answered right now counts as told at
     * that heartbeat's start (its answer may come from a record read before the promotion). After an operator
     * promotion of a copy that was not in sync, at least {@code peerLeaseMaxMs + lease} from it (docs/failover.md,
     * "Peer lease").
     */
    public Long leaseWaitMs(VolumeRecord v, String nodeId) {
        Map<String, Long> told = s.toldPrimaryAtNanos.getOrDefault(v.id(), Map.of());
        long wait = 0;
        for (Map.Entry<String, Long> e : told.entrySet()) {
            if (!e.getKey().equals(nodeId)) {
                wait = Math.max(wait, s.leaseMs - s.elapsedMs(e.getValue()));
            }
        }
        for (CopyRecord c : v.copies()) {
            // a former primary's answer being built now (from a record read before the promotion) may tell it once
            // more that it is primary: a full lease from that answer's start
            Long inFlight = s.heartbeatInFlightNanos.get(c.nodeId());
            if (!c.nodeId().equals(nodeId) && inFlight != null && told.containsKey(c.nodeId())) {
                wait = Math.max(wait, s.leaseMs - s.elapsedMs(inFlight));
            }
        }
        Long dataLoss = s.dataLossPromotionAtNanos.get(v.id());
        if (dataLoss != null && s.peerLeaseMaxMs > 0) {
            // the copies in sync before may go on granting the old primary peer leases until their last answer's
            // send time + peerLeaseMaxMs (they were not fenced by this copy's activation): wait that out too
            wait = Math.max(wait, s.peerLeaseMaxMs + s.leaseMs - s.elapsedMs(dataLoss));
        }
        if (s.elapsedMs(s.startedAtNanos) <= s.leaseMs) {
            for (CopyRecord c : v.copies()) {
                if (!c.nodeId().equals(nodeId) && !told.containsKey(c.nodeId())) {
                    return null; // a previous server may have told it it was primary less than a lease ago
                }
            }
        }
        return wait;
    }
}
