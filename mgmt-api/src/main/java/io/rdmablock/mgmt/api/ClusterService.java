package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.Volume;
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
 * <p>Placement: a new volume goes to the node that is up (a registration or heartbeat within
 * {@code nodeTimeoutMs}), not draining, and has the most free capacity, where free is
 * {@code min(reported freeBytes - what was placed or grown there since that report, capacityBytes - sum of the
 * sizes of the volumes placed on it)}; ties go to the
 * smaller nodeId. No such node with room: 409 {@link ProblemTypes#NO_CAPACITY} (a conflict with the cluster's state, not a server fault: retry after adding capacity).
 *
 * <p>Reconciliation on heartbeat: a reported volume placed on this node takes the reported connected hosts; a
 * {@code creating} volume becomes {@code ready} when reported {@code ready} at the desired size; a
 * {@code deleting} volume that the node no longer reports is forgotten. Reported volumes unknown here are
 * ignored (the node keeps them as orphans). The first report of a volume marks it provisioned: from then on the
 * desired state tells the node so, and a node that no longer holds it (wiped data directory) does not recreate it
 * empty. A volume whose node is down, or whose node held it and no longer reports it, reads {@code unavailable}
 * (derived when answering, never stored).
 */
public final class ClusterService {
    private final MetadataStore store;
    private final LongSupplier nowMs;
    private final long nodeTimeoutMs;
    /** nodeId → last registration/heartbeat time, ms; runtime only. */
    private final Map<String, Long> lastSeenMs = new ConcurrentHashMap<>();
    /** volumeId → size its node reported in its last heartbeat (absent: not reported); runtime only. */
    private final Map<String, Long> reportedSizeBytes = new ConcurrentHashMap<>();
    /** Volumes whose node held them and did not report them in its last heartbeat (data lost); runtime only. */
    private final java.util.Set<String> missingOnNode = ConcurrentHashMap.newKeySet();
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

    /** Creates and places a volume. Errors: 400 validation, 409 exists or no capacity. */
    public synchronized Volume createVolume(CreateVolumeRequest request) {
        check(() -> Limits.check(request));
        var existing = store.volume(request.name());
        if (existing.isPresent()) {
            throw new ApiException(409, ProblemTypes.VOLUME_EXISTS, "Volume exists",
                    "a volume named " + request.name() + " exists (state " + existing.get().state().wireName()
                            + ")");
        }
        NodeRecord node = place(request.sizeBytes());
        var record = new VolumeRecord(UUID.randomUUID().toString(), request.name(), request.sizeBytes(),
                request.lbaSize(), request.replicas(), request.allowedHosts(), node.nodeId(), VolumeState.CREATING,
                List.of(), nowMs.getAsLong(), false);
        store.putVolume(record);
        return toVolume(record);
    }

    /** @return every volume, ordered by name */
    public synchronized List<Volume> listVolumes() {
        return store.volumes().stream().map(this::toVolume).toList();
    }

    /** @return the volume; 404 when absent */
    public synchronized Volume getVolume(String name) {
        return toVolume(requireVolume(name));
    }

    /** Grows a volume. Errors: 400 bounds or shrink, 404, 409 deleting or no room on its node. */
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
        long free = freeBytes(v.nodeId());
        if (growBytes > free) {
            throw ApiException.noCapacity("node " + v.nodeId() + " has " + free + " bytes free, growing "
                    + name + " to " + sizeBytes + " needs " + growBytes);
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
            if (!v.nodeId().equals(nodeId)) {
                continue;
            }
            VolumeReport r = reported.get(v.id());
            if (r == null) {
                reportedSizeBytes.remove(v.id());
            } else {
                reportedSizeBytes.put(v.id(), r.sizeBytes());
            }
            if (r == null && v.holdsData() && v.state() != VolumeState.DELETING) {
                missingOnNode.add(v.id()); // the node held it and does not report it: its data is gone
            } else {
                missingOnNode.remove(v.id());
            }
            VolumeRecord next = reconcile(v, r);
            if (next == null) {
                store.removeVolume(v.name());
                continue;
            }
            if (!next.equals(v)) {
                store.putVolume(next);
            }
            desired.add(new DesiredVolume(next.id(), next.name(), next.sizeBytes(), next.lbaSize(),
                    next.allowedHosts(), Volume.subnqnOf(next.name()), next.state(), next.holdsData()));
        }
        return new HeartbeatResponse(node.draining(), desired);
    }

    /** @return the record after the node's report, or null when a deleting volume is gone from the node */
    private static VolumeRecord reconcile(VolumeRecord v, VolumeReport r) {
        if (r == null) {
            return v.state() == VolumeState.DELETING ? null : v.withConnectedHosts(List.of());
        }
        VolumeRecord next = v.withConnectedHosts(r.connectedHosts());
        if (!v.provisioned()) {
            next = next.withProvisioned();
        }
        if (v.state() == VolumeState.CREATING && r.state() == VolumeState.READY && r.sizeBytes() == v.sizeBytes()) {
            next = next.withState(VolumeState.READY);
        }
        return next;
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
     * Forgets a node. Errors: 404; 409 {@link ProblemTypes#NODE_IN_USE} while a volume is placed on it (the detail
     * names up to 5). Its runtime state (last heartbeat, free bytes) goes too.
     */
    public synchronized void removeNode(String nodeId) {
        store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        List<String> held = store.volumes().stream().filter(v -> nodeId.equals(v.nodeId()))
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

    private NodeRecord place(long sizeBytes) {
        List<NodeRecord> candidates = store.nodes().stream()
                .filter(n -> stateOf(n) == NodeState.UP)
                .sorted(Comparator.comparingLong((NodeRecord n) -> freeBytes(n.nodeId())).reversed()
                        .thenComparing(NodeRecord::nodeId))
                .toList();
        if (candidates.isEmpty()) {
            throw ApiException.noCapacity("no storage node is up and not draining (" + store.nodes().size()
                    + " registered, node timeout " + nodeTimeoutMs + " ms)");
        }
        NodeRecord best = candidates.getFirst();
        long free = freeBytes(best.nodeId());
        if (free < sizeBytes) {
            throw ApiException.noCapacity("no node has room for sizeBytes=" + sizeBytes + "; most free is node "
                    + best.nodeId() + " with " + free + " bytes");
        }
        return best;
    }

    private long freeBytes(String nodeId) {
        NodeRecord node = store.node(nodeId).orElse(null);
        if (node == null) {
            return 0;
        }
        long placed = 0;
        long notYetReported = 0; // placed or grown since the node's last report: not in its reported free space
        for (VolumeRecord v : store.volumes()) {
            if (v.nodeId().equals(nodeId)) {
                placed += v.sizeBytes();
                if (v.state() != VolumeState.DELETING) {
                    notYetReported += Math.max(0, v.sizeBytes() - reportedSizeBytes.getOrDefault(v.id(), 0L));
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
        String fabricAddress = store.node(v.nodeId()).map(NodeRecord::fabricAddress).orElse("");
        return new Volume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.replicas(), v.allowedHosts(), v.nodeId(),
                fabricAddress, Volume.subnqnOf(v.name()), 1, reportedState(v), v.connectedHosts(),
                Instant.ofEpochMilli(v.createdAtMs()).toString());
    }

    /**
     * The stored state, or {@code unavailable} while the volume's node is down or no longer holds it (a deleting volume
     * stays deleting).
     */
    private VolumeState reportedState(VolumeRecord v) {
        if (v.state() == VolumeState.DELETING) {
            return v.state();
        }
        NodeRecord node = store.node(v.nodeId()).orElse(null);
        return node == null || stateOf(node) == NodeState.DOWN || missingOnNode.contains(v.id())
                ? VolumeState.UNAVAILABLE : v.state();
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
