package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.failover.Promotions;
import io.rdmablock.mgmt.api.resync.Rebuilds;
import io.rdmablock.mgmt.api.resync.ResyncRecords;
import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.CopyRecord;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.api.store.Versioned;
import io.rdmablock.mgmt.api.store.VolumeRecord;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.CopyTransition;
import io.rdmablock.mgmt.client.CreateVolumeRequest;
import io.rdmablock.mgmt.client.HeartbeatRequest;
import io.rdmablock.mgmt.client.HeartbeatResponse;
import io.rdmablock.mgmt.client.Limits;
import io.rdmablock.mgmt.client.MarkCopyStaleRequest;
import io.rdmablock.mgmt.client.NodeState;
import io.rdmablock.mgmt.client.Problem;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.mgmt.client.PromoteRequest;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.UnreachableReport;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.Volume;
import io.rdmablock.mgmt.client.VolumeCopy;
import io.rdmablock.mgmt.client.VolumeState;

import java.time.Instant;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * Volume lifecycle, placement and node reconciliation over a {@link MetadataStore}. Volume requests take no common
 * lock (a store without quorum must not queue every request behind a slow one; only creates serialize their
 * placement, {@code placementLock}, and the sweep runs one at a time): every change of a volume record is
 * a compare-and-set against the revision it read ({@link MetadataStore#replaceVolume},
 * {@link MetadataStore#removeVolume(String, long)}; etcd: one transaction each), retried from a fresh read on a
 * conflict, and runtime state lives in concurrent maps. Node records (registration, drain) are read-modify-written
 * by {@link NodeRegistry} ({@link #nodes}) under a lock of their own, waited for at most
 * {@value NodeRegistry#NODE_LOCK_WAIT_MS} ms (then 503): only the leader writes them. Time comes from the
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
 * ({@link MetadataStore#replaceVolume}) that raises the epoch by exactly 1 ({@link ClusterState#compareAndSetEpoch}).
 * Other volume writes (connected hosts, provisioned, state, size, deleting) are compare-and-sets that keep the
 * epoch. Creates on one server serialize their placement with their store write ({@code placementLock}), so they
 * cannot both count the same free space; with several management servers only the leader creates.
 *
 * <p>Failover (docs/failover.md, "Promotion"): liveness for promotion is the primary lease ({@code leaseMs}, sent in
 * every heartbeat answer), not the node timeout. {@link #sweep} (run every 200 ms by the verticle) promotes, by one
 * compare-and-set (epoch + 1), the lowest-id in-sync secondary whose node heartbeated within half the lease, when the
 * primary's node has no heartbeat within the lease <em>and</em> an unreachable report about the primary's copy
 * ({@link #reportUnreachable}) arrived after its last heartbeat; the old primary becomes a stale secondary. Such a
 * lost primary makes the volume {@code unavailable} at once (not only after the node timeout). The node timeout
 * keeps its meaning for everything else: a node's {@code up}/{@code down} state, placement, readiness.
 * {@link #promote} is the operator's explicit promotion. The failover logic is in {@link Promotions}; rebuild and
 * drain ({@code rebuildAfterMs}, docs/resync.md) in {@link Rebuilds}, run by the same sweep; copy transitions and
 * verify runs in {@link ResyncRecords}.
 *
 * <p>Clocks: liveness, the lease and {@code leaseWaitMs} are judged on a monotonic clock ({@code monoNanos},
 * {@link System#nanoTime()} in production), never the wall clock, which ({@code wallMs}) only stamps what is shown
 * ({@code createdAt}, {@code lastHeartbeat}).
 */
public final class ClusterService {
    /** Pause after a failed sweep or metrics scrape listing, ns: the store is left to requests (they fail fast, 503). */
    public static final long SWEEP_BACKOFF_NS = 3_000_000_000L;
    /** Default primary lease, ms (docs/failover.md "Timing defaults"). */
    public static final long DEFAULT_LEASE_MS = 2_000;
    /** Default time a copy's node may be down before the copy is rebuilt elsewhere, ms (docs/resync.md). */
    public static final long DEFAULT_REBUILD_AFTER_MS = 600_000;
    private final ClusterState s;
    private final Promotions promotions;
    private final VolumeSettings settings;
    private final ResyncRecords resyncs;
    private final Rebuilds rebuilds;
    private final Heartbeats heartbeats;
    private final ManagedHosts hosts;
    private final NodeRegistry nodes;
    private final HostCredentialRegistry hostCredentials;
    private final SnapshotLedger snapshots;
    private final RollbackLedger rollbacks;

    /**
     * One clock for tests: {@code nowMs} (ms) is both the wall clock and, times 10^6, the monotonic one.
     *
     * @param store         metadata store (not closed by this service)
     * @param nowMs         clock in ms
     * @param nodeTimeoutMs a node without a heartbeat for longer than this is down, &gt; 0
     */
    public ClusterService(MetadataStore store, LongSupplier nowMs, long nodeTimeoutMs) {
        this(store, nowMs, nodeTimeoutMs, DEFAULT_LEASE_MS);
    }

    /**
     * As {@link #ClusterService(MetadataStore, LongSupplier, long)} with a lease.
     *
     * @param leaseMs the primary lease: a primary whose node has no heartbeat within it (and is reported unreachable)
     *                is replaced, &gt; 0
     */
    public ClusterService(MetadataStore store, LongSupplier nowMs, long nodeTimeoutMs, long leaseMs) {
        this(store, nowMs, () -> Math.multiplyExact(nowMs.getAsLong(), 1_000_000L), nodeTimeoutMs, leaseMs,
                DEFAULT_REBUILD_AFTER_MS);
    }

    /**
     * @param store          metadata store (not closed by this service)
     * @param wallMs         wall clock, ms since the epoch: display timestamps only
     * @param monoNanos      monotonic clock, ns ({@link System#nanoTime()}): liveness, lease, rebuild timing
     * @param nodeTimeoutMs  a node without a heartbeat for longer than this is down, &gt; 0
     * @param leaseMs        the primary lease, &gt; 0
     * @param rebuildAfterMs a copy whose node has not heartbeated for longer than this is rebuilt elsewhere, &gt; 0
     * @throws IllegalArgumentException naming the parameter and its bound
     */
    public ClusterService(MetadataStore store, LongSupplier wallMs, LongSupplier monoNanos, long nodeTimeoutMs,
                          long leaseMs, long rebuildAfterMs) {
        if (nodeTimeoutMs <= 0) {
            throw Limits.invalid("nodeTimeoutMs", Long.toString(nodeTimeoutMs), "min=1");
        }
        if (leaseMs <= 0) {
            throw Limits.invalid("leaseMs", Long.toString(leaseMs), "min=1");
        }
        if (rebuildAfterMs <= 0) {
            throw Limits.invalid("rebuildAfterMs", Long.toString(rebuildAfterMs), "min=1");
        }
        this.s = new ClusterState(store, wallMs, monoNanos, nodeTimeoutMs, leaseMs, rebuildAfterMs);
        this.promotions = new Promotions(s);
        this.settings = new VolumeSettings(s, this::toVolume);
        this.resyncs = new ResyncRecords(s);
        this.rebuilds = new Rebuilds(s, promotions);
        this.heartbeats = new Heartbeats(s, promotions, resyncs);
        this.hosts = new ManagedHosts(s.store, s.wallMs);
        this.nodes = new NodeRegistry(s, rebuilds);
        this.hostCredentials = new HostCredentialRegistry(s.store, s.wallMs);
        this.snapshots = new SnapshotLedger(s, this::reportedState);
        this.rollbacks = new RollbackLedger(s, this::reportedState);
    }

    /** @return the volumes' snapshots ({@code /v1/volumes/{name}/snapshots}) */
    public SnapshotLedger snapshots() {
        return snapshots;
    }

    /** @return the volumes' rollbacks ({@code /v1/volumes/{name}/rollback}) */
    public RollbackLedger rollbacks() {
        return rollbacks;
    }

    /** @return the host credentials ({@code /v1/host-credentials}) */
    public HostCredentialRegistry hostCredentials() {
        return hostCredentials;
    }

    /** @return the hosts with DH-HMAC-CHAP secrets ({@code /v1/hosts}) */
    public ManagedHosts hosts() {
        return hosts;
    }

    /** @return the node records: registration, drain, undrain, removal ({@code /v1/nodes}) */
    public NodeRegistry nodes() {
        return nodes;
    }

    /**
     * Several management servers: {@code leading} is true while this server leads (e.g.
     * {@code Leadership::isLeader}); the sweep then checks it before each decision and stops at once when it turns
     * false. Default: always (a single server).
     */
    public void leading(java.util.function.BooleanSupplier leading) {
        s.leading = java.util.Objects.requireNonNull(leading, "leading");
    }

    /**
     * This server became leader: runtime state of before is dropped and every node counts as last seen now
     * ({@link ClusterState#takeOver}); reads the node list from the store.
     */
    public void takeOver() {
        s.takeOver();
    }

    /** @return the primary lease, ms */
    public long leaseMs() {
        return s.leaseMs;
    }

    /** @return the rebuild delay of a down node's copies, ms */
    public long rebuildAfterMs() {
        return s.rebuildAfterMs;
    }

    /** @return promotions done since start (automatic and explicit), for metrics */
    public long promotions() {
        return promotions.count();
    }

    /** @return bytes copied by resyncs since start, from the primaries' reports, for metrics */
    public long resyncBytes() {
        return s.resyncBytesTotal.get();
    }

    /** @return volume name → regions that differed in its last completed verify run, for metrics */
    public Map<String, Long> verifyDifferingRegions() {
        return resyncs.differingRegions();
    }

    // ---- volumes ----

    /**
     * Creates and places a volume: epoch 1, every copy in sync. Errors: 400 validation (replicas, minInSync, ...),
     * 409 exists, insufficient nodes or no capacity.
     */
    public Volume createVolume(CreateVolumeRequest request) {
        check(() -> Limits.check(request));
        var existing = s.store.volume(request.name());
        if (existing.isPresent()) {
            throw exists(existing.get());
        }
        VolumeRecord record;
        synchronized (placementLock) { // placement counts stored records: one create at a time places and stores
            List<String> nodes = place(request.sizeBytes(), request.replicas()).stream().map(NodeRecord::nodeId)
                    .toList();
            record = VolumeRecord.created(UUID.randomUUID().toString(), request.name(), request.sizeBytes(),
                    request.lbaSize(), request.minInSync(), request.allowedHosts(), nodes, s.wallMs.getAsLong(),
                    request.requireAuth(), request.qos());
            if (!s.store.replaceVolume(record.name(), 0, record)) { // created meanwhile by another writer
                throw exists(s.store.volume(request.name()).orElse(record));
            }
        }
        VolumeSettings.warnAboutHosts(record.name(), record.allowedHosts());
        return toVolume(record);
    }

    /** {@link VolumeSettings#allowedHosts}. */
    public Volume allowedHosts(String name, List<String> hosts) {
        return settings.allowedHosts(name, hosts);
    }

    /**
     * Serialises a create's placement with its store write, so two concurrent creates cannot both count the same
     * free space. Only creates wait for it (each store call is bounded by the store's timeout); with several
     * management servers only the leader creates.
     */
    private final Object placementLock = new Object();

    private static ApiException exists(VolumeRecord v) {
        return new ApiException(409, ProblemTypes.VOLUME_EXISTS, "Volume exists",
                "a volume named " + v.name() + " exists (state " + v.state().wireName() + ")");
    }

    /**
     * A primary drops a secondary from the in-sync set (docs/replication.md): one compare-and-set that makes the
     * copy on {@code nodeId} stale (from in_sync or syncing) and raises the epoch to {@code request.epoch() + 1}.
     * Errors, in this order: 404 no such volume; 409 {@link ProblemTypes#NOT_A_SECONDARY}; (already stale, reporter
     * the primary: the current volume); 409 {@link ProblemTypes#EPOCH_MISMATCH} (member {@code epoch}); 409
     * {@link ProblemTypes#NOT_PRIMARY}. Also 400 epoch &lt; 1, bad names; 503 store contention.
     */
    public Volume markCopyStale(String name, String nodeId, MarkCopyStaleRequest request) {
        return toVolume(resyncs.markStale(name, nodeId, request));
    }

    /**
     * The primary starts resyncing the stale copy on {@code nodeId} (docs/resync.md): stale → syncing, epoch
     * unchanged, by compare-and-set. Errors as {@link #markCopyStale}, plus 409 {@link ProblemTypes#COPY_NOT_STALE}
     * when the copy is in_sync; a copy already syncing is answered as it is.
     */
    public Volume markCopySyncing(String name, String nodeId, CopyTransition request) {
        return toVolume(resyncs.markSyncing(name, nodeId, request));
    }

    /**
     * The primary finished resyncing the copy on {@code nodeId}: syncing → in_sync, epoch + 1, by compare-and-set.
     * Errors as {@link #markCopyStale}, plus 409 {@link ProblemTypes#COPY_NOT_SYNCING} when the copy is stale; a copy
     * already in_sync is answered as it is.
     */
    public Volume markCopyInSync(String name, String nodeId, CopyTransition request) {
        return toVolume(resyncs.markInSync(name, nodeId, request));
    }

    /**
     * Starts a verify run of the volume (docs/resync.md, "Verify"); a run pending or running is answered as it is.
     * Errors: 400 bad name; 404; 409 {@link ProblemTypes#VOLUME_NOT_READY} (not serving, or fewer than two in-sync
     * copies). With {@code snapshotId} (from {@link SnapshotLedger#readyId}) the run compares that snapshot's copies.
     */
    public VerifyReport startVerify(String name, Long snapshotId) {
        VolumeRecord v = requireVolume(name);
        return resyncs.startVerify(v, reportedState(v), snapshotId);
    }

    /** @return the latest verify run of the volume; 404 volume, or 404 {@link ProblemTypes#NOT_FOUND} before any */
    public VerifyReport verifyStatus(String name) {
        return resyncs.verifyStatus(requireVolume(name));
    }

    // ---- failover, rebuild ----

    /**
     * Records that {@code request.reporter()} cannot reach the copy on {@code nodeId} (runtime only, with its time).
     * Errors: 400 bad names or body, 404 no such volume or no copy there. See {@link Promotions#reportUnreachable}.
     */
    public Volume reportUnreachable(String name, String nodeId, UnreachableReport request) {
        return toVolume(promotions.reportUnreachable(name, nodeId, request));
    }

    /** @return whether an unreachable report about the copy of volume {@code volumeId} on {@code nodeId} is recorded */
    public boolean unreachableReported(String volumeId, String nodeId) {
        return s.unreachableAtNanos.containsKey(ClusterState.copyKey(volumeId, nodeId));
    }

    /**
     * One liveness pass (docs/failover.md): promotes a new primary for every volume whose primary is lost, then one
     * rebuild/drain step per volume ({@link Rebuilds}).
     *
     * @return the volumes promoted by the liveness pass (rebuild steps are not counted)
     */
    public int sweep() {
        synchronized (sweepLock) { // one sweep at a time (the verticle's and a test's); requests never take it
            if (!s.leading()) {
                return 0;
            }
            int promoted = promotions.sweep();
            rebuilds.sweep();
            return promoted;
        }
    }

    private final Object sweepLock = new Object();

    /**
     * The operator's promotion: the copy on {@code request.nodeId()} becomes primary (epoch + 1, the old primary a
     * stale secondary, syncing copies stale). A copy that is not in sync needs {@code acceptDataLoss} (every other
     * copy then becomes stale). Errors: 400; 404 no such volume or copy; 409 {@link ProblemTypes#PRIMARY_ALIVE},
     * 409 {@link ProblemTypes#PROMOTE_REFUSED}, 409 deleting.
     */
    public Volume promote(String name, PromoteRequest request) {
        return toVolume(promotions.promote(name, request));
    }

    /** @return every volume, ordered by name */
    public List<Volume> listVolumes() {
        return s.store.volumes().stream().map(this::toVolume).toList();
    }

    /** @return the volume; 404 when absent */
    public Volume getVolume(String name) {
        return toVolume(requireVolume(name));
    }

    /** Grows a volume (every copy). Errors: 400 bounds or shrink, 404, 409 deleting or no room on a copy's node. */
    public Volume resizeVolume(String name, long sizeBytes) {
        check(() -> Limits.checkSize("sizeBytes", sizeBytes));
        check(() -> Limits.checkName("name", name));
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                throw ClusterState.deleting(v);
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
                long free = s.freeBytes(c.nodeId());
                if (growBytes > free) {
                    throw ApiException.noCapacity("node " + c.nodeId() + " (" + c.role().wireName() + " copy) has "
                            + free + " bytes free, growing " + name + " to " + sizeBytes + " needs " + growBytes);
                }
            }
            VolumeRecord grown = v.withSize(sizeBytes, VolumeState.CREATING);
            if (s.compareAndSet(current, grown)) {
                return toVolume(grown);
            }
        }
        throw ClusterState.contention(name, "resizing to " + sizeBytes);
    }

    /** {@link VolumeSettings#qos}. */
    public Volume qos(String name, io.rdmablock.mgmt.client.VolumeQos limits) {
        return settings.qos(name, limits);
    }

    /** {@link VolumeSettings#requireAuth}. */
    public Volume requireAuth(String name, boolean on) {
        return settings.requireAuth(name, on);
    }

    /** Marks a volume deleting. Errors: 404; 409 when a host is connected and not forced. Idempotent. */
    public Volume deleteVolume(String name, boolean force) {
        check(() -> Limits.checkName("name", name));
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            Versioned<VolumeRecord> current = s.store.volumeVersioned(name)
                    .orElseThrow(() -> ApiException.volumeNotFound(name));
            VolumeRecord v = current.value();
            if (v.state() == VolumeState.DELETING) {
                return toVolume(v);
            }
            if (!force && !v.connectedHosts().isEmpty()) {
                throw new ApiException(409, ProblemTypes.VOLUME_IN_USE, "Volume in use",
                        "volume " + name + " has connected hosts " + v.connectedHosts()
                                + "; disconnect them or delete with force=true");
            }
            VolumeRecord d = v.withState(VolumeState.DELETING);
            if (s.compareAndSet(current, d)) {
                return toVolume(d);
            }
        }
        throw ClusterState.contention(name, "marking it deleting");
    }

    // ---- nodes ----

    /**
     * Records a heartbeat and answers the node's desired state ({@link Heartbeats}): a primary's report also gives
     * its resyncs' progress and its verify run (kept in memory); a copy removed from the record that the node still
     * reports is answered {@code deleting} so the node deletes it. Errors: 400, 404 unknown node.
     */
    public HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        return heartbeat(nodeId, request, true, null);
    }

    /**
     * As {@link #heartbeat(String, HeartbeatRequest)}; the node's secrets (every host's DH-HMAC-CHAP secrets, its
     * node key and links) only when {@code ownCredential}: the caller proved to be that node
     * ({@link #authorize}; docs/authentication.md, "Credentials and scopes"), not the cluster token; and only when
     * {@code withheld} is null, else the answer carries none of them and that reason
     * ({@link HeartbeatResponse#secretsWithheld()}; {@code http.SecretChannel}).
     */
    public HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request, boolean ownCredential, String withheld) {
        HeartbeatResponse r = heartbeats.heartbeat(nodeId, request);
        if (!ownCredential || withheld != null) { // a record of before node keys still gets its key now
            s.store.node(nodeId).ifPresent(n -> NodeKeys.withKey(s.store, n));
            if (withheld == null) {
                return r;
            }
            // the hosts' names without their secrets: the node refuses them rather than admit them unauthenticated
            return r.withHosts(hosts.forNodes())
                    .withSecretsWithheld(withheld);
        }
        // every host's secrets, to every node (docs/authentication.md, "Managed secrets": a volume may admit any
        // host, so no node can be given less without knowing who will connect)
        r = r.withHosts(hosts.forNodes());
        return withNodeKeys(nodeId, r);
    }

    /**
     * Checks that {@code caller} may act as node {@code actingAs} ({@link NodeCredentials#authorize}).
     *
     * @return true for that node's own credential, false for the cluster token
     * @throws ApiException 401 for a credential that is not current; 403 for another node's or the read token
     */
    public boolean authorize(NodeCredentials.Caller caller, String actingAs) {
        return NodeCredentials.authorize(s.store, caller, actingAs);
    }

    /**
     * @return the node or host credential verified against its record ({@link NodeCredentials#verify},
     *         {@link HostCredentials#verify}); 401 if not
     */
    public NodeCredentials.Caller verify(NodeCredentials.Caller caller) {
        return caller.host() ? HostCredentials.verify(s.store, caller) : NodeCredentials.verify(s.store, caller);
    }

    /**
     * The answer with the node's own key (a record without one gets it now, {@link NodeKeys#withKey}) and the links
     * to every other node holding a copy of a volume the answer tells it about ({@link NodeKeys#links}).
     *
     * @throws ApiException 404 when the node was removed meanwhile
     */
    private HeartbeatResponse withNodeKeys(String nodeId, HeartbeatResponse r) {
        Map<String, NodeRecord> byId = new java.util.HashMap<>();
        s.store.nodes().forEach(n -> byId.put(n.nodeId(), n));
        NodeRecord self = byId.get(nodeId);
        self = self == null ? null : NodeKeys.withKey(s.store, self);
        if (self == null) {
            throw ApiException.nodeNotFound(nodeId);
        }
        var peers = new java.util.HashSet<String>();
        r.volumes().forEach(v -> v.copies().forEach(c -> peers.add(c.nodeId())));
        return r.withNodeKeys(self.nodeKey(), NodeKeys.links(nodeId, peers, byId));
    }

    /** @return volume counts by state, for metrics */
    public Map<VolumeState, Long> volumeCounts() {
        var counts = new EnumMap<VolumeState, Long>(VolumeState.class);
        for (VolumeState s : VolumeState.values()) {
            counts.put(s, 0L);
        }
        s.store.volumes().forEach(v -> counts.merge(reportedState(v), 1L, Long::sum));
        return counts;
    }

    /** @return node counts by state, for metrics */
    public Map<NodeState, Long> nodeCounts() {
        var counts = new EnumMap<NodeState, Long>(NodeState.class);
        for (NodeState s : NodeState.values()) {
            counts.put(s, 0L);
        }
        s.store.nodes().forEach(n -> counts.merge(s.stateOf(n), 1L, Long::sum));
        return counts;
    }

    // ---- helpers ----

    /** @return {@code replicas} distinct nodes for a new volume, the primary's first (see the class comment) */
    private List<NodeRecord> place(long sizeBytes, int replicas) {
        List<NodeRecord> up = s.store.nodes().stream()
                .filter(n -> s.stateOf(n) == NodeState.UP)
                .sorted(Comparator.comparingLong((NodeRecord n) -> s.freeBytes(n.nodeId())).reversed()
                        .thenComparing(NodeRecord::nodeId))
                .toList();
        List<NodeRecord> withRoom = up.stream().filter(n -> s.freeBytes(n.nodeId()) >= sizeBytes).toList();
        if (withRoom.size() >= replicas) {
            return withRoom.subList(0, replicas);
        }
        if (replicas > 1) {
            throw new ApiException(Problem.of(ProblemTypes.INSUFFICIENT_NODES, "Insufficient nodes", 409,
                    "invalid replicas: replicas=" + replicas + " needs " + replicas + " distinct nodes that are up,"
                            + " not draining and have room for sizeBytes=" + sizeBytes + "; available="
                            + withRoom.size() + " (" + s.store.nodes().size() + " registered, " + up.size()
                            + " up and not draining, node timeout " + s.nodeTimeoutMs + " ms)")
                    .withExtensions(replicas, withRoom.size(), null));
        }
        if (up.isEmpty()) {
            throw ApiException.noCapacity("no storage node is up and not draining (" + s.store.nodes().size()
                    + " registered, node timeout " + s.nodeTimeoutMs + " ms)");
        }
        NodeRecord best = up.getFirst();
        throw ApiException.noCapacity("no node has room for sizeBytes=" + sizeBytes + "; most free is node "
                + best.nodeId() + " with " + s.freeBytes(best.nodeId()) + " bytes");
    }

    private VolumeRecord requireVolume(String name) {
        check(() -> Limits.checkName("name", name));
        return s.store.volume(name).orElseThrow(() -> ApiException.volumeNotFound(name));
    }

    private Volume toVolume(VolumeRecord v) {
        var copies = v.copies().stream().map(c -> {
            ResyncProgress p = c.state() == CopyState.SYNCING ? resyncs.progress(v, c.nodeId()) : null;
            return p == null ? new VolumeCopy(c.nodeId(), c.role(), c.state(), s.fabricAddressOf(c.nodeId()))
                    : new VolumeCopy(c.nodeId(), c.role(), c.state(), s.fabricAddressOf(c.nodeId()),
                    p.syncedBytes(), p.totalBytes(), ResyncRecords.etaSeconds(p));
        }).toList();
        return new Volume(v.id(), v.name(), v.sizeBytes(), v.lbaSize(), v.replicas(), v.allowedHosts(), v.nodeId(),
                s.fabricAddressOf(v.nodeId()), Volume.subnqnOf(v.name()), 1, reportedState(v), v.connectedHosts(),
                Instant.ofEpochMilli(v.createdAtMs()).toString(), v.epoch(), v.minInSync(), copies, v.requireAuth(),
                RollbackLedger.view(v), v.qos(), s.qosActivity(v));
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
        if (s.nodeDown(v.nodeId()) || s.missingOnNode.contains(ClusterState.copyKey(v.id(), v.nodeId()))
                || (v.copies().size() > 1 && promotions.primaryLost(v))) {
            return VolumeState.UNAVAILABLE;
        }
        return v.state() == VolumeState.READY && v.inSyncCount() < v.replicas() ? VolumeState.DEGRADED : v.state();
    }

    static void check(Runnable validation) {
        ApiException.check(validation);
    }
}
