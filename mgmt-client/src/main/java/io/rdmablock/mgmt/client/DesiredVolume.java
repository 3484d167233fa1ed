package io.rdmablock.mgmt.client;

import java.util.List;
import java.util.Objects;

/**
 * One volume a node must hold, as the heartbeat answer says.
 *
 * @param id           volume id (the node's key for its store)
 * @param name         volume name
 * @param sizeBytes    desired size; the node grows to it (never shrinks)
 * @param lbaSize      512 or 4096
 * @param allowedHosts host NQNs allowed to connect; {@code ["*"]} any host; empty none
 * @param subnqn       subsystem NQN to export it under (nsid 1)
 * @param state        {@link VolumeState#DELETING}: remove it and stop reporting it; otherwise hold and serve it
 * @param provisioned  the node has reported holding this copy before: if the node does not hold it now, its data is
 *                     lost (data directory replaced or wiped) and it must not be created again empty; false = create
 *                     it when missing
 * @param epoch        the volume's epoch (docs/replication.md); the node keeps {@code max(persisted, desired)}
 * @param role         this node's copy's role (required: a missing role is an error, never read as primary)
 * @param minInSync    fewest in-sync copies with which the primary accepts writes
 * @param copies       every copy of the volume, the primary first, with each node's fabric address and host NQN
 * @param leaseWaitMs  for this node's primary copy: how long from receiving this answer a promoted primary must still
 *                     wait before serving, ms, &gt;= 0: until no other copy's node can still hold a primary lease by the
 *                     server's clock (docs/failover.md, "Promotion"); null = unknown: one full lease
 * @param verifyId     for this node's primary copy: the id of the {@code volume verify} run the primary must carry out
 *                     and report ({@link VolumeReport#verify()}, docs/resync.md); null = none asked for
 * @param requireAuth  true: a host without a DH-HMAC-CHAP secret (file or {@link HeartbeatResponse#hosts()}) is
 *                     refused at Connect
 * @param snapshots    for this node's primary copy: the snapshots to hold or delete ({@link DesiredSnapshot});
 *                     empty otherwise, and from older servers
 * @param rollback     for this node's primary copy: the rollback to carry out ({@link DesiredRollback}), or null
 * @param qos          the volume's limits ({@link VolumeQos}), which the node enforces while it holds the primary
 *                     copy (every copy gets them, so a promoted copy enforces them at once); absent (older servers)
 *                     = {@link VolumeQos#NONE}
 * @param verifySnapshotId with {@code verifyId}: the id of the snapshot whose copies the run compares
 *                     (docs/snapshots.md, "Verify of a snapshot"); null = the live volume
 */
