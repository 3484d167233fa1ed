package io.rdmablock.node;

import io.rdmablock.node.failover.PrimaryWatch;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.HostSecret;
import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeAgent;
import io.rdmablock.mgmt.client.VolumeReport;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeInfo;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.node.target.HostSecrets;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.node.target.Target;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The pull model: makes the store and the target match the desired volumes of each heartbeat answer (create, grow,
 * update allowed hosts, export under the given subnqn, delete), and reports what the node holds. Runs on the agent
 * thread only. A volume the answer does not list is an orphan: kept on disk, not exported, logged once. A volume the
 * answer marks provisioned that the store does not hold is lost (wiped data directory): never recreated empty.
 *
 * <p>Lease (docs/failover.md): after each answered heartbeat, every subsystem of a replicated volume this node is
 * primary of gets {@code leaseDeadline(sendNanos + leaseMs - }{@value #LEASE_MARGIN_MS}{@code  ms)}, sendNanos being
 * the {@link System#nanoTime()} taken before the heartbeat was sent; past it hosts see ANA Change.
 *
 * <p>DH-HMAC-CHAP secrets (docs/authentication.md, "Managed secrets"): the hosts of each answer
 * ({@link HeartbeatResponse#hosts()}) are merged with the secrets the target had when this object was made (the
 * node's {@code --dhchap-secrets} file) and set on the target when they change, before the volumes are applied; on a
 * conflict the file wins (logged once per host). Each desired volume's {@code requireAuth} is set on its subsystem
 * before the subsystem is published. Both apply to Connects from then on. An answer whose secrets the server withheld
 * ({@link HeartbeatResponse#secretsWithheld()}: no TLS to the management plane) changes none of the secrets applied
 * before; its reason is logged at WARN once and kept ({@link #secretsWithheld()}).
 */
final class MgmtSync implements NodeAgent.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(MgmtSync.class);

    private final VolumeStore store;
    private final Target target;
    private final LongSupplier freeBytes;
    private final Set<String> orphansLogged = new HashSet<>();
    private final Set<String> lostLogged = new HashSet<>();

    private final Replication replication;
    /** The target's secrets at construction (the node's file): always kept, and they win over the server's. */
    private final HostSecrets fileSecrets;
    /** The server's hosts last set on the target (the whole list, secrets included, to see a change). */
    private List<HostSecret> appliedHosts = List.of();
    private final Set<String> conflictsLogged = new HashSet<>();
    /** Safety margin of the lease on the node's clock, ms (docs/failover.md "Timing defaults"). */
    static final long LEASE_MARGIN_MS = 250;
    /** The ordinal the management server gave this node (0: none yet). */
    private volatile int ordinal;

    /** @param replication the copies' roles (replicated volumes), or null on a node that does not replicate */
    MgmtSync(VolumeStore store, Target target, LongSupplier freeBytes, Replication replication) {
        this.store = store;
        this.target = target;
        this.freeBytes = freeBytes;
        this.replication = replication;
        this.fileSecrets = target.hostSecrets();
        this.snapshots = new SnapshotSync(store, replication == null ? id -> null : replication::set);
        this.rollbacks = new RollbackSync(store, target::connectedHosts);
        this.background = replication == null ? null : new BackgroundSync(replication.budget());
    }

    /** The node's background budget as set from the management plane ({@link BackgroundSync}); null without one. */
    private final BackgroundSync background;

    MgmtSync(VolumeStore store, Target target, LongSupplier freeBytes) {
        this(store, target, freeBytes, null);
    }

    /** The snapshots asked of this node's primary copies ({@link SnapshotSync}). */
    private final SnapshotSync snapshots;

    /** The rollbacks asked of every copy ({@link RollbackSync}). */
    private final RollbackSync rollbacks;

    /** The secondary copies' watch of their primaries ({@link PrimaryWatch}). */
    private final PrimaryWatch primaryWatch = new PrimaryWatch();
    /** When each peer node last asked volume {@code id}'s copy here for a peer lease ({@link PrimaryWatch}). */
    private java.util.function.ToLongFunction<String> peerLeaseAsked(String id) {
        io.rdmablock.node.target.Subsystem s = target.subsystemOfVolume(id);
        return s == null ? nqn -> Long.MIN_VALUE : s::peerLeaseAskedNanos;
    }

    /** The lease of the last heartbeat answer, ms (0: none yet, or an older server). */
    private volatile long leaseMs;

    @Override
    public HeartbeatRequest report() {
        List<VolumeReport> reports = new ArrayList<>();
        long now = System.nanoTime();
        for (VolumeInfo v : store.list()) {
            io.rdmablock.node.resync.Resyncs r = replication == null ? null : replication.resyncs(v.id());
            reports.add(new VolumeReport(v.id(), v.sizeBytes(), VolumeState.READY,
                    List.copyOf(target.connectedHosts(v.id())), r == null ? List.of() : r.progress(),
                    r == null ? null : r.verifyReport(),
                    primaryWatch.silence(v.id(), peerLeaseAsked(v.id()), leaseMs, now), snapshots.reports(v.id()))
                    .withRollback(rollbacks.report(v.id())).withQosActivity(qosActivity(v.id())));
        }
        return new HeartbeatRequest(freeBytes.getAsLong(), reports, background == null ? null : background.report());
    }

    /** The volume's held commands and delay under its limits here; null while none ever waited (docs/qos.md). */
    private io.rdmablock.mgmt.client.QosActivity qosActivity(String id) {
        io.rdmablock.node.target.Subsystem s = target.subsystemOfVolume(id);
        if (s == null) {
            return null;
        }
        int held = s.qos().heldCommands();
        double delayed = s.qos().delayedSeconds();
        return held == 0 && delayed == 0 ? null : new io.rdmablock.mgmt.client.QosActivity(held, delayed);
    }

    @Override
    public void registered(Node node) {
        if (node == null || node.ordinal() <= 0) {
            return; // an older server: the target keeps its configured controller ids
        }
        int min = Node.cntlidMin(node.ordinal());
        int max = Node.cntlidMax(node.ordinal());
        if (ordinal != node.ordinal()) {
            ordinal = node.ordinal();
            try {
                target.cntlidRange(min, max);
                LOG.info("controller ids of this node: {}..{} (ordinal {} from the management server)", min, max,
                        node.ordinal());
            } catch (IllegalStateException e) {
                // a host connected before the registration answer: its cntlid came from the configured range
                LOG.warn("controller ids of this node stay in the configured range (ordinal {} from the management "
                        + "server asks {}..{}): {}", node.ordinal(), min, max, e.getMessage());
            }
        }
    }

    /** The ordinal from the last registration answer, 0 before one (or from an older server). */
    int ordinal() {
        return ordinal;
    }

    @Override
    public void apply(HeartbeatResponse desired) {
        apply(desired, System.nanoTime());
    }

    @Override
    public void apply(HeartbeatResponse desired, long sendNanos) {
        if (replication != null) {
            replication.leaseMs(desired.leaseMs());
            replication.peerLeaseMaxMs(desired.peerLeaseMaxMs());
            primaryWatch.update(desired.volumes(), replication.nodeId(), System.nanoTime());
        }
        leaseMs = desired.leaseMs();
        if (background != null) {
            background.apply(desired.background()); // before the volumes: a resync started below gets the new bounds
        }
        if (secretsHandedOut(desired.secretsWithheld())) { // keep what was applied: an empty list here is not "none"
            applyNodeKeys(desired);
            applyHosts(desired.hosts());
            if (!target.hostSecrets().unknownSecrets().isEmpty()) { // handed out again: nothing unknown any more
                target.hostSecrets(target.hostSecrets().withUnknownSecrets(Set.of()));
            }
        } else {
            markUnknownSecrets(desired.hosts());
        }
        applyVolumes(desired);
        grantLimits(desired, sendNanos);
        if (desired.leaseMs() <= 0) {
            return; // an older server: no lease
        }
        long deadline = sendNanos + Math.max(0, desired.leaseMs() - LEASE_MARGIN_MS) * 1_000_000L;
        for (DesiredVolume dv : desired.volumes()) {
            if (dv.role() == CopyRole.PRIMARY && Replication.replicated(dv) && dv.state() != VolumeState.DELETING) {
                Subsystem s = target.subsystemOfVolume(dv.id());
                if (s != null) {
                    s.leaseDeadline(deadline);
                }
            }
        }
    }

    /**
     * Peer lease grants (docs/failover.md, "Peer lease"): each copy this node holds as an in-sync or syncing secondary
     * may grant its primary leases until {@code sendNanos + peerLeaseMaxMs}; every other copy grants none. An answer
     * without peer leases (older server) or without a lease allows none.
     */
    private void grantLimits(HeartbeatResponse desired, long sendNanos) {
        if (replication == null) {
            return;
        }
        long limit = desired.peerLeaseMaxMs() > 0 && desired.leaseMs() > 0
                ? sendNanos + desired.peerLeaseMaxMs() * 1_000_000L : Subsystem.NO_GRANTS;
        for (DesiredVolume dv : desired.volumes()) {
            Subsystem s = target.subsystemOfVolume(dv.id());
            if (s == null) {
                continue;
            }
            CopyState mine = dv.copies().stream().filter(c -> c.nodeId().equals(replication.nodeId()))
                    .map(io.rdmablock.mgmt.client.DesiredCopy::state).findFirst().orElse(null);
            boolean grants = dv.role() == CopyRole.SECONDARY && Replication.replicated(dv)
                    && dv.state() != VolumeState.DELETING && (mine == CopyState.IN_SYNC || mine == CopyState.SYNCING);
            s.grantLimit(grants ? limit : Subsystem.NO_GRANTS);
        }
    }

    /** Why the last heartbeat answer carried no secrets ({@link HeartbeatResponse#secretsWithheld()}), or null. */
    private volatile String secretsWithheld;

    /**
     * Notes whether the server withheld this node's secrets (docs/authentication.md, "Secrets only over TLS"): a
     * reason is logged at WARN when it first comes or changes, and its end at INFO. While they are withheld the node
     * keeps the node key, links and host secrets it applied last (none, if it never got any: then no peer node can
     * connect to its secondary copies and hosts with managed secrets are unknown to it) and goes on serving.
     *
     * @return true when the answer carries the secrets (apply them)
     */
    private boolean secretsHandedOut(String reason) {
        String before = secretsWithheld;
        secretsWithheld = reason;
        if (reason != null && !reason.equals(before)) {
            LOG.warn("the management server withholds this node's secrets ({}; keeping what was applied before: {}): "
                    + "{}", nodeKey == null ? "no node key" : "a node key", appliedHosts.size()
                    + " managed host(s)", reason);
        } else if (reason == null && before != null) {
            LOG.info("the management server hands this node its secrets again");
        }
        return reason == null;
    }

    /**
     * Secrets withheld: the hosts the answer names (without their secrets) that this node has no secret for are
     * refused at Connect ({@link HostSecrets#withUnknownSecrets}) rather than admitted unauthenticated by an
     * allow-list.
     */
    private void markUnknownSecrets(List<HostSecret> hosts) {
        Set<String> names = hosts.stream().filter(h -> h.dhchapSecret() == null).map(HostSecret::hostNqn)
                .collect(Collectors.toCollection(java.util.TreeSet::new));
        HostSecrets current = target.hostSecrets();
        HostSecrets next = current.withUnknownSecrets(names);
        if (!next.unknownSecrets().equals(current.unknownSecrets())) {
            target.hostSecrets(next);
            LOG.warn("{} host(s) have DH-HMAC-CHAP secrets at the management server that it withholds from this "
                    + "node: refused at Connect until the secrets come: {}", next.unknownSecrets().size(),
                    next.unknownSecrets());
        }
    }

    /** Why the management server withheld this node's secrets in its last answer, or null (tests, status). */
    String secretsWithheld() {
        return secretsWithheld;
    }

    /** This node's node key from the last heartbeat answer that had one, or null. */
    private byte[] nodeKey;
    private String appliedNodeKey;
    private List<io.rdmablock.mgmt.client.NodeLink> appliedLinks = List.of();

    /**
     * This node's node key (peer nodes connecting to it are checked with secrets derived from it) and its link
     * secrets toward peer nodes (docs/authentication.md, "Node identities"), when they changed. An answer without a
     * key (an older server) keeps the last one. Before this runs the first time no peer node can connect to a
     * secondary copy of this node, and this node's links to secondaries carry no secret (refused there).
     */
    private void applyNodeKeys(HeartbeatResponse desired) {
        String key = desired.nodeKey();
        if (key != null && !key.equals(appliedNodeKey)) {
            try {
                byte[] k = java.util.Base64.getDecoder().decode(key);
                target.hostSecrets(target.hostSecrets().withNodeKey(k));
                nodeKey = k;
                appliedNodeKey = key;
                LOG.info("node key from the management server applied: peer nodes authenticate with secrets derived "
                        + "from it");
            } catch (IllegalArgumentException e) {
                LOG.warn("node key from the management server not applied: {}", e.getMessage());
            }
        }
        if (replication != null && !desired.links().equals(appliedLinks)) {
            Map<String, io.rdmablock.node.replication.PeerLink.Secrets> m = new LinkedHashMap<>();
            for (io.rdmablock.mgmt.client.NodeLink l : desired.links()) {
                try {
                    m.put(l.nodeId(), new io.rdmablock.node.replication.PeerLink.Secrets(
                            DhchapSecret.parse(l.dhchapSecret()),
                            l.dhchapCtrlSecret() == null ? null : DhchapSecret.parse(l.dhchapCtrlSecret())));
                } catch (IllegalArgumentException e) {
                    LOG.warn("link secrets toward node {} from the management server not applied: {}", l.nodeId(),
                            e.getMessage());
                }
            }
            replication.links(m);
            appliedLinks = desired.links();
        }
    }

    /** Sets the file's secrets merged with the server's hosts on the target, when the server's hosts changed. */
    private void applyHosts(List<HostSecret> hosts) {
        if (hosts.equals(appliedHosts)) {
            return;
        }
        Map<String, HostSecrets.Entry> managed = new LinkedHashMap<>();
        for (HostSecret h : hosts) {
            if (fileSecrets.lookup(h.hostNqn()) != null) {
                if (conflictsLogged.add(h.hostNqn())) {
                    LOG.warn("DH-HMAC-CHAP secrets of hostnqn={} come from both the --dhchap-secrets file and the "
                            + "management server: the file's are used", h.hostNqn());
                }
                continue;
            }
            try {
                managed.put(h.hostNqn(), new HostSecrets.Entry(DhchapSecret.parse(h.dhchapSecret()),
                        h.dhchapCtrlSecret() == null ? null : DhchapSecret.parse(h.dhchapCtrlSecret())));
            } catch (IllegalArgumentException e) { // the server validated it: only a corrupt record gets here
                LOG.warn("DH-HMAC-CHAP secrets of hostnqn={} from the management server not applied: {}",
                        h.hostNqn(), e.getMessage());
            }
        }
        target.hostSecrets(fileSecrets.merged(managed).withNodeKey(nodeKey));
        LOG.info("DH-HMAC-CHAP secrets from the management server applied: {} host(s) (and {} from the file)",
                managed.size(), fileSecrets.size());
        appliedHosts = hosts;
    }

    private void applyVolumes(HeartbeatResponse desired) {
        Map<String, DesiredVolume> byId = desired.volumes().stream()
                .collect(Collectors.toMap(DesiredVolume::id, Function.identity(), (a, b) -> b));
        for (DesiredVolume dv : desired.volumes()) {
            try {
                applyOne(dv);
            } catch (RuntimeException e) {
                LOG.warn("desired volume not applied: id={}, name={}, sizeBytes={}: {}", dv.id(), dv.name(),
                        dv.sizeBytes(), e.toString());
            }
        }
        for (VolumeInfo v : store.list()) {
            if (!byId.containsKey(v.id()) && target.subsystemOfVolume(v.id()) != null) {
                target.removeVolume(v.id());
                if (replication != null) {
                    replication.close(v.id());
                }
            }
            if (!byId.containsKey(v.id()) && orphansLogged.add(v.id())) {
                LOG.warn("orphan volume (unknown to the management server, kept, not exported): id={}, sizeBytes={}",
                        v.id(), v.sizeBytes());
            }
        }
    }

    private void applyOne(DesiredVolume dv) {
        StoreVolume v = store.find(dv.id()).orElse(null);
        if (dv.state() == VolumeState.DELETING) {
            if (v != null || store.isUnavailable(dv.id())) {
                if (replication != null) {
                    replication.close(dv.id());
                }
                target.removeVolume(dv.id());
                store.delete(dv.id());
                LOG.info("volume deleted: id={}, name={}", dv.id(), dv.name());
            }
            return;
        }
        Set<String> hosts = Set.copyOf(dv.allowedHosts());
        if (v == null && dv.provisioned()) {
            // this node held it once and no longer does: its data is gone (data directory wiped, replaced or not
            // mounted). Creating it again would hand hosts an empty namespace as if nothing happened.
            if (lostLogged.add(dv.id())) {
                LOG.error("volume lost: id={}, name={}, sizeBytes={}: the management server says this node holds it, "
                        + "but the data directory has no such volume; not recreating it empty and not exporting it. "
                        + "Restore the data directory (and restart the node), or delete the volume.", dv.id(),
                        dv.name(), dv.sizeBytes());
            }
            return;
        }
        lostLogged.remove(dv.id());
        if (v == null) {
            v = store.create(new VolumeSpec(dv.id(), dv.name(), dv.sizeBytes(), dv.lbaSize(), hosts));
        } else {
            if (v.sizeBytes() < dv.sizeBytes()) {
                long old = v.sizeBytes();
                v = store.resize(dv.id(), dv.sizeBytes());
                LOG.info("volume resized: id={}, sizeBytes={} -> {}", dv.id(), old, v.sizeBytes());
            }
            if (!v.allowedHosts().equals(hosts)) {
                v = store.setAllowedHosts(dv.id(), hosts);
                LOG.info("volume allowed hosts changed: id={}, allowedHosts={}", dv.id(), hosts);
            }
        }
        String subnqn = dv.subnqn() == null || dv.subnqn().isBlank() ? Subsystem.nqnFor(dv.name()) : dv.subnqn();
        Subsystem s = target.subsystemOfVolume(dv.id());
        if (s != null && !s.subnqn().equals(subnqn)) {
            target.removeVolume(dv.id());
            s = null;
        }
        StoreVolume held = v;
        if (s != null && s.requiresAuth() != dv.requireAuth()) {
            s.requireAuth(dv.requireAuth());
            s.revokeHostsWithoutSecrets(target.hostSecrets()); // connected before it was required
            LOG.info("volume requireAuth changed: id={}, requireAuth={}", dv.id(), dv.requireAuth());
        }
        if (s == null && replication != null && Replication.replicated(dv)) {
            // the copy's mode is set before the subsystem is published: never a window in which hosts could
            // connect to a secondary, or write to a primary without replication; a failure exports nothing
            target.addVolume(v, subnqn, sub -> {
                sub.requireAuth(dv.requireAuth());
                sub.qos().apply(dv.qos(), dv.sizeBytes());
                replication.apply(dv, held, sub, store);
            });
        } else if (s == null) {
            target.addVolume(v, subnqn, sub -> {
                sub.requireAuth(dv.requireAuth());
                sub.qos().apply(dv.qos(), dv.sizeBytes());
            });
            if (replication != null) {
                replication.apply(dv, v, target.subsystemOfVolume(dv.id()), store);
            }
        } else if (replication != null) {
            try {
                replication.apply(dv, v, s, store);
            } catch (RuntimeException e) {
                if (Replication.replicated(dv)) {
                    // not in the role the record says: serve nothing rather than serve it in the wrong mode
                    replication.close(dv.id());
                    target.removeVolume(dv.id());
                }
                throw e;
            }
        }
        applyQos(target.subsystemOfVolume(dv.id()), dv);
        rollbacks.apply(dv, v); // before the snapshots: one of the answer may delete the one rolled back to
        snapshots.apply(dv, v);
        orphansLogged.remove(dv.id());
    }

    /**
     * Puts the volume's limits in force on its subsystem (docs/qos.md): every copy gets them, and the I/O queues of a
     * primary (or single copy) enforce them, so a promoted copy enforces the same numbers at once. Nothing changes
     * when they are the same.
     */
    private static void applyQos(Subsystem s, DesiredVolume dv) {
        if (s == null) {
            return;
        }
        io.rdmablock.mgmt.client.VolumeQos before = s.qos().limits();
        s.qos().apply(dv.qos(), dv.sizeBytes());
        if (!before.equals(s.qos().limits())) {
            LOG.info("volume limits changed: id={}, name={}, qos={} -> {}", dv.id(), dv.name(), before,
                    s.qos().limits());
        }
    }
}
