package io.rdmablock.mgmt.api.state;

import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The management server's runtime state beside the store, shared by {@code ClusterService}, {@code NodeRegistry},
 * {@code Promotions}, {@code Rebuilds} and {@code ResyncRecords}. Volume changes are compare-and-sets against the
 * revision read (etcd: one transaction each), runtime state is in concurrent maps; the few locks (placement, node
 * records, the sweep) are their owners'. Liveness and lease times are on the monotonic clock ({@code monoNanos}, {@link System#nanoTime()}
 * in production); the wall clock ({@code wallMs}) is only for what is shown (createdAt, lastHeartbeat).
 *
 * <p>Its members are public for the packages that share it ({@code cluster}, {@code failover}, {@code resync}); the
 * HTTP layer and the metrics never reach into it (they go through {@code ClusterService}).
 */
public final class ClusterState {
    /** Compare-and-set attempts of one change before giving up (only other writers of the store make one fail). */
    public static final int CAS_ATTEMPTS = 16;

    public final MetadataStore store;
    public final LongSupplier wallMs;
    public final LongSupplier monoNanos;
    public final long nodeTimeoutMs;
    public final long leaseMs;
    public final long rebuildAfterMs;
    /**
     * How long after a heartbeat answer a node's secondary copies may go on granting peer leases (docs/failover.md,
     * "Peer lease"), ms; 0 = none. Sent in every heartbeat answer ({@link
     * io.rdmablock.mgmt.api.MgmtConfiguration#PEER_LEASE_MAX_MS}).
     */
    public final long peerLeaseMaxMs = io.rdmablock.mgmt.api.MgmtConfiguration.current().peerLeaseMaxMs();
    /**
     * volumeId → monotonic time of an operator promotion of a copy that was not in sync (acceptDataLoss): the copies
     * that were in sync may not have learnt of it, so the new primary waits out their grants' bound
     * ({@link #peerLeaseMaxMs} + lease; {@code Promotions.leaseWaitMs}).
     */
    public final Map<String, Long> dataLossPromotionAtNanos = new ConcurrentHashMap<>();
    /**
     * Monotonic time this service started or (several management servers) this server's current term as leader
     * began: a node not seen since counts as last seen then.
     */
    public volatile long startedAtNanos;
    /** True while this server may decide (the leader; always for a single server). */
    public volatile java.util.function.BooleanSupplier leading = () -> true;
    /** nodeId → monotonic time of its last registration/heartbeat. */
    public final Map<String, Long> lastSeenNanos = new ConcurrentHashMap<>();
    /** nodeId → wall time of its last registration/heartbeat, ms since the epoch (display only). */
    public final Map<String, Long> lastSeenWallMs = new ConcurrentHashMap<>();
    /** nodeId → freeBytes from the last registration/heartbeat. */
    public final Map<String, Long> reportedFreeBytes = new ConcurrentHashMap<>();
    /** nodeId → its background budget in effect, from its last heartbeat (absent: none reported). */
    public final Map<String, io.rdmablock.mgmt.client.BackgroundInEffect> reportedBackground =
            new ConcurrentHashMap<>();
    /** copyKey → that copy's report in its node's last heartbeat (absent: not reported). */
    public final Map<String, VolumeReport> reports = new ConcurrentHashMap<>();
    /** copyKeys of copies whose node held them and did not report them in its last heartbeat (data lost). */
    public final Set<String> missingOnNode = ConcurrentHashMap.newKeySet();
    /** copyKeys of copies of deleting volumes their node no longer reports (deleted there). */
    public final Set<String> deletedOnNode = ConcurrentHashMap.newKeySet();
    /** copyKey → monotonic time of the last unreachable report about that copy. */
    public final Map<String, Long> unreachableAtNanos = new ConcurrentHashMap<>();
    /**
     * volumeId → (nodeId → monotonic time of the last heartbeat answer that told that node it was the primary):
     * what a new primary must wait out (docs/resync.md, "Lease on a switchover").
     */
    public final Map<String, Map<String, Long>> toldPrimaryAtNanos = new ConcurrentHashMap<>();
    /** volumeId → the resyncs its primary reported in its last heartbeat. */
    public final Map<String, List<ResyncProgress>> resyncs = new ConcurrentHashMap<>();
    /** copyKey → syncedBytes last counted into {@link #resyncBytesTotal}. */
    public final Map<String, Long> resyncCounted = new ConcurrentHashMap<>();
    /** Bytes copied by resyncs, from the primaries' reports, since this server started. */
    public final java.util.concurrent.atomic.AtomicLong resyncBytesTotal = new java.util.concurrent.atomic.AtomicLong();
    /**
     * nodeId → monotonic start of a heartbeat of that node being answered now: an answer built from a record read
     * before a concurrent promotion may still tell that node it is primary, so a new primary waits out a full lease
     * from that start ({@code Promotions.leaseWaitMs}).
     */
    public final Map<String, Long> heartbeatInFlightNanos = new ConcurrentHashMap<>();
    /** volumeId → the latest verify run (as asked, then as the primary reported it). */
    public final Map<String, VerifyReport> verifies = new ConcurrentHashMap<>();
    /** nodeId → ids of volumes whose copy there was removed from the record: its node must delete it. */
    public final Map<String, Map<String, VolumeRecord>> retired = new ConcurrentHashMap<>();
    /** copyKeys of copies added as replacements (runtime only; see {@code Rebuilds}). */
    public final Set<String> replacements = ConcurrentHashMap.newKeySet();

