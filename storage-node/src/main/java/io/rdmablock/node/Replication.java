package io.rdmablock.node;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.MgmtClient;
import io.rdmablock.mgmt.client.MgmtException;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.node.io.LocalVolumeIo;
import io.rdmablock.node.target.Subsystem;
import io.rdmablock.node.target.VolumeIo;
import io.rdmablock.node.failover.Activation;
import io.rdmablock.node.replication.ForwardLink;
import io.rdmablock.node.replication.PeerLink;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.ReplicatedVolumeIo;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.nvmf.host.FabricAddress;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Puts each volume's subsystem in the mode its copy's role says (docs/replication.md, "Node channel"): a single copy
 * is plain; a secondary admits only its primary's node host NQN and fences writes by epoch; a primary gets a
 * {@link ReplicaSet} with a {@link PeerLink} per secondary and replicated I/O queues. Runs on the agent thread
 * ({@link MgmtSync}); each link's connection set-up and Keep Alives run on a thread of that link.
 *
 * <p>Promotion (docs/failover.md): when the record makes this node primary of a copy that was a secondary (or whose
 * last replica set was deposed, or, at the first export after a restart, whose persisted epoch is below the
 * record's), the subsystem is marked {@code activating} and stays a secondary (hosts: Inaccessible) while an
 * activation thread builds the replica set at the new epoch, sends the epoch to every in-sync secondary
 * ({@link Activation}: one FLUSH each; one that fails is dropped by CAS) and waits out what the management plane
 * says may be left of the old primary's lease ({@code leaseWaitMs}; one full lease from an older server) from when
 * the promotion was learnt; only then is the subsystem made primary and {@code activating(false)}. The agent thread never
 * waits for it; a demotion meanwhile cancels it. An activation that fails is retried at the next heartbeat.
 * A deposed replica set (another primary's epoch seen on a secondary, docs/failover.md "Old primary") puts the
 * subsystem in {@code activating(true)} (ANA Change) until the record makes this copy a secondary.
 */
final class Replication implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Replication.class);

    private final String nodeId;
    private final VerbsProvider provider;
    private final MgmtClient client;
    private final Path bitmapDir;
    private final long timeoutNs;
    /** Least bound of a forward queue's or peer link's set-up ({@link NodeConfiguration#REPLICA_OPEN_TIMEOUT_MS}). */
    private final long openTimeoutNs;
    private final Map<String, ReplicaSet> sets = new ConcurrentHashMap<>();
    /** Activations in progress, by volume id. */
    private final Map<String, Pending> activations = new ConcurrentHashMap<>();
    private final java.util.concurrent.ExecutorService activationThreads =
            java.util.concurrent.Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "replica-activate");
                t.setDaemon(true);
                return t;
            });
    private final io.rdmablock.node.qos.BackgroundBudget budget;
    /** The node's store (from {@link #apply}), read by resyncs and verifies. */
    private volatile VolumeStore store;
    private final long resyncRetryNs;
    private final java.util.concurrent.atomic.LongAdder resyncBytes;
    /** The primary lease of the last heartbeat answer, ns (0: none, an older server). */
    private volatile long leaseNanos;
    /** The peer lease bound of the last heartbeat answer, ms (0: no peer leases, an older server). */
    private volatile long peerLeaseMaxMs;
    /** When this process started replicating: grants of a previous process ended within a lease of it. */
    private final long startNanos = System.nanoTime();
    /** Peer leases of the replica sets, by volume id. */
    private final Map<String, io.rdmablock.node.failover.PeerLease> peerLeases = new ConcurrentHashMap<>();
    /** Starts the peer lease renewals (each runs on its link's thread). */
    private final java.util.concurrent.ScheduledExecutorService leaseTimer =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "replica-lease");
                t.setDaemon(true);
                return t;
            });

    /** An activation in progress; {@link #cancelled} and the switch to primary are decided under its lock. */
    private static final class Pending {
        final long epoch;
        boolean cancelled;
        volatile boolean finished;

        Pending(long epoch) {
            this.epoch = epoch;
        }
    }

    /**
     * @param timeoutNs replica timeout: a secondary that does not answer a forwarded command within it is dropped
     */
    Replication(String nodeId, VerbsProvider provider, MgmtClient client, Path bitmapDir, long timeoutNs) {
        this(nodeId, provider, client, bitmapDir, timeoutNs, io.rdmablock.node.qos.BackgroundBudget.ofMib(
                io.rdmablock.node.qos.BackgroundBudget.DEFAULT_FLOOR_MIB_S,
                io.rdmablock.node.qos.BackgroundBudget.DEFAULT_CEILING_MIB_S, new io.rdmablock.node.metrics.ForegroundLatency()),
                NodeConfig.DEFAULT_RESYNC_RETRY_MS, new java.util.concurrent.atomic.LongAdder(),
                NodeConfiguration.DEFAULTS.replicaOpenTimeoutNs());
    }

    /**
     * @param budget        the node's background budget, shared by its resyncs and verifies (docs/qos.md)
     * @param resyncRetryMs pause before a failed resync is tried again, ms
     * @param resyncBytes   bytes copied by resyncs (metric)
     * @param openTimeoutNs least bound of a forward queue's or peer link's set-up
     *                      ({@link NodeConfiguration#REPLICA_OPEN_TIMEOUT_MS})
     */
    Replication(String nodeId, VerbsProvider provider, MgmtClient client, Path bitmapDir, long timeoutNs,
                io.rdmablock.node.qos.BackgroundBudget budget, long resyncRetryMs,
                java.util.concurrent.atomic.LongAdder resyncBytes, long openTimeoutNs) {
        this.openTimeoutNs = openTimeoutNs;
        this.budget = budget;
        this.resyncRetryNs = resyncRetryMs * 1_000_000L;
        this.resyncBytes = resyncBytes;
        this.nodeId = nodeId;
        this.provider = provider;
        this.client = client;
        this.bitmapDir = bitmapDir;
        this.timeoutNs = timeoutNs;
        try {
            Files.createDirectories(bitmapDir);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + bitmapDir, e);
        }
    }

    /** True when {@code dv} has more than one copy (the volume is replicated). */
    static boolean replicated(DesiredVolume dv) {
        return dv.copies().size() > 1;
    }

    /** The primary lease the management plane grants (from each heartbeat answer), ms; 0 = none. */
    void leaseMs(long ms) {
        leaseNanos = Math.max(0, ms) * 1_000_000L;
    }

    /** The peer lease bound the management plane sends (each heartbeat answer), ms; 0 = no peer leases. */
    void peerLeaseMaxMs(long ms) {
        peerLeaseMaxMs = Math.max(0, ms);
    }

    /** The node's background budget (docs/qos.md, "Background budget"). */
    io.rdmablock.node.qos.BackgroundBudget budget() {
        return budget;
    }

    /** This node's id. */
    String nodeId() {
        return nodeId;
    }

    /** True while an activation of volume {@code id} is in progress. */
    boolean activating(String id) {
        Pending p = activations.get(id);
        return p != null && !p.finished;
    }

    /** Applies the role of this node's copy of {@code dv} to its subsystem {@code s}. */
    void apply(DesiredVolume dv, io.rdmablock.node.store.StoreVolume v, Subsystem s, VolumeStore store) {
        this.store = store;
        if (!replicated(dv)) {
            close(v.id());
            if (s.mode() != Subsystem.Mode.PLAIN) {
                s.plain();
            }
            s.activating(false);
            return;
        }
        long persistedEpoch = store.epoch(v.id());
        if (dv.epoch() > 0) {
            store.raiseEpoch(v.id(), dv.epoch());
        }
        s.managedEpoch(dv.epoch()); // before any peer is admitted: bounds the epochs its commands may raise
        if (dv.role() == CopyRole.SECONDARY) {
            close(v.id()); // a demoted primary's replica set (and any activation) ends here
            s.activating(false);
            String primaryNqn = dv.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY)
                    .map(DesiredCopy::hostnqn).findFirst().orElse(null);
            if (primaryNqn == null) {
                throw new IllegalStateException("replicated volume without a primary in the record: id=" + v.id()
                        + ", name=" + dv.name() + " (not exported)");
            }
            java.util.Set<String> peers = peerNqns(dv);
            if (s.mode() != Subsystem.Mode.SECONDARY || !primaryNqn.equals(s.primaryHostNqn())
                    || !s.peers().equals(peers)) {
                s.secondaryOf(primaryNqn, peers);
            }
            return;
        }
        Map<String, Boolean> inSync = new HashMap<>();
        for (DesiredCopy c : dv.copies()) {
            if (c.role() == CopyRole.SECONDARY) {
                inSync.put(c.nodeId(), c.state() == CopyState.IN_SYNC);
            }
        }
        ReplicaSet set = sets.get(v.id());
        if (set != null) {
            for (DesiredCopy c : dv.copies()) {
                if (c.role() == CopyRole.SECONDARY) {
                    set.retarget(c.nodeId(), address(c)); // a node restarted on another port
                }
            }
        }
        Pending pending = activations.get(v.id());
        if (pending != null && !pending.finished) {
            if (set != null) { // built by the activation already: adopt the record's later changes
                set.apply(dv.epoch(), dv.minInSync(), inSync, linkFactory(dv));
                set.resyncs().verify(dv.verifyId(), dv.verifySnapshotId());
            }
            return;
        }
        activations.remove(v.id());
        boolean promoted = s.mode() == Subsystem.Mode.SECONDARY
                || (set != null && set.deposed())
                || (set == null && s.mode() == Subsystem.Mode.PLAIN && dv.epoch() > 1 && persistedEpoch < dv.epoch());
        if (promoted) {
            activate(dv, v, s);
            return;
        }
        if (set != null) {
            set.apply(dv.epoch(), dv.minInSync(), inSync, linkFactory(dv));
        } else {
            set = open(dv, v, s, true);
        }
        set.resyncs().verify(dv.verifyId(), dv.verifySnapshotId());
        if (s.mode() != Subsystem.Mode.PRIMARY) {
            if (s.leaseDeadlineNanos() == Long.MAX_VALUE && leaseNanos > 0) {
                // no lease yet (first export): none until this answer's lease is set right after (MgmtSync), so a
                // primary whose agent thread stalls here past its lease cannot serve without one
                s.leaseDeadline(System.nanoTime());
            }
            s.primary(factory(set, v));
        }
    }

    private VolumeIo.Factory factory(ReplicaSet copies, io.rdmablock.node.store.StoreVolume v) {
        int lbaSize = v.lbaSizeBytes();
        return ctx -> new ReplicatedVolumeIo(LocalVolumeIo.open(ctx), copies, ctx.entries(), lbaSize, timeoutNs,
                openTimeoutNs, ctx.protectionDomain());
    }

    /**
     * Starts the activation of a promoted copy (see the class comment) on an activation thread. The subsystem stays
     * out of primary mode until it is done: a secondary stays one (only the old primary's node is admitted, and its
     * writes are refused by the epoch persisted already); a first export is held as a secondary of the old primary.
     */
    private void activate(DesiredVolume dv, io.rdmablock.node.store.StoreVolume v, Subsystem s) {
        long learnt = System.nanoTime();
        // the server says how much of the old primary's lease may be left (null: an older server, wait a full one)
        long lease = dv.leaseWaitMs() == null ? leaseNanos
                : Math.min(leaseNanos + peerLeaseMaxMs * 1_000_000L, Math.max(0, dv.leaseWaitMs()) * 1_000_000L);
        close(v.id()); // a deposed set, if any
        s.grantLimit(Subsystem.NO_GRANTS); // the epoch is raised already: no grant passes its check from here on
        s.activating(true);
        if (s.mode() == Subsystem.Mode.PLAIN) {
            String hold = dv.copies().stream().filter(c -> !c.nodeId().equals(nodeId)).map(DesiredCopy::hostnqn)
                    .findFirst().orElseThrow();
            s.secondaryOf(hold, peerNqns(dv));
        }
        Pending p = new Pending(dv.epoch());
        activations.put(v.id(), p);
        LOG.warn("promoted to primary: volume id={}, name={}, epoch={}: activating (epoch to the in-sync "
                + "secondaries, then {} ms of lease wait) before serving", v.id(), dv.name(), dv.epoch(),
                lease / 1_000_000);
        activationThreads.execute(() -> {
            ReplicaSet set = null;
            Activation.Outcome outcome = Activation.Outcome.FAILED;
            try {
                synchronized (p) {
                    if (p.cancelled) {
                        return;
                    }
                    set = open(dv, v, s, false); // its bitmaps predate another primary's writes: full
                }
                outcome = Activation.run(set, Subsystem.NSID, timeoutNs, openTimeoutNs, learnt, lease, ACTIVATION_BOUND_NS,
                        () -> p.cancelled);
                if (outcome == Activation.Outcome.DONE) {
                    outcome = awaitLocalFence(v, learnt, () -> p.cancelled);
                }
                if (outcome == Activation.Outcome.DONE) {
                    outcome = awaitOwnGrants(s, () -> p.cancelled);
                }
                synchronized (p) {
                    if (outcome == Activation.Outcome.DONE && !p.cancelled) {
                        s.primary(factory(set, v));
                        s.activating(false);
                        LOG.warn("serving as primary: volume id={}, name={}, epoch={}, copies={}", v.id(), dv.name(),
                                set.view().epoch(), set.describe());
                    } else if (!p.cancelled) {
                        LOG.warn("activation failed ({}): volume id={}, name={}; retried at the next heartbeat",
                                outcome, v.id(), dv.name());
                        close(v.id());
                    }
                }
            } catch (RuntimeException e) {
                LOG.error("activation failed: volume id={}, name={}; retried at the next heartbeat", v.id(),
                        dv.name(), e);
                synchronized (p) {
                    if (!p.cancelled) {
                        close(v.id());
                    }
                }
            } finally {
                p.finished = true;
            }
        });
    }

    /**
     * The local copy's epoch barrier (docs/failover.md, "Fencing on a secondary"): the agent raised the epoch on this
     * copy when it learnt of the promotion; a forwarded write of the old primary admitted before that raise may still
     * be in the store. Serving waits until none is ({@link io.rdmablock.node.store.EpochFence#settled}), bounded by
     * {@link #ACTIVATION_BOUND_NS} from {@code learntNanos} (then FAILED: retried at the next heartbeat).
     */
    private static Activation.Outcome awaitLocalFence(io.rdmablock.node.store.StoreVolume v, long learntNanos,
                                                      java.util.function.BooleanSupplier cancelled) {
        while (!v.epochFence().settled()) {
            if (cancelled.getAsBoolean()) {
                return Activation.Outcome.CANCELLED;
            }
            if (System.nanoTime() - learntNanos > ACTIVATION_BOUND_NS) {
                LOG.warn("activation: a write of an older epoch is still in the local store after {} ms: volume={}",
                        ACTIVATION_BOUND_NS / 1_000_000, v.id());
                return Activation.Outcome.FAILED;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        }
        return Activation.Outcome.DONE;
    }

    /**
     * Waits out the peer leases this copy granted the old primary while it was its secondary (docs/failover.md, "Peer
     * lease"): until the latest grant's end ({@link Subsystem#grantedUntilNanos}, read after the epoch was raised, so
     * it covers every grant that passed its checks) and, for grants of a previous process, one lease from this one's
     * start. The old primary needed this copy's grant (it was in sync), so its peer lease ends before.
     */
    private Activation.Outcome awaitOwnGrants(Subsystem s, java.util.function.BooleanSupplier cancelled) {
        long restart = startNanos + leaseNanos;
        long granted = s.grantedUntilNanos();
        long until = granted - restart > 0 ? granted : restart;
        long left = until - System.nanoTime();
        if (left > 0) {
            LOG.info("activation: waiting {} ms for the peer leases this copy granted to end: volume subsystem={}",
                    left / 1_000_000, s.subnqn());
        }
        while (until - System.nanoTime() > 0) {
            if (cancelled.getAsBoolean()) {
                return Activation.Outcome.CANCELLED;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(Math.min(10_000_000L,
                    Math.max(1, until - System.nanoTime())));
        }
        return Activation.Outcome.DONE;
    }

    /** Longest wait for the activation FLUSH (queue set-up, answers and the CAS of drops). */
    static final long ACTIVATION_BOUND_NS = 30_000_000_000L;

    /** A new replica set for this primary: a {@link PeerLink} per secondary. */
    /** Links for copies the record adds later (a rebuild target). */
    private java.util.function.Function<String, ForwardLink> linkFactory(DesiredVolume dv) {
        return node -> {
            DesiredCopy c = dv.copies().stream().filter(x -> x.nodeId().equals(node)).findFirst().orElseThrow();
            return new PeerLink(provider, address(c), dv.subnqn(), Node.hostnqnOf(nodeId), timeoutNs, () -> false,
                    () -> linkSecrets(node), openTimeoutNs);
        };
    }

    /**
     * The host NQNs of the nodes holding the volume's other copies (the primary and those that may succeed it), as
     * the management plane names them: the peer nodes a secondary copy admits (each must authenticate).
     */
    private java.util.Set<String> peerNqns(DesiredVolume dv) {
        java.util.Set<String> peers = new java.util.TreeSet<>();
        for (DesiredCopy c : dv.copies()) {
            if (!c.nodeId().equals(nodeId) && c.hostnqn() != null) {
                peers.add(c.hostnqn());
            }
        }
        return peers;
    }

    /** This node's link secrets toward the nodes it forwards to, by node id (from the heartbeat answer). */
    private volatile Map<String, PeerLink.Secrets> links = Map.of();

    /** Sets this node's link secrets toward peer nodes (a new heartbeat answer's); used by connects from then on. */
    void links(Map<String, PeerLink.Secrets> byNodeId) {
        links = Map.copyOf(byNodeId);
    }

    /** This node's link secrets toward {@code node}, {@link PeerLink.Secrets#NONE} when the server gave none. */
    PeerLink.Secrets linkSecrets(String node) {
        return links.getOrDefault(node, PeerLink.Secrets.NONE);
    }

    /** The volume's copies when this node is its primary, else null. */
    ReplicaSet set(String volumeId) {
        return sets.get(volumeId);
    }

    /** The volume's resyncs' progress and its verify run (heartbeat report), or nulls when not its primary. */
    io.rdmablock.node.resync.Resyncs resyncs(String volumeId) {
        ReplicaSet set = sets.get(volumeId);
        return set == null ? null : set.resyncs();
    }

    private ReplicaSet open(DesiredVolume dv, io.rdmablock.node.store.StoreVolume v, Subsystem s,
                            boolean trustBitmaps) {
        List<Map.Entry<String, Map.Entry<ForwardLink, Boolean>>> secondaries = new ArrayList<>();
        ReplicaSet[] holder = new ReplicaSet[1];
        // patient while a drop would leave fewer than minInSync copies in sync (writes would be refused anyway)
        java.util.function.BooleanSupplier patient = () -> {
            ReplicaSet set = holder[0];
            return set != null && set.view().inSyncCount() <= set.view().minInSync();
        };
        for (DesiredCopy c : dv.copies()) {
            if (c.role() == CopyRole.SECONDARY) {
                String peer = c.nodeId();
                PeerLink link = new PeerLink(provider, address(c), dv.subnqn(), Node.hostnqnOf(nodeId), timeoutNs,
                        patient, () -> linkSecrets(peer), openTimeoutNs);
                secondaries.add(Map.entry(c.nodeId(), Map.entry(link, c.state() == CopyState.IN_SYNC)));
            }
        }
        ReplicaSet created = new ReplicaSet(v.id(), v.sizeBytes(), bitmapDir, Math.max(1, dv.epoch()),
                Math.max(1, dv.minInSync()), secondaries, new ReplicaSet.Dropper() {
                    @Override
                    public long markStale(String node, long epoch) {
                        return Replication.this.markStale(dv.name(), node, epoch);
                    }

                    @Override
                    public ReplicaSet.Primacy primacy() {
                        return Replication.this.primacy(dv.name());
                    }

                    @Override
                    public void markSyncing(String node, long epoch) {
                        try {
                            client.markCopySyncing(dv.name(), node, epoch, nodeId);
                        } catch (MgmtException e) {
                            if (ProblemTypes.NOT_PRIMARY.equals(e.type())) {
                                throw notPrimaryIfSo(dv.name(), e);
                            }
                            throw e;
                        }
                    }

                    @Override
                    public long markInSync(String node, long epoch) {
                        return client.markCopyInSync(dv.name(), node, epoch, nodeId).epoch();
                    }
                }, trustBitmaps);
        created.resyncs(new io.rdmablock.node.resync.Resyncs(created, new io.rdmablock.node.resync.Resyncs.Context(
                nodeId, budget, StoreReader.opener(store, v), Subsystem.NSID, v.lbaSizeBytes(), timeoutNs,
                openTimeoutNs, resyncRetryNs, Math.max(10_000_000_000L, 4 * timeoutNs), resyncBytes)));
        holder[0] = created;
        created.onDeposed(() -> s.activating(true)); // ANA Change until the next heartbeat demotes this copy
        ReplicaSet old = sets.put(v.id(), created);
        if (old != null && old != created) {
            old.close();
        }
        io.rdmablock.node.failover.PeerLease oldLease = peerLeases.remove(v.id());
        if (oldLease != null) {
            oldLease.close();
        }
        long leaseMs = leaseNanos / 1_000_000L;
        if (peerLeaseMaxMs > 0 && leaseMs > MgmtSync.LEASE_MARGIN_MS && leaseMs <= 60_000) {
            peerLeases.put(v.id(), new io.rdmablock.node.failover.PeerLease(created, leaseMs,
                    MgmtSync.LEASE_MARGIN_MS, s::peerLeaseDeadline, leaseTimer));
        }
        LOG.info("replicated volume served as primary: id={}, name={}, epoch={}, minInSync={}, copies={}", v.id(),
                dv.name(), dv.epoch(), dv.minInSync(), created.describe());
        return created;
    }

    private static InetSocketAddress address(DesiredCopy c) {
        try {
            return c.fabricAddress() == null || c.fabricAddress().isBlank() ? null
                    : FabricAddress.parse(c.fabricAddress());
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The compare-and-set that drops {@code node}: epoch + 1 on success; when the record moved on meanwhile, its
     * epoch if it already shows the copy out of sync, else one more attempt under the current epoch.
     */
    private long markStale(String volume, String node, long epoch) {
        try {
            return client.markCopyStale(volume, node, epoch, nodeId).epoch();
        } catch (MgmtException e) {
            if (ProblemTypes.NOT_PRIMARY.equals(e.type()) || ProblemTypes.NOT_A_SECONDARY.equals(e.type())) {
                throw notPrimaryIfSo(volume, e);
            }
            if (!ProblemTypes.EPOCH_MISMATCH.equals(e.type())) {
                throw e;
            }
            Volume current = client.getVolume(volume);
            if (!nodeId.equals(current.nodeId())) {
                throw new ReplicaSet.NotPrimaryException("the record at epoch " + current.epoch() + " names "
                        + current.nodeId() + " primary");
            }
            VolumeCopy copy = current.copies().stream().filter(c -> c.nodeId().equals(node)).findFirst()
                    .orElse(null);
            if (copy == null || copy.state() != CopyState.IN_SYNC) {
                return current.epoch();
            }
            try {
                return client.markCopyStale(volume, node, current.epoch(), nodeId).epoch();
            } catch (MgmtException again) {
                if (ProblemTypes.NOT_PRIMARY.equals(again.type()) || ProblemTypes.NOT_A_SECONDARY.equals(again.type())) {
                    throw notPrimaryIfSo(volume, again);
                }
                throw again;
            }
        }
    }

    /** A refusal that says this node is no longer primary, checked against the record. */
    private RuntimeException notPrimaryIfSo(String volume, MgmtException e) {
        Volume current = client.getVolume(volume);
        if (!nodeId.equals(current.nodeId())) {
            return new ReplicaSet.NotPrimaryException("the record at epoch " + current.epoch() + " names "
                    + current.nodeId() + " primary (" + e.getMessage() + ")");
        }
        return e;
    }

    /** The record of {@code volume} as the data path needs it after a secondary refused this primary's epoch. */
    private ReplicaSet.Primacy primacy(String volume) {
        Volume current = client.getVolume(volume);
        Map<String, Boolean> inSync = new HashMap<>();
        for (VolumeCopy c : current.copies()) {
            if (c.role() == CopyRole.SECONDARY) {
                inSync.put(c.nodeId(), c.state() == CopyState.IN_SYNC);
            }
        }
        return new ReplicaSet.Primacy(current.epoch(), nodeId.equals(current.nodeId()), current.minInSync(), inSync);
    }

    /** Stops replicating volume {@code id} (deleted, no longer primary). */
    void close(String id) {
        Pending p = activations.remove(id);
        if (p != null) {
            synchronized (p) {
                p.cancelled = true;
            }
        }
        ReplicaSet s = sets.remove(id);
        if (s != null) {
            s.close();
        }
        io.rdmablock.node.failover.PeerLease lease = peerLeases.remove(id);
        if (lease != null) {
            lease.close(); // withdraws the peer lease from the subsystem
        }
    }

    @Override
    public void close() {
        for (String id : List.copyOf(activations.keySet())) {
            close(id);
        }
        for (String id : List.copyOf(sets.keySet())) {
            close(id);
        }
        activationThreads.shutdownNow();
        leaseTimer.shutdownNow();
    }
}
