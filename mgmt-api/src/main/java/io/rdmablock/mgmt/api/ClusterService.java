package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.MarkCopyStaleRequest;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.PromoteRequest;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.UnreachableReport;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volume lifecycle, placement and node reconciliation over a {@link MetadataStore}. Every public method is
 * synchronized: one writer, so read-modify-write sequences on the store are consistent. Time comes from the
 * {@code nowMs} supplier so tests can step a clock.
 *
 * <p>Placement (docs/replication.md): the {@code replicas} copies of a new volume go to distinct nodes that are up
 * (a registration or heartbeat within {@code nodeTimeoutMs}), not draining, and have room, the ones with the most
 * free capacity first, where free is {@code min(reported freeBytes - what was placed or grown there since that
 * report, capacityBytes - sum of the sizes of the copies placed on it)}; ties go to the smaller nodeId. The first
 * chosen holds the primary. Fewer such nodes than replicas: 409 {@link ProblemTypes#INSUFFICIENT_NODES} with
 * {@code needed} and {@code available}; for a single copy it stays 409 {@link ProblemTypes#NO_CAPACITY} as before
 * replication (a conflict with the cluster's state, not a server fault: retry after adding nodes or capacity).
 *
 * <p>Reconciliation on heartbeat, per copy on the reporting node: the primary's report gives the connected hosts;
 * the first report of a copy marks it provisioned (from then on the desired state tells that node so, and a node
 * that no longer holds it, e.g. a wiped data directory, does not recreate it empty); a {@code creating} volume
 * becomes {@code ready} when the primary and every other {@code in_sync} copy whose node is up reported it
 * {@code ready} at the desired size (a copy whose node is down is not waited for: its primary drops it from the
 * in-sync set at the first write it misses; a stale or syncing copy is resync's business); a {@code deleting}
 * volume is forgotten once no copy's node reports it. Reported volumes unknown here are ignored (the node keeps
 * them as orphans). Derived when answering, never stored: {@code unavailable} while the primary's node is down or
 * no longer holds its copy; {@code degraded} while a {@code ready} volume has fewer in-sync copies than replicas.
 *
 * <p>Epoch: every change of the primary or of the in-sync set is a compare-and-set on the store
 * ({@link MetadataStore#replaceVolume}) that raises the epoch by exactly 1 ({@link #compareAndSetEpoch}). Other
 * volume writes (connected hosts, provisioned, state) are plain puts under this service's lock; with more than one
 * management server (etcd) they too must become compare-and-sets.
 *
 * <p>Failover (docs/failover.md, "Promotion"): liveness for promotion is the primary lease ({@code leaseMs}, sent in
 * every heartbeat answer), not the node timeout. {@link #sweep} (run every 200 ms by the verticle) promotes, by one
 * compare-and-set (epoch + 1), the lowest-id in-sync secondary whose node heartbeated within half the lease, when the
 * primary's node has no heartbeat within the lease <em>and</em> an unreachable report about the primary's copy
 * ({@link #reportUnreachable}) arrived after its last heartbeat; the old primary becomes a stale secondary. Such a
 * lost primary makes the volume {@code unavailable} at once (not only after the node timeout). The node timeout
 * keeps its meaning for everything else: a node's {@code up}/{@code down} state, placement, readiness.
 * {@link #promote} is the operator's explicit promotion.
 */
public final class ClusterService {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterService.class);
    /** Default primary lease, ms (docs/failover.md "Timing defaults"). */
    public static final long DEFAULT_LEASE_MS = 2_000;
    private final MetadataStore store;
    private final LongSupplier nowMs;
    private final long nodeTimeoutMs;
    private final long leaseMs;
    /** When this service started, ms: a node not seen since counts as last seen then (no promotion at start-up). */
    private final long startedAtMs;
    /** copyKey → time (ms) of the last unreachable report about that copy; runtime only. */
    private final Map<String, Long> unreachableAtMs = new ConcurrentHashMap<>();
    /** Names of volumes whose lost primary has no in-sync copy to promote, logged once. */
    private final java.util.Set<String> unpromotableLogged = ConcurrentHashMap.newKeySet();
    private final AtomicLong promotions = new AtomicLong();
    /** nodeId → last registration/heartbeat time, ms; runtime only. */
    private final Map<String, Long> lastSeenMs = new ConcurrentHashMap<>();
    /** copyKey → that copy's report in its node's last heartbeat (absent: not reported); runtime only. */
    private final Map<String, VolumeReport> reports = new ConcurrentHashMap<>();
    /** copyKeys of copies whose node held them and did not report them in its last heartbeat (data lost). */
    private final java.util.Set<String> missingOnNode = ConcurrentHashMap.newKeySet();
    /** copyKeys of copies of deleting volumes their node no longer reports (deleted there); runtime only. */
    private final java.util.Set<String> deletedOnNode = ConcurrentHashMap.newKeySet();
    /** Compare-and-set attempts of one change before giving up (only other writers of the store make one fail). */
    private static final int CAS_ATTEMPTS = 16;
    /** nodeId → freeBytes from the last registration/heartbeat; runtime only. */
    private final Map<String, Long> reportedFreeBytes = new ConcurrentHashMap<>();

    /**
     * @param store         metadata store (not closed by this service)
     * @param nowMs         wall clock in ms since the epoch
     * @param nodeTimeoutMs a node without a heartbeat for longer than this is down, &gt; 0
     */
    public ClusterService(MetadataStore store, LongSupplier nowMs, long nodeTimeoutMs) {
        this(store, nowMs, nodeTimeoutMs, DEFAULT_LEASE_MS);
    }

    /**
     * @param leaseMs the primary lease: a primary whose node has no heartbeat within it (and is reported unreachable)
     *                is replaced, &gt; 0
     */
    public ClusterService(MetadataStore store, LongSupplier nowMs, long nodeTimeoutMs, long leaseMs) {
        this.store = Objects.requireNonNull(store, "store");
        this.nowMs = Objects.requireNonNull(nowMs, "nowMs");
        if (nodeTimeoutMs <= 0) {
            throw Limits.invalid("nodeTimeoutMs", Long.toString(nodeTimeoutMs), "min=1");
        }
        if (leaseMs <= 0) {
            throw Limits.invalid("leaseMs", Long.toString(leaseMs), "min=1");
        }
        this.nodeTimeoutMs = nodeTimeoutMs;
        this.leaseMs = leaseMs;
        this.startedAtMs = nowMs.getAsLong();
    }

    /** @return the primary lease, ms */
    public long leaseMs() {
        return leaseMs;
    }

    /** @return promotions done since start (automatic and explicit), for metrics */
    public long promotions() {
        return promotions.get();
    }

    // ---- volumes ----

    /**
     * Creates and places a volume: epoch 1, every copy in sync. Errors: 400 validation (replicas, minInSync, ...),
     * 409 exists, insufficient nodes or no capacity.
     */
    public synchronized Volume createVolume(CreateVolumeRequest request) {
        check(() -> Limits.check(request));
        var existing = store.volume(request.name());
        if (existing.isPresent()) {
            throw exists(existing.get());
        }
        List<String> nodes = place(request.sizeBytes(), request.replicas()).stream().map(NodeRecord::nodeId).toList();
        var record = VolumeRecord.created(UUID.randomUUID().toString(), request.name(), request.sizeBytes(),
                request.lbaSize(), request.minInSync(), request.allowedHosts(), nodes, nowMs.getAsLong());
        if (!store.replaceVolume(record.name(), 0, record)) { // created meanwhile by another writer of the store
            throw exists(store.volume(request.name()).orElse(record));
        }
        return toVolume(record);
    }

    private static ApiException exists(VolumeRecord v) {
        return new ApiException(409, ProblemTypes.VOLUME_EXISTS, "Volume exists",
                "a volume named " + v.name() + " exists (state " + v.state().wireName() + ")");
    }

    /**
     * A primary drops a secondary from the in-sync set (docs/replication.md): one compare-and-set that makes the
     * copy on {@code nodeId} stale and raises the epoch to {@code request.epoch() + 1}. Judged in this order: 404 no
     * such volume; 409 {@link ProblemTypes#NOT_A_SECONDARY} when {@code nodeId} holds no secondary copy; the
     * current volume when the reporter is the primary and the copy is already stale (a retried report); 409
     * {@link ProblemTypes#EPOCH_MISMATCH} (member {@code epoch}) when the record's epoch is not the reported one; 409
     * {@link ProblemTypes#NOT_PRIMARY} when the reporter is not the primary. Errors also: 400 epoch &lt; 1, bad names.
     */
    public synchronized Volume markCopyStale(String name, String nodeId, MarkCopyStaleRequest request) {
        check(() -> {
            Limits.checkName("name", name);
            Limits.checkName("nodeId", nodeId);
            Limits.check(request);
        });
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            CopyRecord copy = v.copyOn(nodeId).filter(c -> c.role() == CopyRole.SECONDARY).orElseThrow(() ->
                    new ApiException(409, ProblemTypes.NOT_A_SECONDARY, "Not a secondary", "invalid nodeId: nodeId="
                            + nodeId + " holds no secondary copy of volume " + name + " (copies: " + describe(v) + ")"));
            boolean fromPrimary = v.primary().nodeId().equals(request.reporter());
            if (fromPrimary && copy.state() == CopyState.STALE) {
                return toVolume(v);
            }
            if (v.epoch() != request.epoch()) {
                throw new ApiException(Problem.of(ProblemTypes.EPOCH_MISMATCH, "Epoch mismatch", 409,
                                "invalid epoch: epoch=" + request.epoch() + ", volume " + name + " is at epoch "
                                        + v.epoch() + " (read it again and adopt it)")
                        .withExtensions(null, null, v.epoch()));
            }
            if (!fromPrimary) {
                throw new ApiException(409, ProblemTypes.NOT_PRIMARY, "Not the primary", "invalid reporter: reporter="
                        + request.reporter() + ", the primary of volume " + name + " at epoch " + v.epoch()
                        + " is " + v.primary().nodeId());
            }
            VolumeRecord next = v.withEpoch(v.epoch() + 1, copy.withState(CopyState.STALE));
            if (compareAndSetEpoch(current, next)) {
                return toVolume(next);
            }
        }
        throw new ApiException(503, ProblemTypes.INTERNAL, "Store contention", "volume " + name + " changed "
                + CAS_ATTEMPTS + " times while marking copy " + nodeId + " stale; retry");
    }

    /**
     * The one way to change the primary or the in-sync set: a compare-and-set against the revision read that raises
     * the epoch by exactly 1.
     *
     * @return false when the record changed since {@code current} was read (nothing written)
     */
    private boolean compareAndSetEpoch(Versioned<VolumeRecord> current, VolumeRecord next) {
        if (next.epoch() != current.value().epoch() + 1) {
            throw new IllegalStateException("invalid epoch: next.epoch=" + next.epoch() + ", must be "
                    + (current.value().epoch() + 1));
        }
        return store.replaceVolume(next.name(), current.revision(), next);
    }

    private static String describe(VolumeRecord v) {
        return String.join(", ", v.copies().stream()
                .map(c -> c.nodeId() + " " + c.role().wireName() + " " + c.state().wireName()).toList());
    }

    // ---- failover ----

    /**
     * Records that {@code request.reporter()} cannot reach the copy on {@code nodeId} (runtime only, with its time):
     * one of the two signals of a lost primary. A report about an older epoch than the record's is answered but not
     * recorded (epoch 0: unknown, recorded). Errors: 400 bad names or body, 404 no such volume or no copy there.
     */
    public synchronized Volume reportUnreachable(String name, String nodeId, UnreachableReport request) {
        check(() -> {
            Limits.checkName("name", name);
            Limits.checkName("nodeId", nodeId);
            Limits.check(request);
        });
        VolumeRecord v = store.volume(name).orElseThrow(() -> ApiException.volumeNotFound(name));
        v.copyOn(nodeId).orElseThrow(() -> copyNotFound(v, nodeId));
        if (request.epoch() == 0 || request.epoch() >= v.epoch()) {
            unreachableAtMs.put(copyKey(v.id(), nodeId), nowMs.getAsLong());
            LOG.info("unreachable report: volume={}, copy on {}, epoch={}, reporter={}", name, nodeId,
                    request.epoch(), request.reporter());
        } else {
            LOG.info("unreachable report ignored (older epoch {} < {}): volume={}, copy on {}, reporter={}",
                    request.epoch(), v.epoch(), name, nodeId, request.reporter());
        }
        return toVolume(v);
    }

    private static ApiException copyNotFound(VolumeRecord v, String nodeId) {
        return new ApiException(404, ProblemTypes.COPY_NOT_FOUND, "Copy not found", "invalid nodeId: nodeId=" + nodeId
                + " holds no copy of volume " + v.name() + " (copies: " + describe(v) + ")");
    }

    /**
     * One liveness pass (docs/failover.md): every replicated volume whose primary is lost ({@link #primaryLost})
     * gets, by one compare-and-set, its lowest-id in-sync secondary on a node that heartbeated within half the lease
     * as primary (epoch + 1; the old primary a stale secondary). Without such a copy it is left unavailable (logged once).
     *
     * @return the volumes promoted in this pass
     */
    public synchronized int sweep() {
        int promoted = 0;
        for (VolumeRecord listed : store.volumes()) {
            if (listed.state() == VolumeState.DELETING || listed.copies().size() < 2 || !primaryLost(listed)) {
                unpromotableLogged.remove(listed.name());
                continue;
            }
            for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
                Versioned<VolumeRecord> current = store.volumeVersioned(listed.name()).orElse(null);
                if (current == null || !primaryLost(current.value())) {
                    break;
                }
                VolumeRecord v = current.value();
                CopyRecord candidate = v.copies().stream()
                        .filter(c -> c.role() == CopyRole.SECONDARY && c.state() == CopyState.IN_SYNC
                                && heartbeatFresh(c.nodeId()))
                        .min(Comparator.comparing(CopyRecord::nodeId)).orElse(null);
                if (candidate == null) {
                    if (unpromotableLogged.add(v.name())) {
                        LOG.error("volume {} unavailable: its primary on {} is lost (no heartbeat within the lease of "
                                + "{} ms, reported unreachable) and no in-sync copy is on a node that is up (copies: "
                                + "{}); an operator may promote a copy with acceptDataLoss", v.name(),
                                v.primary().nodeId(), leaseMs, describe(v));
                    }
                    break;
                }
                VolumeRecord next = promoted(v, candidate.nodeId(), false);
                if (compareAndSetEpoch(current, next)) {
                    afterPromotion(v, next, "primary lost");
                    promoted++;
                    break;
                }
            }
        }
        return promoted;
    }

    /**
     * The operator's promotion: the copy on {@code request.nodeId()} becomes primary (epoch + 1, the old primary a
     * stale secondary). A copy that is not in sync needs {@code acceptDataLoss} (every other copy then becomes
     * stale: they may hold writes it lacks). Errors: 400; 404 no such volume or copy; 409
     * {@link ProblemTypes#PRIMARY_ALIVE} while the primary's node heartbeats within the lease, 409
     * {@link ProblemTypes#PROMOTE_REFUSED} (already primary, data loss not accepted), 409 deleting.
     */
    public synchronized Volume promote(String name, PromoteRequest request) {
        check(() -> {
            Limits.checkName("name", name);
            Limits.check(request);
        });
        String nodeId = request.nodeId();
        for (int attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw deleting(v);
            }
            CopyRecord copy = v.copyOn(nodeId).orElseThrow(() -> copyNotFound(v, nodeId));
            if (copy.role() == CopyRole.PRIMARY) {
                throw new ApiException(409, ProblemTypes.PROMOTE_REFUSED, "Promote refused", "invalid nodeId: nodeId="
                        + nodeId + " already holds the primary copy of volume " + name + " (epoch " + v.epoch() + ")");
            }
            String primaryNode = v.primary().nodeId();
            if (leaseHeld(primaryNode)) {
                throw new ApiException(409, ProblemTypes.PRIMARY_ALIVE, "Primary alive", "the primary of volume " + name
                        + " on node " + primaryNode + " heartbeated " + (nowMs.getAsLong() - lastSeen(primaryNode))
                        + " ms ago, within the lease of " + leaseMs + " ms: stop that node (or wait) and retry");
            }
            boolean inSync = copy.state() == CopyState.IN_SYNC;
            if (!inSync && !request.acceptDataLoss()) {
                throw new ApiException(409, ProblemTypes.PROMOTE_REFUSED, "Promote refused", "invalid acceptDataLoss: "
                        + "acceptDataLoss=false, the copy on " + nodeId + " is " + copy.state().wireName()
                        + ": writes acknowledged since it left the in-sync set would be lost; repeat with "
                        + "acceptDataLoss=true to promote it anyway");
            }
            VolumeRecord next = promoted(v, nodeId, !inSync);
            if (compareAndSetEpoch(current, next)) {
                afterPromotion(v, next, inSync ? "operator" : "operator, data loss accepted");
                return toVolume(next);
            }
        }
        throw new ApiException(503, ProblemTypes.INTERNAL, "Store contention", "volume " + name + " changed "
                + CAS_ATTEMPTS + " times while promoting " + nodeId + "; retry");
    }

    /**
     * @return {@code v} at epoch + 1 with the copy on {@code newPrimary} primary and in sync, the old primary a stale
     *         secondary, and (othersStale) every other copy stale; no connected hosts until the new primary reports
     */
    private static VolumeRecord promoted(VolumeRecord v, String newPrimary, boolean othersStale) {
        var next = new ArrayList<CopyRecord>();
        for (CopyRecord c : v.copies()) {
            if (c.nodeId().equals(newPrimary)) {
                next.add(new CopyRecord(c.nodeId(), CopyRole.PRIMARY, CopyState.IN_SYNC, c.provisioned()));
            } else if (c.role() == CopyRole.PRIMARY) {
                next.add(new CopyRecord(c.nodeId(), CopyRole.SECONDARY, CopyState.STALE, c.provisioned()));
            } else {
                next.add(othersStale ? c.withState(CopyState.STALE) : c);
            }
        }
        return v.withCopies(v.epoch() + 1, next).withConnectedHosts(List.of());
    }

    private void afterPromotion(VolumeRecord before, VolumeRecord after, String why) {
        promotions.incrementAndGet();
        unreachableAtMs.remove(copyKey(before.id(), before.primary().nodeId()));
        unpromotableLogged.remove(before.name());
        LOG.warn("volume {} promoted ({}): primary {} -> {}, epoch {} -> {}, copies: {}", before.name(), why,
                before.primary().nodeId(), after.primary().nodeId(), before.epoch(), after.epoch(), describe(after));
    }

    /**
     * True when the primary of {@code v} is lost: its node has no heartbeat within the lease and an unreachable report
     * about its copy arrived after that node's last heartbeat.
     */
    private boolean primaryLost(VolumeRecord v) {
        String p = v.primary().nodeId();
        long seen = lastSeen(p);
        if (nowMs.getAsLong() - seen <= leaseMs) {
            return false;
        }
        Long report = unreachableAtMs.get(copyKey(v.id(), p));
        return report != null && report > seen;
    }

    /**
     * True when {@code nodeId} heartbeated within half the lease: a candidate for promotion. Stricter than the lease
     * so that a node that died with the primary (every node killed at once: their last heartbeats are as old as the
     * primary's) is not promoted in its turn, then lost too, leaving a chain of stale copies.
     */
    private boolean heartbeatFresh(String nodeId) {
        Long seen = lastSeenMs.get(nodeId);
        return seen != null && nowMs.getAsLong() - seen <= leaseMs / 2;
    }

    /** True when {@code nodeId} registered or heartbeated within the lease. */
    private boolean leaseHeld(String nodeId) {
        Long seen = lastSeenMs.get(nodeId);
        return seen != null && nowMs.getAsLong() - seen <= leaseMs;
    }

    /** Last registration or heartbeat of the node, or this service's start when none since. */
    private long lastSeen(String nodeId) {
        Long seen = lastSeenMs.get(nodeId);
        return seen == null ? startedAtMs : seen;
    }

    /** @return every volume, ordered by name */
    public synchronized List<Volume> listVolumes() {
        return store.volumes().stream().map(this::toVolume).toList();
    }

    /** @return the volume; 404 when absent */
    public synchronized Volume getVolume(String name) {
        return toVolume(requireVolume(name));
    }

    /** Grows a volume (every copy). Errors: 400 bounds or shrink, 404, 409 deleting or no room on a copy's node. */
    public synchronized Volume resizeVolume(String name, long sizeBytes) {
        check(() -> Limits.checkSize("sizeBytes", sizeBytes));
        VolumeRecord v = requireVolume(name);
        if (v.state() == VolumeState.DELETING) {
            throw deleting(v);
        }
        if (sizeBytes < v.sizeBytes()) {
            throw new ApiException(400, ProblemTypes.SHRINK_NOT_ALLOWED, "Shrink not allowed",
                    "invalid sizeBytes: sizeBytes=" + sizeBytes + ", volumes only grow, min=" + v.sizeBytes()
                            + " (the current size)");
        }
        if (sizeBytes == v.sizeBytes()) {
            return toVolume(v);
        }
        long growBytes = sizeBytes - v.sizeBytes();
        for (CopyRecord c : v.copies()) {
            long free = freeBytes(c.nodeId());
            if (growBytes > free) {
                throw ApiException.noCapacity("node " + c.nodeId() + " (" + c.role().wireName() + " copy) has "
                        + free + " bytes free, growing " + name + " to " + sizeBytes + " needs " + growBytes);
            }
        }
        VolumeRecord grown = v.withSize(sizeBytes, VolumeState.CREATING);
        store.putVolume(grown);
        return toVolume(grown);
    }

    /** Marks a volume deleting. Errors: 404; 409 when a host is connected and not forced. Idempotent. */
    public synchronized Volume deleteVolume(String name, boolean force) {
        VolumeRecord v = requireVolume(name);
        if (v.state() == VolumeState.DELETING) {
            return toVolume(v);
        }
        if (!force && !v.connectedHosts().isEmpty()) {
            throw new ApiException(409, ProblemTypes.VOLUME_IN_USE, "Volume in use",
                    "volume " + name + " has connected hosts " + v.connectedHosts()
                            + "; disconnect them or delete with force=true");
        }
        VolumeRecord d = v.withState(VolumeState.DELETING);
        store.putVolume(d);
        return toVolume(d);
    }

    // ---- nodes ----

    /** Result of a registration: the node and whether it is new. */
    public record Registration(Node node, boolean created) {
    }

    /**
     * Registers or re-registers a node (keeps its draining flag and its ordinal; a new node, or one stored without
     * an ordinal, gets the lowest ordinal 1..62 no other node holds). Errors: 400; 409
     * {@link ProblemTypes#NO_FREE_ORDINAL}.
     */
    public synchronized Registration registerNode(RegisterNodeRequest request) {
        check(() -> Limits.check(request));
        long now = nowMs.getAsLong();
        var old = store.node(request.nodeId());
        String metricsUrl = request.metricsUrl() == null ? "" : request.metricsUrl();
        int ordinal = old.map(NodeRecord::ordinal).filter(o -> o > 0).orElseGet(() -> freeOrdinal(request.nodeId()));
        var record = new NodeRecord(request.nodeId(), request.fabricAddress(), metricsUrl, request.capacityBytes(),
                old.map(NodeRecord::draining).orElse(false), old.map(NodeRecord::registeredAtMs).orElse(now), ordinal);
        if (!record.equals(old.orElse(null))) {
            store.putNode(record);
        }
        lastSeenMs.put(record.nodeId(), now);
        reportedFreeBytes.put(record.nodeId(), request.freeBytes());
        return new Registration(toNode(record), old.isEmpty());
    }

    /** @return the lowest ordinal 1..62 no other registered node holds; 409 when none is free */
    private int freeOrdinal(String nodeId) {
        var used = new java.util.HashSet<Integer>();
        for (NodeRecord n : store.nodes()) {
            if (!n.nodeId().equals(nodeId)) {
                used.add(n.ordinal());
            }
        }
        for (int o = 1; o <= Node.MAX_ORDINAL; o++) {
            if (!used.contains(o)) {
                return o;
            }
        }
        throw new ApiException(409, ProblemTypes.NO_FREE_ORDINAL, "No free ordinal", "invalid nodeId: nodeId=" + nodeId
                + " cannot be registered: every controller-id ordinal 1.." + Node.MAX_ORDINAL
                + " is taken by a registered node (remove one first)");
    }

    /** Records a heartbeat and answers the node's desired state. Errors: 400, 404 unknown node. */
    public synchronized HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        NodeRecord node = store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        check(() -> Limits.checkFree(request.freeBytes(), node.capacityBytes()));
        for (int i = 0; i < request.volumes().size(); i++) {
            VolumeReport r = request.volumes().get(i);
            if (r.id() == null || r.id().isEmpty() || r.state() == null) {
                throw ApiException.validation("invalid volumes[" + i + "]: id and state are required");
            }
        }
        lastSeenMs.put(nodeId, nowMs.getAsLong());
        reportedFreeBytes.put(nodeId, request.freeBytes());

        Map<String, VolumeReport> reported = new HashMap<>();
        for (VolumeReport r : request.volumes()) {
            reported.put(r.id(), r);
        }
        var desired = new ArrayList<DesiredVolume>();
        for (VolumeRecord v : store.volumes()) {
            CopyRecord copy = v.copyOn(nodeId).orElse(null);
            if (copy == null) {
                continue;
            }
            String key = copyKey(v.id(), nodeId);
            VolumeReport r = reported.get(v.id());
            if (r == null) {
                reports.remove(key);
            } else {
                reports.put(key, r);
            }
            if (r == null && copy.provisioned() && v.state() != VolumeState.DELETING) {
                missingOnNode.add(key); // the node held it and does not report it: its data is gone
            } else {
                missingOnNode.remove(key);
            }
            if (v.state() == VolumeState.DELETING) {
                if (r != null) {
                    deletedOnNode.remove(key);
                    desired.add(toDesired(v, copy));
                    continue;
                }
                deletedOnNode.add(key);
                if (v.copies().stream().allMatch(c -> deletedOnNode.contains(copyKey(v.id(), c.nodeId())))) {
                    store.removeVolume(v.name());
                    v.copies().forEach(c -> forgetCopy(copyKey(v.id(), c.nodeId())));
                }
                continue;
            }
            VolumeRecord next = reconcile(v, copy, r);
            if (!next.equals(v)) {
                store.putVolume(next);
            }
            desired.add(toDesired(next, next.copyOn(nodeId).orElseThrow()));
        }
        return new HeartbeatResponse(node.draining(), desired, leaseMs);
    }

    /** @return the record after one copy's node reported (r null: that node does not hold the volume) */
    private VolumeRecord reconcile(VolumeRecord v, CopyRecord copy, VolumeReport r) {
        VolumeRecord next = v;
        if (copy.role() == CopyRole.PRIMARY) { // hosts connect to the primary only
            next = next.withConnectedHosts(r == null ? List.of() : r.connectedHosts());
        }
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
                    || (c.state() == CopyState.IN_SYNC && !nodeDown(c.nodeId()));
            if (!mustReport) {
                continue;
            }
            VolumeReport r = reports.get(copyKey(v.id(), c.nodeId()));
            if (r == null || r.state() != VolumeState.READY || r.sizeBytes() != v.sizeBytes()) {
                return false;
            }
        }
        return true;
    }

    private boolean nodeDown(String nodeId) {
        return store.node(nodeId).map(n -> stateOf(n) == NodeState.DOWN).orElse(true);
    }

    private static String copyKey(String volumeId, String nodeId) {
        return volumeId + "/" + nodeId;
    }

    private void forgetCopy(String key) {
        reports.remove(key);
        unreachableAtMs.remove(key);
        missingOnNode.remove(key);
        deletedOnNode.remove(key);
    }

    private DesiredVolume toDesired(VolumeRecord v, CopyRecord copy) {
        var copies = v.copies().stream().map(c -> new DesiredCopy(c.nodeId(), c.role(), c.state(),
                fabricAddressOf(c.nodeId()), Node.hostnqnOf(c.nodeId()))).toList();
        return new DesiredVolume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.allowedHosts(),
                Volume.subnqnOf(v.name()), v.state(), copy.provisioned(), v.epoch(), copy.role(), v.minInSync(),
                copies, copy.role() == CopyRole.PRIMARY && v.copies().size() > 1 ? leaseWaitMs(v) : null);
    }

    /**
     * How long a primary of {@code v} must still wait before serving, ms: until the lease of every stale copy's node
     * (the old primary is made stale at a promotion) has run out by this server's clock (its last heartbeat + the
     * lease; a node's lease starts when it sends the heartbeat, before this server sees it). Secondaries in sync were
     * never primary of this epoch; a node this server has not seen since its start counts from the start.
     */
    private long leaseWaitMs(VolumeRecord v) {
        long now = nowMs.getAsLong();
        long wait = 0;
        for (CopyRecord c : v.copies()) {
            if (c.role() != CopyRole.PRIMARY && c.state() != CopyState.IN_SYNC) {
                wait = Math.max(wait, lastSeen(c.nodeId()) + leaseMs - now);
            }
        }
        return Math.max(0, wait);
    }

    private String fabricAddressOf(String nodeId) {
        return store.node(nodeId).map(NodeRecord::fabricAddress).orElse("");
    }

    /** Drains a node: no new volumes go there. Errors: 404. Idempotent. */
    public synchronized Node drainNode(String nodeId) {
        NodeRecord node = store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        if (!node.draining()) {
            node = node.drained();
            store.putNode(node);
        }
        return toNode(node);
    }

    /** Undrains a node: volumes may be placed there again. Errors: 404. Idempotent. */
    public synchronized Node undrainNode(String nodeId) {
        NodeRecord node = store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        if (node.draining()) {
            node = node.withDraining(false);
            store.putNode(node);
        }
        return toNode(node);
    }

    /**
     * Forgets a node. Errors: 404; 409 {@link ProblemTypes#NODE_IN_USE} while a copy of a volume is placed on it (the
     * detail names up to 5 volumes). Its runtime state (last heartbeat, free bytes) goes too.
     */
    public synchronized void removeNode(String nodeId) {
        store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        List<String> held = store.volumes().stream().filter(v -> v.copyOn(nodeId).isPresent())
                .map(VolumeRecord::name).toList();
        if (!held.isEmpty()) {
            throw new ApiException(409, ProblemTypes.NODE_IN_USE, "Node in use", "node " + nodeId + " holds "
                    + held.size() + " volume(s) (" + String.join(", ", held.subList(0, Math.min(5, held.size())))
                    + (held.size() > 5 ? ", ..." : "") + "): delete them first");
        }
        store.removeNode(nodeId);
        lastSeenMs.remove(nodeId);
        reportedFreeBytes.remove(nodeId);
    }

    /** @return every node, ordered by id */
    public synchronized List<Node> listNodes() {
        return store.nodes().stream().map(this::toNode).toList();
    }

    /** @return volume counts by state, for metrics */
    public synchronized Map<VolumeState, Long> volumeCounts() {
        var counts = new EnumMap<VolumeState, Long>(VolumeState.class);
        for (VolumeState s : VolumeState.values()) {
            counts.put(s, 0L);
        }
        store.volumes().forEach(v -> counts.merge(reportedState(v), 1L, Long::sum));
        return counts;
    }

    /** @return node counts by state, for metrics */
    public synchronized Map<NodeState, Long> nodeCounts() {
        var counts = new EnumMap<NodeState, Long>(NodeState.class);
        for (NodeState s : NodeState.values()) {
            counts.put(s, 0L);
        }
        store.nodes().forEach(n -> counts.merge(stateOf(n), 1L, Long::sum));
        return counts;
    }

    // ---- helpers ----

    /** @return {@code replicas} distinct nodes for a new volume, the primary's first (see the class comment) */
    private List<NodeRecord> place(long sizeBytes, int replicas) {
        List<NodeRecord> up = store.nodes().stream()
                .filter(n -> stateOf(n) == NodeState.UP)
                .sorted(Comparator.comparingLong((NodeRecord n) -> freeBytes(n.nodeId())).reversed()
                        .thenComparing(NodeRecord::nodeId))
                .toList();
        List<NodeRecord> withRoom = up.stream().filter(n -> freeBytes(n.nodeId()) >= sizeBytes).toList();
        if (withRoom.size() >= replicas) {
            return withRoom.subList(0, replicas);
        }
        if (replicas > 1) {
            throw new ApiException(Problem.of(ProblemTypes.INSUFFICIENT_NODES, "Insufficient nodes", 409,
                    "invalid replicas: replicas=" + replicas + " needs " + replicas + " distinct nodes that are up,"
                            + " not draining and have room for sizeBytes=" + sizeBytes + "; available="
                            + withRoom.size() + " (" + store.nodes().size() + " registered, " + up.size()
                            + " up and not draining, node timeout " + nodeTimeoutMs + " ms)")
                    .withExtensions(replicas, withRoom.size(), null));
        }
        if (up.isEmpty()) {
            throw ApiException.noCapacity("no storage node is up and not draining (" + store.nodes().size()
                    + " registered, node timeout " + nodeTimeoutMs + " ms)");
        }
        NodeRecord best = up.getFirst();
        throw ApiException.noCapacity("no node has room for sizeBytes=" + sizeBytes + "; most free is node "
                + best.nodeId() + " with " + freeBytes(best.nodeId()) + " bytes");
    }

    private long freeBytes(String nodeId) {
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

    private NodeState stateOf(NodeRecord node) {
        Long seen = lastSeenMs.get(node.nodeId());
        if (seen == null || nowMs.getAsLong() - seen > nodeTimeoutMs) {
            return NodeState.DOWN;
        }
        return node.draining() ? NodeState.DRAINING : NodeState.UP;
    }

    private VolumeRecord requireVolume(String name) {
        check(() -> Limits.checkName("name", name));
        return store.volume(name).orElseThrow(() -> ApiException.volumeNotFound(name));
    }

    private static ApiException deleting(VolumeRecord v) {
        return new ApiException(409, ProblemTypes.VOLUME_DELETING, "Volume deleting",
                "volume " + v.name() + " is being deleted");
    }

    private Volume toVolume(VolumeRecord v) {
        var copies = v.copies().stream()
                .map(c -> new VolumeCopy(c.nodeId(), c.role(), c.state(), fabricAddressOf(c.nodeId()))).toList();
        return new Volume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.replicas(), v.allowedHosts(), v.nodeId(),
                fabricAddressOf(v.nodeId()), Volume.subnqnOf(v.name()), 1, reportedState(v), v.connectedHosts(),
                Instant.ofEpochMilli(v.createdAtMs()).toString(), v.epoch(), v.minInSync(), copies);
    }

    /**
     * The stored state; or {@code unavailable} while the primary's node is down, no longer holds its copy, or (a
     * replicated volume) the primary is lost (no heartbeat within the lease and reported unreachable); or
     * {@code degraded} while a ready volume has fewer in-sync copies than replicas (a deleting volume stays deleting).
     */
    private VolumeState reportedState(VolumeRecord v) {
        if (v.state() == VolumeState.DELETING) {
            return v.state();
        }
        if (nodeDown(v.nodeId()) || missingOnNode.contains(copyKey(v.id(), v.nodeId()))
                || (v.copies().size() > 1 && primaryLost(v))) {
            return VolumeState.UNAVAILABLE;
        }
        return v.state() == VolumeState.READY && v.inSyncCount() < v.replicas() ? VolumeState.DEGRADED : v.state();
    }

    private Node toNode(NodeRecord n) {
        Long seen = lastSeenMs.get(n.nodeId());
        return new Node(n.nodeId(), n.fabricAddress(), n.metricsUrl(), n.capacityBytes(), freeBytes(n.nodeId()),
                stateOf(n), seen == null ? null : Instant.ofEpochMilli(seen).toString(), n.ordinal());
    }

    private static void check(Runnable validation) {
        try {
            validation.run();
        } catch (IllegalArgumentException e) {
            throw ApiException.validation(e.getMessage());
        }
    }
}