    public ClusterState(MetadataStore store, LongSupplier wallMs, LongSupplier monoNanos, long nodeTimeoutMs, long leaseMs,
                 long rebuildAfterMs) {
        this.store = Objects.requireNonNull(store, "store");
        this.wallMs = Objects.requireNonNull(wallMs, "wallMs");
        this.monoNanos = Objects.requireNonNull(monoNanos, "monoNanos");
        this.nodeTimeoutMs = nodeTimeoutMs;
        this.leaseMs = leaseMs;
        this.rebuildAfterMs = rebuildAfterMs;
        this.startedAtNanos = monoNanos.getAsLong();
    }

    public long now() {
        return monoNanos.getAsLong();
    }

    /** @return true while this server may decide: checked before each decision of the sweep */
    public boolean leading() {
        return leading.getAsBoolean();
    }

    /**
     * A new term as leader: the runtime state of an earlier term (or of following) is dropped, and every node counts
     * as last seen now, so nothing is declared lost or down before a full lease (node timeout, rebuild delay) has
     * passed under this leader. Display times (lastHeartbeat) stay unknown until the node's first heartbeat here.
     */
    public void takeOver() {
        long now = now();
        startedAtNanos = now;
        lastSeenNanos.clear();
        lastSeenWallMs.clear();
        reportedFreeBytes.clear();
        reportedBackground.clear();
        reports.clear();
        missingOnNode.clear();
        deletedOnNode.clear();
        unreachableAtNanos.clear();
        toldPrimaryAtNanos.clear();
        resyncs.clear();
        resyncCounted.clear();
        verifies.clear();
        retired.clear();
        replacements.clear();
        for (NodeRecord n : store.nodes()) {
            lastSeenNanos.put(n.nodeId(), now);
        }
    }

    /** @return ms elapsed on the monotonic clock since {@code nanos} */
    public long elapsedMs(long sinceNanos) {
        return Math.floorDiv(now() - sinceNanos, 1_000_000L);
    }

    public static String copyKey(String volumeId, String nodeId) {
        return volumeId + "/" + nodeId;
    }

    /** Monotonic time of the node's last registration or heartbeat, or this service's start when none since. */
    public long lastSeen(String nodeId) {
        Long seen = lastSeenNanos.get(nodeId);
        return seen == null ? startedAtNanos : seen;
    }

    public void seen(String nodeId) {
        lastSeenNanos.put(nodeId, now());
        lastSeenWallMs.put(nodeId, wallMs.getAsLong());
    }

    public NodeState stateOf(NodeRecord node) {
        Long seen = lastSeenNanos.get(node.nodeId());
        if (seen == null || elapsedMs(seen) > nodeTimeoutMs) {
            return NodeState.DOWN;
        }
        return node.draining() ? NodeState.DRAINING : NodeState.UP;
    }

    public boolean nodeDown(String nodeId) {
        return store.node(nodeId).map(n -> stateOf(n) == NodeState.DOWN).orElse(true);
    }

    /**
     * The QoS activity (held commands, delay) the primary of {@code v} reported in its node's last heartbeat; null
     * when none was reported or the node is down (a number from a dead node is not "now"). Memory only.
     */
    public io.rdmablock.mgmt.client.QosActivity qosActivity(VolumeRecord v) {
        VolumeReport r = reports.get(copyKey(v.id(), v.nodeId()));
        return r == null || nodeDown(v.nodeId()) ? null : r.qosActivity();
    }

    /** True when {@code nodeId} registered or heartbeated within the lease. */
    public boolean leaseHeld(String nodeId) {
        Long seen = lastSeenNanos.get(nodeId);
        return seen != null && elapsedMs(seen) <= leaseMs;
    }

    /**
     * True when {@code nodeId} heartbeated within half the lease: a candidate for promotion. Stricter than the lease
     * so that a node that died with the primary is not promoted in its turn.
     */
    public boolean heartbeatFresh(String nodeId) {
        Long seen = lastSeenNanos.get(nodeId);
        return seen != null && elapsedMs(seen) <= leaseMs / 2;
    }

