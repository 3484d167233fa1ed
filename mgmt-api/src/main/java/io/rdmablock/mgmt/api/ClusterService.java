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
import io.rdmablock.mgmt.client.RegisterNodeRequest;
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
import java.util.function.LongSupplier;

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
 */
public final class ClusterService {
    private final MetadataStore store;
    private final LongSupplier nowMs;
    private final long nodeTimeoutMs;
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
        this.store = Objects.requireNonNull(store, "store");
        this.nowMs = Objects.requireNonNull(nowMs, "nowMs");
        if (nodeTimeoutMs <= 0) {
            throw Limits.invalid("nodeTimeoutMs", Long.toString(nodeTimeoutMs), "min=1");
        }
        this.nodeTimeoutMs = nodeTimeoutMs;
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

    /** Registers or re-registers a node (keeps its draining flag). Errors: 400. */
    public synchronized Registration registerNode(RegisterNodeRequest request) {
        check(() -> Limits.check(request));
        long now = nowMs.getAsLong();
        var old = store.node(request.nodeId());
        String metricsUrl = request.metricsUrl() == null ? "" : request.metricsUrl();
        var record = new NodeRecord(request.nodeId(), request.fabricAddress(), metricsUrl, request.capacityBytes(),
                old.map(NodeRecord::draining).orElse(false), old.map(NodeRecord::registeredAtMs).orElse(now));
        if (!record.equals(old.orElse(null))) {
            store.putNode(record);
        }
        lastSeenMs.put(record.nodeId(), now);
        reportedFreeBytes.put(record.nodeId(), request.freeBytes());
        return new Registration(toNode(record), old.isEmpty());
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
        return new HeartbeatResponse(node.draining(), desired);
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
        missingOnNode.remove(key);
        deletedOnNode.remove(key);
    }

    private DesiredVolume toDesired(VolumeRecord v, CopyRecord copy) {
        var copies = v.copies().stream().map(c -> new DesiredCopy(c.nodeId(), c.role(), c.state(),
                fabricAddressOf(c.nodeId()), Node.hostnqnOf(c.nodeId()))).toList();
        return new DesiredVolume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.allowedHosts(),
                Volume.subnqnOf(v.name()), v.state(), copy.provisioned(), v.epoch(), copy.role(), v.minInSync(),
                copies);
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
     * The stored state; or {@code unavailable} while the primary's node is down or no longer holds its copy; or
     * {@code degraded} while a ready volume has fewer in-sync copies than replicas (a deleting volume stays deleting).
     */
    private VolumeState reportedState(VolumeRecord v) {
        if (v.state() == VolumeState.DELETING) {
            return v.state();
        }
        if (nodeDown(v.nodeId()) || missingOnNode.contains(copyKey(v.id(), v.nodeId()))) {
            return VolumeState.UNAVAILABLE;
        }
        return v.state() == VolumeState.READY && v.inSyncCount() < v.replicas() ? VolumeState.DEGRADED : v.state();
    }

    private Node toNode(NodeRecord n) {
        Long seen = lastSeenMs.get(n.nodeId());
        return new Node(n.nodeId(), n.fabricAddress(), n.metricsUrl(), n.capacityBytes(), freeBytes(n.nodeId()),
                stateOf(n), seen == null ? null : Instant.ofEpochMilli(seen).toString());
    }

    private static void check(Runnable validation) {
        try {
            validation.run();
        } catch (IllegalArgumentException e) {
            throw ApiException.validation(e.getMessage());
        }
    }
}
