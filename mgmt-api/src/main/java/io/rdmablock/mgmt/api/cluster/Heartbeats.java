package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.failover.Promotions;
import io.rdmablock.mgmt.api.resync.ResyncRecords;
import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Node heartbeats: reconciliation of the reported copies with the records and the desired state answered (see
 * {@link ClusterService}'s class comment). The answer to a primary carries {@code leaseWaitMs} and the verify run id,
 * and notes the time it told that node it is primary ({@link Promotions#toldPrimary}); a copy removed from its
 * record (rebuild, drain) that the node still reports is answered {@code deleting}. Only the primary's answer carries
 * the volume's snapshots ({@link SnapshotLedger#desired}), and only its report changes their records
 * ({@link SnapshotLedger#reconcile}). Every copy's answer carries the volume's rollback while its copy has not
 * reported it done, and no allowed host while the volume rolls back ({@link RollbackLedger}). Record changes are
 * compare-and-sets from a fresh read; while an answer is being built its start is in
 * {@link ClusterState#heartbeatInFlightNanos}.
 */
final class Heartbeats {
    private final ClusterState s;
    private final Promotions promotions;
    private final ResyncRecords resyncs;

    Heartbeats(ClusterState state, Promotions promotions, ResyncRecords resyncs) {
        this.s = state;
        this.promotions = promotions;
        this.resyncs = resyncs;
    }

    /**
     * Records a heartbeat and answers the node's desired state. A primary's report also gives its resyncs' progress
     * and its verify run (kept in memory); a copy removed from the record that the node still reports is answered
     * {@code deleting} so the node deletes it. Errors: 400, 404 unknown node.
     */
    HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        NodeRecord node = s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        ClusterService.check(() -> Limits.checkFree(request.freeBytes(), node.capacityBytes()));
        for (int i = 0; i < request.volumes().size(); i++) {
            VolumeReport r = request.volumes().get(i);
            if (r.id() == null || r.id().isEmpty() || r.state() == null) {
                throw ApiException.validation("invalid volumes[" + i + "]: id and state are required");
            }
        }
        long started = s.now();
        s.heartbeatInFlightNanos.put(nodeId, started);
        try {
            return answer(node, nodeId, request);
        } finally {
            s.heartbeatInFlightNanos.remove(nodeId, started);
        }
    }

    private HeartbeatResponse answer(NodeRecord node, String nodeId, HeartbeatRequest request) {
        s.seen(nodeId);
        s.reportedFreeBytes.put(nodeId, request.freeBytes());
        if (request.background() != null) { // a heartbeat without one (after a failed one) keeps the last
            s.reportedBackground.put(nodeId, request.background());
        }

        Map<String, VolumeReport> reported = new HashMap<>();
        for (VolumeReport r : request.volumes()) {
            reported.put(r.id(), r);
        }
        var desired = new ArrayList<DesiredVolume>();
        for (VolumeRecord v : s.store.volumes()) {
            CopyRecord copy = v.copyOn(nodeId).orElse(null);
            if (copy == null) {
                continue;
            }
            String key = ClusterState.copyKey(v.id(), nodeId);
            VolumeReport r = reported.get(v.id());
            if (r == null) {
                s.reports.remove(key);
            } else {
                s.reports.put(key, r);
            }
            if (r == null && copy.provisioned() && v.state() != VolumeState.DELETING) {
                s.missingOnNode.add(key); // the node held it and does not report it: its data is gone
            } else {
                s.missingOnNode.remove(key);
            }
            if (v.state() == VolumeState.DELETING) {
                if (r != null) {
                    s.deletedOnNode.remove(key);
                    desired.add(toDesired(v, copy));
                    continue;
                }
                s.deletedOnNode.add(key);
                s.forgetIfDeletedEverywhere(v);
                continue;
            }
            if (copy.role() == CopyRole.PRIMARY) {
                resyncs.primaryReported(v, r);
            } else if (r != null && r.primarySilence() != null) {
                promotions.primarySilent(v, copy, r.primarySilence());
            }
            VolumeRecord next = reconcile(v, copy, r);
            if (!next.equals(v)) {
                next = write(v, nodeId, r);
                if (next == null) {
                    continue; // gone, or no longer holding a copy there, meanwhile
                }
            }
            desired.add(toDesired(next, next.copyOn(nodeId).orElseThrow()));
        }
        retiredCopies(nodeId, reported, desired);
        return HeartbeatResponse.of(node.draining(), desired, s.leaseMs).withPeerLeaseMaxMs(s.peerLeaseMaxMs)
                .withBackground(node.background() == null ? NodeBackground.STARTUP : node.background());
    }

    /** Answers {@code deleting} for copies removed from their record that the node still reports; forgets the rest. */
    private void retiredCopies(String nodeId, Map<String, VolumeReport> reported, List<DesiredVolume> desired) {
        Map<String, VolumeRecord> retired = s.retired.get(nodeId);
        if (retired == null) {
            return;
        }
        for (var it = retired.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            VolumeRecord now = s.store.volume(e.getValue().name()).orElse(null);
            boolean heldAgain = now != null && now.id().equals(e.getKey()) && now.copyOn(nodeId).isPresent();
            if (!reported.containsKey(e.getKey()) || heldAgain) {
                it.remove();
                continue;
            }
            VolumeRecord v = e.getValue();
            desired.add(new DesiredVolume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.allowedHosts(),
                    Volume.subnqnOf(v.name()), VolumeState.DELETING, true, v.epoch(), CopyRole.SECONDARY,
                    v.minInSync(), List.of(), null, null, false));
        }
        if (retired.isEmpty()) {
            s.retired.remove(nodeId);
        }
    }

    /**
     * Writes what the node's report changes in the record, by compare-and-set from a fresh read (retried on a
     * conflict: another change of the record, e.g. a promotion, is kept and the report applied on top).
     *
     * @return the record as written (or as found, when the report changes nothing in it any more); null when the
     *         volume or its copy on the node is gone
     */
    private VolumeRecord write(VolumeRecord listed, String nodeId, VolumeReport r) {
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            var current = s.store.volumeVersioned(listed.name()).orElse(null);
            if (current == null || !current.value().id().equals(listed.id())) {
                return null;
            }
            VolumeRecord v = current.value();
            CopyRecord copy = v.copyOn(nodeId).orElse(null);
            if (copy == null || v.state() == VolumeState.DELETING) {
                return null;
            }
            VolumeRecord next = reconcile(v, copy, r);
            if (next.equals(v) || s.compareAndSet(current, next)) {
                return next;
            }
        }
        throw ClusterState.contention(listed.name(), "applying the heartbeat of " + nodeId);
    }

    /** @return the record after one copy's node reported (r null: that node does not hold the volume) */
    private VolumeRecord reconcile(VolumeRecord v, CopyRecord copy, VolumeReport r) {
        VolumeRecord next = v;
        if (copy.role() == CopyRole.PRIMARY) { // hosts connect to the primary only
            next = next.withConnectedHosts(r == null ? List.of() : r.connectedHosts());
        }
        if (copy.role() == CopyRole.PRIMARY && r != null) { // the primary takes and reports the snapshots
            next = SnapshotLedger.reconcile(next, r.snapshots());
        }
        next = RollbackLedger.reconcile(next, copy.nodeId(), r); // every copy rolls back and reports it
        if (r != null && !copy.provisioned()) {
            next = next.withCopy(copy.withProvisioned());
        }
        if (next.state() == VolumeState.CREATING && readyOnEveryCopy(next)) {
            next = next.withState(VolumeState.READY);
        }
        return next;
    }

    /**
     * True when the primary and every other in-sync copy whose node is up last reported the volume ready at its
     * desired size (a down node's copy is not waited for; stale and syncing copies are not in the in-sync set).
     */
    private boolean readyOnEveryCopy(VolumeRecord v) {
        for (CopyRecord c : v.copies()) {
            boolean mustReport = c.role() == CopyRole.PRIMARY
                    || (c.state() == CopyState.IN_SYNC && !s.nodeDown(c.nodeId()));
            if (!mustReport) {
                continue;
            }
            VolumeReport r = s.reports.get(ClusterState.copyKey(v.id(), c.nodeId()));
            if (r == null || r.state() != VolumeState.READY || r.sizeBytes() != v.sizeBytes()) {
                return false;
            }
        }
        return true;
    }

    private DesiredVolume toDesired(VolumeRecord v, CopyRecord copy) {
        var copies = v.copies().stream().map(c -> new DesiredCopy(c.nodeId(), c.role(), c.state(),
                s.fabricAddressOf(c.nodeId()), Node.hostnqnOf(c.nodeId()))).toList();
        boolean primary = copy.role() == CopyRole.PRIMARY && v.state() != VolumeState.DELETING;
        Long leaseWait = null;
        if (primary && v.copies().size() > 1) {
            leaseWait = promotions.leaseWaitMs(v, copy.nodeId());
        }
        if (primary) {
            promotions.toldPrimary(v, copy.nodeId()); // this answer tells it: its lease may run from now
        }
        return new DesiredVolume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), RollbackLedger.allowedHosts(v),
                Volume.subnqnOf(v.name()), v.state(), copy.provisioned(), v.epoch(), copy.role(), v.minInSync(),
                copies, leaseWait, primary ? resyncs.verifyIdFor(v) : null, v.requireAuth(),
                primary ? SnapshotLedger.desired(v) : List.of(), RollbackLedger.desired(v, copy.nodeId()),
                v.qos(), // every copy gets the limits: a promoted one enforces them at once
                primary ? resyncs.verifySnapshotIdFor(v) : null);
    }
}