public record DesiredVolume(
        String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
        VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync, List<DesiredCopy> copies,
        Long leaseWaitMs, String verifyId, boolean requireAuth, List<DesiredSnapshot> snapshots,
        DesiredRollback rollback, VolumeQos qos, Long verifySnapshotId) {
    /** @throws NullPointerException when {@code id}, {@code subnqn}, {@code state} or {@code role} is missing */
    public DesiredVolume {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(subnqn, "subnqn");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(role, "role");
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        copies = copies == null ? List.of() : List.copyOf(copies);
        snapshots = snapshots == null ? List.of() : List.copyOf(snapshots);
        qos = qos == null ? VolumeQos.NONE : qos;
    }

    /** A desired volume whose verify run (if any) compares the live volume. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
                         VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync,
                         List<DesiredCopy> copies, Long leaseWaitMs, String verifyId, boolean requireAuth,
                         List<DesiredSnapshot> snapshots, DesiredRollback rollback, VolumeQos qos) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, verifyId, requireAuth, snapshots, rollback, qos, null);
    }

    /** A desired volume without limits. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
                         VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync,
                         List<DesiredCopy> copies, Long leaseWaitMs, String verifyId, boolean requireAuth,
                         List<DesiredSnapshot> snapshots, DesiredRollback rollback) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, verifyId, requireAuth, snapshots, rollback, VolumeQos.NONE);
    }

    /** A desired volume without a rollback. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
                         VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync,
                         List<DesiredCopy> copies, Long leaseWaitMs, String verifyId, boolean requireAuth,
                         List<DesiredSnapshot> snapshots) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, verifyId, requireAuth, snapshots, null, VolumeQos.NONE);
    }

    /** A desired volume without snapshots. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
                         VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync,
                         List<DesiredCopy> copies, Long leaseWaitMs, String verifyId, boolean requireAuth) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, verifyId, requireAuth, List.of());
    }

    /** A builder of volume {@code id} named {@code name}; see {@link Builder} for the defaults. */
    public static Builder builder(String id, String name) {
        return new Builder(id, name);
    }

    /**
     * Builds a {@link DesiredVolume}. Defaults: 8 MiB, 4096-byte blocks, no host allowed, NQN {@link
     * Volume#subnqnOf} the name, {@link VolumeState#READY}, not provisioned, epoch 1, this node {@link
     * CopyRole#PRIMARY} of a single copy (no copies listed), minInSync 1, lease wait unknown, no verify run, no
     * authentication required, no snapshots, no rollback, no limits.
     */
    public static final class Builder {
        private final String id;
        private final String name;
        private long sizeBytes = 8L << 20;
        private int lbaSize = 4096;
        private List<String> allowedHosts = List.of();
        private String subnqn;
        private VolumeState state = VolumeState.READY;
        private boolean provisioned;
        private long epoch = 1;
        private CopyRole role = CopyRole.PRIMARY;
        private int minInSync = 1;
        private List<DesiredCopy> copies = List.of();
        private Long leaseWaitMs;
        private String verifyId;
        private Long verifySnapshotId;
        private boolean requireAuth;
        private List<DesiredSnapshot> snapshots = List.of();
        private DesiredRollback rollback;
        private VolumeQos qos = VolumeQos.NONE;

        private Builder(String id, String name) {
            this.id = id;
            this.name = name;
            this.subnqn = Volume.subnqnOf(name);
        }

        public Builder sizeBytes(long v) {
            sizeBytes = v;
            return this;
        }

        public Builder lbaSize(int v) {
            lbaSize = v;
            return this;
        }

        public Builder allowedHosts(List<String> v) {
            allowedHosts = v;
            return this;
        }

        public Builder subnqn(String v) {
            subnqn = v;
            return this;
        }

        public Builder state(VolumeState v) {
            state = v;
            return this;
        }

        public Builder provisioned(boolean v) {
            provisioned = v;
            return this;
        }

        public Builder epoch(long v) {
            epoch = v;
            return this;
        }

        public Builder role(CopyRole v) {
            role = v;
            return this;
        }

        public Builder minInSync(int v) {
            minInSync = v;
            return this;
        }

        public Builder copies(List<DesiredCopy> v) {
            copies = v;
            return this;
        }

        public Builder leaseWaitMs(Long v) {
            leaseWaitMs = v;
            return this;
        }

        public Builder verifyId(String v) {
            verifyId = v;
            return this;
        }

        public Builder verifySnapshotId(Long v) {
            verifySnapshotId = v;
            return this;
        }

        public Builder requireAuth(boolean v) {
            requireAuth = v;
            return this;
        }

        public Builder snapshots(List<DesiredSnapshot> v) {
            snapshots = v;
            return this;
        }

        public Builder rollback(DesiredRollback v) {
            rollback = v;
            return this;
        }

        public Builder qos(VolumeQos v) {
            qos = v;
            return this;
        }

        /** @throws NullPointerException as the record's constructor */
        public DesiredVolume build() {
            return new DesiredVolume(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch,
                    role, minInSync, copies, leaseWaitMs, verifyId, requireAuth, snapshots, rollback, qos,
                    verifySnapshotId);
        }
    }
}
