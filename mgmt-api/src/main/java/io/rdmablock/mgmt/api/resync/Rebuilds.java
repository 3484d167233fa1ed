package io.rdmablock.mgmt.api.resync;

import io.rdmablock.mgmt.api.failover.Promotions;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.VolumeState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Rebuild and drain (docs/resync.md, "Rebuild"). A copy is <em>leaving</em> when its node was removed, has not
 * heartbeated for {@code rebuildAfterMs}, or is draining. Each pass ({@link #sweep}, with the liveness sweep) does at
 * most one compare-and-set per volume, the first that applies:
 * <ol>
 *   <li>a leaving primary on a removed node, or one down past {@code rebuildAfterMs}: the lowest-id in-sync staying
 *       secondary whose node heartbeated within half the lease becomes primary (epoch + 1);</li>
 *   <li>a leaving primary on a draining node, once the staying copies hold {@code replicas} in-sync copies (the
 *       replacement is in sync): the same switchover (epoch + 1); the old primary a stale secondary, leaving;</li>
 *   <li>a leaving secondary, once the staying copies hold {@code replicas} in-sync copies: removed from the record
 *       (epoch + 1); its node is told to delete it if it reports it again ({@link ClusterState#retired});</li>
 *   <li>fewer than {@code replicas} staying copies and at most {@code replicas} copies in all: a replacement is added
 *       (secondary, stale, not provisioned, epoch unchanged), only while the primary's node is up (it is the resync's
 *       source: a single copy on a dead node is not "rebuilt" empty), on the node placement picks: up, not draining, with room
 *       for the volume, holding no copy of it, the most free first (ties: smaller nodeId); the primary resyncs it in
 *       full. The record holds at most {@code replicas + 1} copies;</li>
 *   <li>nothing leaving and more than {@code replicas} copies (e.g. after {@code node undrain}): a copy that is not in
 *       sync (a replacement first) is removed (epoch + 1); when all are in sync, a replacement this server added (if it
 *       knows one: runtime only), else the record keeps the extra copy.</li>
 * </ol>
 * Deleting volumes are left alone. Each change is a compare-and-set ({@link ClusterState}); runs under the sweep's lock.
 */
public final class Rebuilds {
    private static final Logger LOG = LoggerFactory.getLogger(Rebuilds.class);
    private final ClusterState s;
    private final Promotions promotions;
    /** Volumes whose replacement found no node, logged once. */
    private final Set<String> unplacedLogged = ConcurrentHashMap.newKeySet();

    public Rebuilds(ClusterState state, Promotions promotions) {
        this.s = state;
        this.promotions = promotions;
    }

    /** Why a copy leaves, or null when it stays; {@code nodes} by id, read once per pass. */
    private String leaving(CopyRecord c, Map<String, NodeRecord> nodes) {
        NodeRecord node = nodes.get(c.nodeId());
        if (node == null) {
            return "removed";
        }
        if (node.draining()) {
            return "draining";
        }
        if (s.elapsedMs(s.lastSeen(c.nodeId())) > s.rebuildAfterMs) {
            return "down";
        }
        return null;
    }

    /** @return the changes made in this pass (one per volume at most) */
    public int sweep() {
        int changed = 0;
        Map<String, NodeRecord> nodes = new HashMap<>();
        s.store.nodes().forEach(n -> nodes.put(n.nodeId(), n));
        for (VolumeRecord listed : s.store.volumes()) {
            if (!s.leading()) {
                return changed; // lost the lease: stop deciding at once
            }
            if (listed.state() == VolumeState.DELETING || (listed.copies().size() <= listed.replicas()
                    && listed.copies().stream().allMatch(c -> leaving(c, nodes) == null))) {
                continue; // nothing to do: no store read beyond the listing
            }
            Versioned<VolumeRecord> current = s.store.volumeVersioned(listed.name()).orElse(null);
            if (current != null && step(current, nodes)) {
                changed++;
            }
        }
        return changed;
    }

    private boolean step(Versioned<VolumeRecord> current, Map<String, NodeRecord> nodes) {
        VolumeRecord v = current.value();
        List<CopyRecord> leavingCopies = v.copies().stream().filter(c -> leaving(c, nodes) != null).toList();
        List<CopyRecord> staying = v.copies().stream().filter(c -> leaving(c, nodes) == null).toList();
        long stayingInSync = staying.stream().filter(c -> c.state() == CopyState.IN_SYNC).count();
        Set<String> leavingIds = leavingCopies.stream().map(CopyRecord::nodeId).collect(Collectors.toSet());
        CopyRecord primary = v.primary();
        String primaryLeaving = leaving(primary, nodes);
        if (primaryLeaving != null && v.copies().size() > 1) {
            boolean gone = !primaryLeaving.equals("draining");
            if (gone || stayingInSync >= v.replicas()) {
                CopyRecord candidate = promotions.freshInSyncSecondary(v, leavingIds);
                if (candidate != null) {
                    return promotions.switchover(current, candidate.nodeId(), "primary's node " + primaryLeaving);
                }
            }
        }
        if (stayingInSync >= v.replicas()) {
            for (CopyRecord c : leavingCopies) {
                if (c.role() == CopyRole.SECONDARY) {
                    return remove(current, c, leaving(c, nodes));
                }
            }
        }
        boolean sourceUp = (primaryLeaving == null || primaryLeaving.equals("draining"))
                && !s.nodeDown(primary.nodeId()); // the primary resyncs the replacement: it must be serving
        if (!leavingCopies.isEmpty() && staying.size() < v.replicas() && v.copies().size() <= v.replicas()
                && sourceUp) {
            return addReplacement(current);
        }
        if (leavingCopies.isEmpty() && v.copies().size() > v.replicas()) {
            CopyRecord extra = v.copies().stream()
                    .filter(c -> c.role() == CopyRole.SECONDARY && (c.state() != CopyState.IN_SYNC
                            || s.replacements.contains(ClusterState.copyKey(v.id(), c.nodeId()))))
                    .min(Comparator.comparing((CopyRecord c) -> c.state() == CopyState.IN_SYNC)
                            .thenComparing(c -> !s.replacements.contains(ClusterState.copyKey(v.id(), c.nodeId())))
                            .thenComparing(CopyRecord::nodeId))
                    .orElse(null);
            if (extra != null) {
                return remove(current, extra, "no longer needed (nothing leaves)");
            }
        }
        return false;
    }

    private boolean remove(Versioned<VolumeRecord> current, CopyRecord gone, String why) {
        VolumeRecord v = current.value();
        var rest = new ArrayList<CopyRecord>();
        v.copies().stream().filter(c -> !c.nodeId().equals(gone.nodeId())).forEach(rest::add);
        VolumeRecord next = v.withCopies(v.epoch() + 1, rest);
        if (!s.compareAndSetEpoch(current, next)) {
            return false;
        }
        s.forgetCopy(ClusterState.copyKey(v.id(), gone.nodeId()));
        s.retired.computeIfAbsent(gone.nodeId(), k -> new ConcurrentHashMap<>()).put(v.id(), next);
        LOG.warn("volume {}: copy on {} removed ({}), epoch {} -> {}, copies: {}", v.name(), gone.nodeId(), why,
                v.epoch(), next.epoch(), ClusterState.describe(next));
        return true;
    }

    private boolean addReplacement(Versioned<VolumeRecord> current) {
        VolumeRecord v = current.value();
        NodeRecord target = s.store.nodes().stream()
                .filter(n -> s.stateOf(n) == NodeState.UP && v.copyOn(n.nodeId()).isEmpty()
                        && s.elapsedMs(s.lastSeen(n.nodeId())) <= s.rebuildAfterMs // not leaving itself
                        && s.freeBytes(n.nodeId()) >= v.sizeBytes())
                .min(Comparator.comparingLong((NodeRecord n) -> -s.freeBytes(n.nodeId()))
                        .thenComparing(NodeRecord::nodeId))
                .orElse(null);
        if (target == null) {
            if (unplacedLogged.add(v.name())) {
                LOG.error("volume {}: a copy must be rebuilt (copies: {}) but no node is up, not draining, has room "
                        + "for {} bytes and holds no copy of it; retried every sweep", v.name(),
                        ClusterState.describe(v), v.sizeBytes());
            }
            return false;
        }
        var copies = new ArrayList<>(v.copies());
        copies.add(new CopyRecord(target.nodeId(), CopyRole.SECONDARY, CopyState.STALE, false));
        VolumeRecord next = v.withCopies(v.epoch(), copies);
        if (!s.compareAndSet(current, next)) {
            return false;
        }
        unplacedLogged.remove(v.name());
        s.replacements.add(ClusterState.copyKey(v.id(), target.nodeId()));
        var retiredThere = s.retired.get(target.nodeId());
        if (retiredThere != null) {
            retiredThere.remove(v.id()); // placed there again: its node keeps (and resyncs) what it has
        }
        LOG.warn("volume {}: replacement copy on {} added (stale, full resync by the primary), copies: {}", v.name(),
                target.nodeId(), ClusterState.describe(next));
        return true;
    }

    /**
     * Whether {@code node remove} may proceed for a node holding copies: every non-deleting volume with a copy there
     * has an in-sync copy on another node (so the copy can be rebuilt from it).
     *
     * @return the names of the volumes that cannot be rebuilt (empty: may proceed)
     */
    public List<String> notRebuildable(String nodeId) {
        var out = new ArrayList<String>();
        for (VolumeRecord v : s.store.volumes()) {
            if (v.copyOn(nodeId).isEmpty() || v.state() == VolumeState.DELETING) {
                continue;
            }
            boolean otherInSync = v.copies().stream()
                    .anyMatch(c -> !c.nodeId().equals(nodeId) && c.state() == CopyState.IN_SYNC);
            if (!otherInSync) {
                out.add(v.name());
            }
        }
        return out;
    }
}
