package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.resync.Rebuilds;
import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeBackground;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.RegisterNodeRequest;
import io.rdmablock.mgmt.client.VolumeState;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Node lifecycle over the node records of the {@link ClusterState}'s store: registration (with its controller-id
 * ordinal and its node key, {@link NodeKeys}), drain, undrain, key rotation, background budget and removal, each a read-modify-write
 * under {@link #nodeLock}, waited for at most {@value #NODE_LOCK_WAIT_MS} ms (then 503); only the leader writes them.
 * Every write of a record is a compare-and-set ({@link io.rdmablock.mgmt.api.store.MetadataStore#replaceNode})
 * retried from a fresh read, so the key a heartbeat gives a record without one ({@link NodeKeys#withKey}) is never
 * lost. Heartbeats are {@link Heartbeats}'.
 */
public final class NodeRegistry {
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

    /**
     * Result of a registration: the node, whether it is new, and the node credential issued by it (null when the
     * node registered with its own credential, which stays valid).
     */
    public record Registration(Node node, boolean created, String credential) {
        @Override
        public String toString() { // never the credential
            return "Registration[node=" + node + ", created=" + created + ", credential="
                    + (credential == null ? "none" : "issued") + "]";
        }
    }

    /**
     * Registers or re-registers a node (keeps its draining flag, its ordinal and its node key; a new node, or one
     * stored without an ordinal, gets the lowest ordinal 1..62 no other node holds; a new node, or one stored
     * without a key, gets a new key). Errors: 400; 409 {@link ProblemTypes#NO_FREE_ORDINAL}; 503 when the record
     * changed on every compare-and-set attempt.
     *
     * <p>Credentials (docs/authentication.md, "Credentials and scopes"): with the cluster token ({@code caller}
     * null or admin) the registration issues a new node credential, answered once, and the node's previous one
     * stops working (the bootstrap of a new node, and the operator's flow for a node that lost its credential or
     * moved to another address); with the node's own credential it keeps that credential (any address); another
     * node's credential is 403, one not (or no longer) valid 401 ({@link NodeCredentials#authorize}).
     */
    public Registration registerNode(RegisterNodeRequest request, NodeCredentials.Caller caller) {
        ClusterService.check(() -> Limits.check(request));
        return underNodeLock("registration of " + request.nodeId(), () -> {
            boolean own = NodeCredentials.authorize(s.store, caller, request.nodeId());
            return register(request, own ? null : NodeCredentials.issue(request.nodeId()));
        });
    }

    /** A registration with the cluster token (tests, tools). */
    public Registration registerNode(RegisterNodeRequest request) {
        return registerNode(request, NodeCredentials.Caller.ADMIN);
    }

    /** @param credential the credential to issue, or null to keep the stored one (a node's own registration) */
    private Registration register(RegisterNodeRequest request, String credential) {
        long now = s.wallMs.getAsLong(); // registeredAtMs: display
        String metricsUrl = request.metricsUrl() == null ? "" : request.metricsUrl();
        String issuedHash = credential == null ? null : NodeCredentials.hash(credential);
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            var old = s.store.node(request.nodeId());
            int ordinal = old.map(NodeRecord::ordinal).filter(o -> o > 0)
                    .orElseGet(() -> freeOrdinal(request.nodeId()));
            String key = old.map(NodeRecord::nodeKey).orElseGet(NodeKeys::newKey);
            String credentialHash = issuedHash != null ? issuedHash : old.map(NodeRecord::credentialHash).orElse(null);
            var record = new NodeRecord(request.nodeId(), request.fabricAddress(), metricsUrl,
                    request.capacityBytes(), old.map(NodeRecord::draining).orElse(false),
                    old.map(NodeRecord::registeredAtMs).orElse(now), ordinal, key, credentialHash,
                    old.map(NodeRecord::background).orElse(null));
            if (record.equals(old.orElse(null)) || s.store.replaceNode(record.nodeId(), old.orElse(null), record)) {
                s.seen(record.nodeId());
                s.reportedFreeBytes.put(record.nodeId(), request.freeBytes());
                return new Registration(toNode(record), old.isEmpty(), credential);
            }
        }
        throw NodeKeys.contention(request.nodeId(), "registering it");
    }

    /**
     * Changes a node's record by compare-and-set from a fresh read (retried on a conflict); no write when
     * {@code change} returns an equal record.
     *
     * @return the record as stored after the change
     * @throws ApiException 404 when the node is not registered; 503 when it changed on every attempt
     */
    private NodeRecord change(String nodeId, String what, UnaryOperator<NodeRecord> change) {
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            NodeRecord node = s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId));
            NodeRecord next = change.apply(node);
            if (next.equals(node) || s.store.replaceNode(nodeId, node, next)) {
                return next;
            }
        }
        throw NodeKeys.contention(nodeId, what);
    }

    /**
     * Gives a node a new node key (docs/authentication.md, "Node identities"): the node learns it from its next
     * heartbeat answer, and every peer node the new secrets of its link to it from theirs (until both have, a link
     * between them may fail authentication and is retried by the node). Errors: 404; 503.
     *
     * @return the new key's fingerprint ({@link NodeKeys#fingerprint}), never the key
     */
    public String rotateKey(String nodeId) {
        return underNodeLock("key rotation of " + nodeId, () -> NodeKeys.fingerprint(
                change(nodeId, "rotating its node key", n -> n.withNodeKey(NodeKeys.newKey())).nodeKey()));
    }

    /**
     * Sets a node's background budget bounds (docs/qos.md, "Background budget"), stored in its record; the node gets
     * them in its next heartbeat answer and reports what is in effect in the heartbeat after. Errors: 400 naming
     * the field and its bounds ({@link NodeBackground#check}; nothing changes); 404; 503.
     *
     * @param bounds the bounds, or null to go back to the node's start-up values
     * @return the node as stored after the change
     */
    public Node setBackground(String nodeId, NodeBackground bounds) {
        if (bounds != null) {
            ClusterService.check(bounds::check);
        }
        return underNodeLock("background budget of " + nodeId, () -> toNode(change(nodeId,
                "setting its background budget", n -> n.withBackground(bounds))));
    }

    /** @return one node; 404 when it is not registered */
    public Node node(String nodeId) {
        return toNode(s.store.node(nodeId).orElseThrow(() -> ApiException.nodeNotFound(nodeId)));
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
    public Node drainNode(String nodeId) {
        return underNodeLock("drain of " + nodeId, () -> drain(nodeId));
    }

    private Node drain(String nodeId) {
        return toNode(change(nodeId, "draining it", NodeRecord::drained));
    }

    /**
     * Undrains a node: volumes may be placed there again and its copies stop moving (the next sweeps remove
     * replacements not yet in sync). Errors: 404. Idempotent.
     */
    public Node undrainNode(String nodeId) {
        return underNodeLock("undrain of " + nodeId, () -> undrain(nodeId));
    }

    private Node undrain(String nodeId) {
        return toNode(change(nodeId, "undraining it", n -> n.withDraining(false)));
    }

    /**
     * Forgets a node. Its copies are rebuilt on other nodes by the next sweeps ({@link Rebuilds}: a primary there is
     * switched over to an in-sync secondary at once, a replacement copy is added, then the copy is removed from the
     * record); its copies of deleting volumes count as deleted. If the node comes back it registers again, and a copy
     * it still reports that was removed meanwhile is answered {@code deleting}. Errors: 404; 409
     * {@link ProblemTypes#NODE_IN_USE} while it holds a copy that cannot be rebuilt: a volume with no in-sync copy
     * on another node (e.g. a single copy; the detail names up to 5 volumes). Its runtime state goes too.
     */
    public void removeNode(String nodeId) {
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
        s.reportedBackground.remove(nodeId);
        for (VolumeRecord v : s.store.volumes()) {
            if (v.state() == VolumeState.DELETING && v.copyOn(nodeId).isPresent()) {
                s.deletedOnNode.add(ClusterState.copyKey(v.id(), nodeId));
                s.forgetIfDeletedEverywhere(v);
            }
        }
    }

    /** @return every node, ordered by id */
    public List<Node> listNodes() {
        return s.store.nodes().stream().map(this::toNode).toList();
    }

    private Node toNode(NodeRecord n) {
        Long seen = s.lastSeenWallMs.get(n.nodeId());
        return new Node(n.nodeId(), n.fabricAddress(), n.metricsUrl(), n.capacityBytes(), s.freeBytes(n.nodeId()),
                s.stateOf(n), seen == null ? null : Instant.ofEpochMilli(seen).toString(), n.ordinal(), n.background(),
                s.reportedBackground.get(n.nodeId()));
    }
}