    /** @return free bytes of a node for placement (see {@code ClusterService}'s class comment) */
    public long freeBytes(String nodeId) {
        NodeRecord node = store.node(nodeId).orElse(null);
        if (node == null) {
            return 0;
        }
        long placed = 0;
        long notYetReported = 0; // placed or grown since the node's last report: not in its reported free space
        for (VolumeRecord v : store.volumes()) {
            if (v.copyOn(nodeId).isPresent()) {
                placed += v.sizeBytes();
                if (v.state() != VolumeState.DELETING) {
                    VolumeReport r = reports.get(copyKey(v.id(), nodeId));
                    notYetReported += Math.max(0, v.sizeBytes() - (r == null ? 0 : r.sizeBytes()));
                }
            }
        }
        long reported = reportedFreeBytes.getOrDefault(nodeId, node.capacityBytes());
        return Math.max(0, Math.min(reported - notYetReported, node.capacityBytes() - placed));
    }

    public String fabricAddressOf(String nodeId) {
        return store.node(nodeId).map(NodeRecord::fabricAddress).orElse("");
    }

    /**
     * The one way to change the primary or the in-sync set: a compare-and-set against the revision read that raises
     * the epoch by exactly 1.
     *
     * @return false when the record changed since {@code current} was read (nothing written)
     */
    public boolean compareAndSetEpoch(Versioned<VolumeRecord> current, VolumeRecord next) {
        if (next.epoch() != current.value().epoch() + 1) {
            throw new IllegalStateException("invalid epoch: next.epoch=" + next.epoch() + ", must be "
                    + (current.value().epoch() + 1));
        }
        return store.replaceVolume(next.name(), current.revision(), next);
    }

    /** A compare-and-set that keeps the epoch (stale to syncing, a replacement copy added). */
    public boolean compareAndSet(Versioned<VolumeRecord> current, VolumeRecord next) {
        if (next.epoch() != current.value().epoch()) {
            throw new IllegalStateException("invalid epoch: next.epoch=" + next.epoch() + ", must stay "
                    + current.value().epoch());
        }
        return store.replaceVolume(next.name(), current.revision(), next);
    }

    /** Forgets the runtime state of one copy (its volume or its copy is gone from the record). */
    public void forgetCopy(String key) {
        reports.remove(key);
        unreachableAtNanos.remove(key);
        missingOnNode.remove(key);
        deletedOnNode.remove(key);
        resyncCounted.remove(key);
        replacements.remove(key);
    }

    /** Forgets the runtime state of a volume removed from the store. */
    public void forgetVolume(VolumeRecord v) {
        v.copies().forEach(c -> forgetCopy(copyKey(v.id(), c.nodeId())));
        toldPrimaryAtNanos.remove(v.id());
        resyncs.remove(v.id());
        verifies.remove(v.id());
    }

    /**
     * Forgets a deleting volume once no copy's node reports it: one compare-and-delete against the revision read (a
     * record changed meanwhile is judged again at the next heartbeat).
     */
    public void forgetIfDeletedEverywhere(VolumeRecord listed) {
        if (!listed.copies().stream().allMatch(c -> deletedOnNode.contains(copyKey(listed.id(), c.nodeId())))) {
            return;
        }
        Versioned<VolumeRecord> current = store.volumeVersioned(listed.name()).orElse(null);
        if (current == null || !current.value().id().equals(listed.id())) {
            forgetVolume(listed);
            return;
        }
        VolumeRecord v = current.value();
        if (v.state() == VolumeState.DELETING
                && v.copies().stream().allMatch(c -> deletedOnNode.contains(copyKey(v.id(), c.nodeId())))
                && store.removeVolume(v.name(), current.revision())) {
            forgetVolume(v);
        }
    }

    public static String describe(VolumeRecord v) {
        return String.join(", ", v.copies().stream()
                .map(c -> c.nodeId() + " " + c.role().wireName() + " " + c.state().wireName()).toList());
    }

    public static ApiException copyNotFound(VolumeRecord v, String nodeId) {
        return new ApiException(404, ProblemTypes.COPY_NOT_FOUND, "Copy not found", "invalid nodeId: nodeId=" + nodeId
                + " holds no copy of volume " + v.name() + " (copies: " + describe(v) + ")");
    }

    public static ApiException deleting(VolumeRecord v) {
        return new ApiException(409, ProblemTypes.VOLUME_DELETING, "Volume deleting",
                "volume " + v.name() + " is being deleted");
    }

    public static ApiException contention(String name, String what) {
        return new ApiException(503, ProblemTypes.INTERNAL, "Store contention", "volume " + name + " changed "
                + CAS_ATTEMPTS + " times while " + what + "; retry");
    }

    public static CopyRecord secondary(CopyRecord c, io.rdmablock.mgmt.client.CopyState state) {
        return new CopyRecord(c.nodeId(), io.rdmablock.mgmt.client.CopyRole.SECONDARY, state, c.provisioned());
    }
}
