package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.VolumeQos;
import io.rdmablock.mgmt.client.VolumeState;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A volume as stored (the durable part of {@link io.rdmablock.mgmt.client.Volume}; fabric addresses are read
 * from the nodes at answer time). docs/replication.md is the contract for replicas, copies and epoch.
 *
 * <p>Records written before replication (no {@code copies}, {@code epoch} or {@code minInSync}) read as one
 * primary {@code in_sync} copy on {@code nodeId}, provisioned as {@link #provisioned} or a {@code ready} state
 * said, epoch 1, minInSync 1.
 *
 * @param id             UUID
 * @param name           unique name (the store key)
 * @param sizeBytes      desired size (of every copy)
 * @param lbaSize        512 or 4096
 * @param replicas       copies wanted, 1..5
 * @param allowedHosts   host NQNs, or {@code ["*"]} for any host; empty: no host
 * @param nodeId         the primary copy's node (always {@code copies}' primary; kept for older readers)
 * @param state          lifecycle state
 * @param connectedHosts host NQNs connected, as last reported by the primary's node
 * @param createdAtMs    creation time, ms since the epoch
 * @param provisioned    legacy (records before per-copy state): the node had reported it; now true once the
 *                       primary's copy is, each copy carries its own ({@link CopyRecord#provisioned()})
 * @param epoch          1 at create, + 1 at every change of primary or of the in-sync set, &gt;= 1
 * @param minInSync      fewest in-sync copies with which writes are accepted, 1..replicas
 * @param copies         one per copy on distinct nodes, exactly one {@link CopyRole#PRIMARY}, the primary first
 * @param requireAuth    only hosts with a DH-HMAC-CHAP secret ({@link HostRecord}) may connect; false in records
 *                       written before it
 * @param hostsVersion   meaning of an empty {@code allowedHosts}: {@link #HOSTS_VERSION} (every record made by this
 *                       code) no host; 0 (absent: a record stored before 2026-12) any host, read as {@code ["*"]}
 * @param snapshots      the volume's snapshots, oldest (lowest id) first; empty in records written before snapshots
 * @param nextSnapshotId the id the next snapshot gets (ids are never reused), &gt;= 1 and above every id held
 * @param rollback       the rollback the copies go through, or the last one that failed ({@link RollbackRecord});
 *                       null when none, and in records written before rollbacks
 * @param qos            the volume's limits (docs/qos.md); {@link VolumeQos#NONE} in records written before them
 */
public record VolumeRecord(
        String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
        String nodeId, VolumeState state, List<String> connectedHosts, long createdAtMs, boolean provisioned,
        long epoch, int minInSync, List<CopyRecord> copies, boolean requireAuth, int hostsVersion,
        List<SnapshotRecord> snapshots, long nextSnapshotId,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        RollbackRecord rollback, VolumeQos qos) {
    /** {@link #hostsVersion} of records made now: an empty allow-list admits no host. */
    public static final int HOSTS_VERSION = 2;

    public VolumeRecord {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        if (hostsVersion < HOSTS_VERSION && allowedHosts.isEmpty()) {
            allowedHosts = List.of("*"); // stored when empty meant any host: it still does, now said explicitly
        }
        hostsVersion = HOSTS_VERSION;
        connectedHosts = connectedHosts == null ? List.of() : List.copyOf(connectedHosts);
        if (copies == null || copies.isEmpty()) { // a record of a server before replication
            copies = List.of(new CopyRecord(nodeId, CopyRole.PRIMARY, CopyState.IN_SYNC,
                    provisioned || state == VolumeState.READY));
        }
        copies = primaryFirst(copies);
        nodeId = copies.getFirst().nodeId();
        epoch = epoch < 1 ? 1 : epoch;
        minInSync = minInSync < 1 ? 1 : minInSync;
        replicas = replicas < 1 ? 1 : replicas;
        snapshots = snapshots == null ? List.of() : snapshots.stream()
                .sorted(java.util.Comparator.comparingLong(SnapshotRecord::id)).toList();
        long above = snapshots.isEmpty() ? 1 : snapshots.getLast().id() + 1;
        nextSnapshotId = Math.max(nextSnapshotId, above);
        qos = qos == null ? VolumeQos.NONE : qos;
    }

    /** A record without limits (as before them). */
    public VolumeRecord(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                        String nodeId, VolumeState state, List<String> connectedHosts, long createdAtMs,
                        boolean provisioned, long epoch, int minInSync, List<CopyRecord> copies, boolean requireAuth,
                        int hostsVersion, List<SnapshotRecord> snapshots, long nextSnapshotId,
                        RollbackRecord rollback) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts, createdAtMs,
                provisioned, epoch, minInSync, copies, requireAuth, hostsVersion, snapshots, nextSnapshotId, rollback,
                VolumeQos.NONE);
    }

    /** A record without snapshots (as before snapshots). */
    public VolumeRecord(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                        String nodeId, VolumeState state, List<String> connectedHosts, long createdAtMs,
                        boolean provisioned, long epoch, int minInSync, List<CopyRecord> copies, boolean requireAuth,
                        int hostsVersion) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts, createdAtMs,
                provisioned, epoch, minInSync, copies, requireAuth, hostsVersion, List.of(), 1, null, VolumeQos.NONE);
    }

    /** A record without a rollback (as before rollbacks). */
    public VolumeRecord(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                        String nodeId, VolumeState state, List<String> connectedHosts, long createdAtMs,
                        boolean provisioned, long epoch, int minInSync, List<CopyRecord> copies, boolean requireAuth,
                        int hostsVersion, List<SnapshotRecord> snapshots, long nextSnapshotId) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts, createdAtMs,
                provisioned, epoch, minInSync, copies, requireAuth, hostsVersion, snapshots, nextSnapshotId, null,
                VolumeQos.NONE);
    }

    /** As {@link #created(String, String, long, int, int, List, List, long, boolean)}, no authentication required. */
    public static VolumeRecord created(String id, String name, long sizeBytes, int lbaSize, int minInSync,
                                       List<String> allowedHosts, List<String> copyNodeIds, long createdAtMs) {
        return created(id, name, sizeBytes, lbaSize, minInSync, allowedHosts, copyNodeIds, createdAtMs, false);
    }

    /** As {@link #created(String, String, long, int, int, List, List, long, boolean, VolumeQos)}, no limits. */
    public static VolumeRecord created(String id, String name, long sizeBytes, int lbaSize, int minInSync,
                                       List<String> allowedHosts, List<String> copyNodeIds, long createdAtMs,
                                       boolean requireAuth) {
        return created(id, name, sizeBytes, lbaSize, minInSync, allowedHosts, copyNodeIds, createdAtMs, requireAuth,
                VolumeQos.NONE);
    }

    /** A new volume: epoch 1, every copy in sync and not yet provisioned, the first copy's node the primary. */
    public static VolumeRecord created(String id, String name, long sizeBytes, int lbaSize, int minInSync,
                                       List<String> allowedHosts, List<String> copyNodeIds, long createdAtMs,
                                       boolean requireAuth, VolumeQos qos) {
        var copies = new ArrayList<CopyRecord>();
        for (int i = 0; i < copyNodeIds.size(); i++) {
            copies.add(new CopyRecord(copyNodeIds.get(i), i == 0 ? CopyRole.PRIMARY : CopyRole.SECONDARY,
                    CopyState.IN_SYNC, false));
        }
        return new VolumeRecord(id, name, sizeBytes, lbaSize, copies.size(), allowedHosts, copyNodeIds.getFirst(),
                VolumeState.CREATING, List.of(), createdAtMs, false, 1, minInSync, copies, requireAuth, HOSTS_VERSION,
                List.of(), 1, null, qos);
    }

    private static List<CopyRecord> primaryFirst(List<CopyRecord> copies) {
        var primaries = copies.stream().filter(c -> c.role() == CopyRole.PRIMARY).toList();
        if (primaries.size() != 1) {
            throw new IllegalArgumentException("invalid copies: primaries=" + primaries.size() + ", must be 1");
        }
        if (copies.stream().map(CopyRecord::nodeId).distinct().count() != copies.size()) {
            throw new IllegalArgumentException("invalid copies: nodes must be distinct, copies=" + copies);
        }
        var out = new ArrayList<CopyRecord>(copies.size());
        out.add(primaries.getFirst());
        copies.stream().filter(c -> c.role() != CopyRole.PRIMARY).forEach(out::add);
        return List.copyOf(out);
    }

    /** @return the primary copy */
    public CopyRecord primary() {
        return copies.getFirst();
    }

    /** @return this volume's copy on that node */
    public Optional<CopyRecord> copyOn(String nodeOfCopy) {
        return copies.stream().filter(c -> c.nodeId().equals(nodeOfCopy)).findFirst();
    }

    /** @return how many copies are in sync */
    public int inSyncCount() {
        return (int) copies.stream().filter(c -> c.state() == CopyState.IN_SYNC).count();
    }

    /** @return a copy with another size and state */
    public VolumeRecord withSize(long newSizeBytes, VolumeState newState) {
        return new VolumeRecord(id, name, newSizeBytes, lbaSize, replicas, allowedHosts, nodeId, newState,
                connectedHosts, createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /**
     * @return a copy whose copy on {@code copy.nodeId()} is replaced by {@code copy}, same epoch: only for changes
     *         that touch neither the primary nor the in-sync set (e.g. provisioned)
     * @throws IllegalArgumentException when that would change a role or the in-sync set
     */
    public VolumeRecord withCopy(CopyRecord copy) {
        CopyRecord old = copyOn(copy.nodeId()).orElseThrow(() -> new IllegalArgumentException(
                "invalid copy: no copy on nodeId=" + copy.nodeId()));
        if (old.role() != copy.role() || (old.state() == CopyState.IN_SYNC) != (copy.state() == CopyState.IN_SYNC)) {
            throw new IllegalArgumentException("invalid copy: " + old + " -> " + copy
                    + " changes the primary or the in-sync set; use withEpoch");
        }
        return withCopies(epoch, copy);
    }

    /**
     * @return a copy at {@code newEpoch} whose copy on {@code copy.nodeId()} is replaced by {@code copy} (a change of
     *         the primary or the in-sync set; the caller writes it by compare-and-set, epoch + 1)
     */
    public VolumeRecord withEpoch(long newEpoch, CopyRecord copy) {
        return withCopies(newEpoch, copy);
    }

    private VolumeRecord withCopies(long newEpoch, CopyRecord copy) {
        var next = copies.stream().map(c -> c.nodeId().equals(copy.nodeId()) ? copy : c).toList();
        boolean primaryProvisioned = next.stream().anyMatch(c -> c.role() == CopyRole.PRIMARY && c.provisioned());
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned || primaryProvisioned, newEpoch, minInSync, next, requireAuth, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /**
     * @return a copy at {@code newEpoch} with the given copies (a change of the primary: promotion; the caller writes
     *         it by compare-and-set, epoch + 1); {@code nodeId} follows the new primary
     */
    public VolumeRecord withCopies(long newEpoch, List<CopyRecord> next) {
        boolean primaryProvisioned = next.stream().anyMatch(c -> c.role() == CopyRole.PRIMARY && c.provisioned());
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned || primaryProvisioned, newEpoch, minInSync, next, requireAuth, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /** @return a copy admitting exactly {@code hosts} ({@code ["*"]}: any host; empty: none) */
    public VolumeRecord withAllowedHosts(List<String> hosts) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, hosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /** @return a copy with requireAuth {@code on} */
    public VolumeRecord withRequireAuth(boolean on) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned, epoch, minInSync, copies, on, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /** @return a copy with another state */
    public VolumeRecord withState(VolumeState newState) {
        return withSize(sizeBytes, newState);
    }

    /** @return a copy with other connected hosts */
    public VolumeRecord withConnectedHosts(List<String> hosts) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, hosts,
                createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION,
                snapshots, nextSnapshotId, rollback, qos);
    }

    /** @return the snapshot named {@code snapshotName}, if any */
    public Optional<SnapshotRecord> snapshot(String snapshotName) {
        return snapshots.stream().filter(x -> x.name().equals(snapshotName)).findFirst();
    }

    /** @return a copy with these snapshots and snapshot id counter (same epoch) */
    public VolumeRecord withSnapshots(List<SnapshotRecord> next, long nextId) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION, next, nextId,
                rollback, qos);
    }

    /** @return a copy with this rollback (null: none), same epoch */
    public VolumeRecord withRollback(RollbackRecord next) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION, snapshots,
                nextSnapshotId, next, qos);
    }

    /** @return a copy with the limits {@code limits} (null: none) */
    public VolumeRecord withQos(VolumeQos limits) {
        return new VolumeRecord(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, state, connectedHosts,
                createdAtMs, provisioned, epoch, minInSync, copies, requireAuth, HOSTS_VERSION, snapshots,
                nextSnapshotId, rollback, limits);
    }
}
