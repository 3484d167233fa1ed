package io.rdmablock.mgmt.api;

import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.VolumeState;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Node lifecycle over the node records of the {@link ClusterState}'s store: registration (with its controller-id
 * ordinal), drain, undrain and removal, each a read-modify-write under {@link #nodeLock}, waited for at most
 * {@value #NODE_LOCK_WAIT_MS} ms (then 503); only the leader writes them. Heartbeats are {@link Heartbeats}'.
 */
final class NodeRegistry {
    /** Longest wait for the node-record lock before a node write answers 503, ms. */
    static final long NODE_LOCK_WAIT_MS = 10_000;
    private final ReentrantLock nodeLock = new ReentrantLock();
    private final ClusterState s;
    private final Rebuilds rebuilds;

    NodeRegistry(ClusterState state, Rebuilds rebuilds) {
        this.s = state;
        this.rebuilds = rebuilds;
    }

    /** Runs a node-record read-modify-write under {@link #nodeLock}, waiting at most {@link #NODE_LOCK_WAIT_MS}. */
    private <T> T underNodeLock(String what, Supplier<T> work) {
        try {
            if (!nodeLock.tryLock(NODE_LOCK_WAIT_MS, TimeUnit.MILLISECONDS)) {
                throw new ApiException(503, ProblemTypes.INTERNAL, "Busy", what + ": another node write has held"
                        + " the node records for " + NODE_LOCK_WAIT_MS + " ms (a slow metadata store?); retry");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiException(503, ProblemTypes.INTERNAL, "Busy", what + ": interrupted");
        }
        try {
            return work.get();
        } finally {
            nodeLock.unlock();
        }
    }

    /** Result of a registration: the node and whether it is new. */
    record Registration(Node node, boolean created) {
    }

    /**
     * Registers or re-registers a node (keeps its draining flag and its ordinal; a new node, or one stored without
     * an ordinal, gets the lowest ordinal 1..62 no other node holds). Errors: 400; 409
     * {@link ProblemTypes#NO_FREE_ORDINAL}.
     */
    Registration registerNode(RegisterNodeRequest request) {
        ClusterService.check(() -> Limits.check(request));
        return underNodeLock("registration of " + request.nodeId(), () -> register(request));
    }

    private Registration register(RegisterNodeRequest request) {
        long now = s.wallMs.getAsLong(); // registeredAtMs: display
        var old = s.store.node(request.nodeId());
        String metricsUrl = request.metricsUrl() == null ? "" : request.metricsUrl();
        int ordinal = old.map(NodeRecord::ordinal).filter(o -> o > 0).orElseGet(() -> freeOrdinal(request.nodeId()));
        var record = new NodeRecord(request.nodeId(), request.fabricAddress(), metricsUrl, request.capacityBytes(),
                old.map(NodeRecord::draining).orElse(false), old.map(NodeRecord::registeredAtMs).orElse(now), ordinal);
        if (!record.equals(old.orElse(null))) {
            s.store.putNode(record);
        }
        s.seen(record.nodeId());
        s.reportedFreeBytes.put(record.nodeId(), request.freeBytes());
        return new Registration(toNode(record), old.isEmpty());
    }

    /** @return the lowest ordinal 1..62 no other registered node holds; 409 when none is free */
    private int freeOrdinal(String nodeId) {
        var used = new HashSet<Integer>();
        for (NodeRecord n : s.store.nodes()) {
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

    /**
     * Drains a node: no new volumes go there, and every copy on it gets a replacement elsewhere; a primary there is
     * switched over once its replacement is in sync ({@link Rebuilds}, at the next sweeps). Errors: 404. Idempotent.
     */
    Node drainNode(String nodeId) {
        return underNodeLock("drain of " + nodeId, () -> drain(nodeId));
    }

    private Node drain(String nodeId) {
        NodeRecord node = s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        if (!node.draining()) {
            node = node.drained();
            s.store.putNode(node);
        }
        return toNode(node);
    }

    /**
     * Undrains a node: volumes may be placed there again and its copies stop moving (the next sweeps remove
     * replacements not yet in sync). Errors: 404. Idempotent.
     */
    Node undrainNode(String nodeId) {
        return underNodeLock("undrain of " + nodeId, () -> undrain(nodeId));
    }

    private Node undrain(String nodeId) {
        NodeRecord node = s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        if (node.draining()) {
            node = node.withDraining(false);
            s.store.putNode(node);
        }
        return toNode(node);
    }

    /**
     * Forgets a node. Its copies are rebuilt on other nodes by the next sweeps ({@link Rebuilds}: a primary there is
     * switched over to an in-sync secondary at once, a replacement copy is added, then the copy is removed from the
     * record); its copies of deleting volumes count as deleted. If the node comes back it registers again, and a copy
     * it still reports that was removed meanwhile is answered {@code deleting}. Errors: 404; 409
     * {@link ProblemTypes#NODE_IN_USE} while it holds a copy that cannot be rebuilt: a volume with no in-sync copy
     * on another node (e.g. a single copy; the detail names up to 5 volumes). Its runtime state goes too.
     */
    void removeNode(String nodeId) {
        underNodeLock("removal of " + nodeId, () -> {
            remove(nodeId);
            return null;
        });
    }

    private void remove(String nodeId) {
        s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
        List<String> held = rebuilds.notRebuildable(nodeId);
        if (!held.isEmpty()) {
            throw new ApiException(409, ProblemTypes.NODE_IN_USE, "Node in use", "node " + nodeId + " holds "
                    + held.size() + " volume(s) with no in-sync copy elsewhere to rebuild from ("
                    + String.join(", ", held.subList(0, Math.min(5, held.size())))
                    + (held.size() > 5 ? ", ..." : "") + "): delete them first");
        }
        s.store.removeNode(nodeId);
        s.lastSeenNanos.remove(nodeId);
        s.lastSeenWallMs.remove(nodeId);
        s.reportedFreeBytes.remove(nodeId);
        for (VolumeRecord v : s.store.volumes()) {
            if (v.state() == VolumeState.DELETING && v.copyOn(nodeId).isPresent()) {
                s.deletedOnNode.add(ClusterState.copyKey(v.id(), nodeId));
                s.forgetIfDeletedEverywhere(v);
            }
        }
    }

    /** @return every node, ordered by id */
    List<Node> listNodes() {
        return s.store.nodes().stream().map(this::toNode).toList();
    }

    private Node toNode(NodeRecord n) {
        Long seen = s.lastSeenWallMs.get(n.nodeId());
        return new Node(n.nodeId(), n.fabricAddress(), n.metricsUrl(), n.capacityBytes(), s.freeBytes(n.nodeId()),
                s.stateOf(n), seen == null ? null : Instant.ofEpochMilli(seen).toString(), n.ordinal());
    }
}
