package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * One volume a node must hold, as the heartbeat answer says.
 *
 * @param id           volume id (the node's key for its store)
 * @param name         volume name
 * @param sizeBytes    desired size; the node grows to it (never shrinks)
 * @param lbaSize      512 or 4096
 * @param allowedHosts host NQNs allowed to connect; {@code ["*"]} any host; empty none (a management server
 *                     before 2026-12 meant any host by empty)
 * @param subnqn       subsystem NQN to export it under (nsid 1)
 * @param state        {@link VolumeState#DELETING}: remove it and stop reporting it; otherwise hold and serve it
 * @param provisioned  the node has reported holding it before: if the node does not hold it now, its data is lost
 *                     (data directory replaced or wiped) and it must not be created again empty; false (or absent,
 *                     from older servers) = create it when missing. Per copy: it says whether this node's copy was
 *                     reported before
 * @param epoch        the volume's epoch (docs/replication.md); the node keeps {@code max(persisted, desired)}; 0 from
 *                     older servers (a single copy, never fenced)
 * @param role         this node's copy's role; absent (older servers) reads as {@link CopyRole#PRIMARY}
 * @param minInSync    fewest in-sync copies with which the primary accepts writes; 0 from older servers (= 1)
 * @param copies       every copy of the volume, the primary first, with each node's fabric address and host NQN; empty
 *                     from older servers (this node holds the only copy)
 * @param leaseWaitMs  for this node's primary copy: how long from receiving this answer a promoted primary must still
 *                     wait before serving, ms, &gt;= 0: until no other copy's node can still hold a primary lease by the
 *                     server's clock (docs/failover.md, "Promotion"); null (older servers, or unknown) = one full lease
 * @param verifyId     for this node's primary copy: the id of the {@code volume verify} run the primary must carry out
 *                     and report ({@link VolumeReport#verify()}, docs/resync.md); null = none asked for
 * @param requireAuth  true: a host without a DH-HMAC-CHAP secret (file or {@link HeartbeatResponse#hosts()}) is
 *                     refused at Connect; false (or absent, from older servers) = as before
 */
public record DesiredVolume(
        String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts, String subnqn,
        VolumeState state, boolean provisioned, long epoch, CopyRole role, int minInSync, List<DesiredCopy> copies,
        Long leaseWaitMs, String verifyId, boolean requireAuth) {
    public DesiredVolume {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        role = role == null ? CopyRole.PRIMARY : role;
        copies = copies == null ? List.of() : List.copyOf(copies);
    }

    /** As the canonical constructor, without {@code requireAuth}. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts,
                         String subnqn, VolumeState state, boolean provisioned, long epoch, CopyRole role,
                         int minInSync, List<DesiredCopy> copies, Long leaseWaitMs, String verifyId) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, verifyId, false);
    }

    /** @return this volume with {@code requireAuth} set to {@code on} */
    public DesiredVolume withRequireAuth(boolean on) {
        return new DesiredVolume(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role,
                minInSync, copies, leaseWaitMs, verifyId, on);
    }

    /** As the canonical constructor, with no verify run asked for. */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts,
                         String subnqn, VolumeState state, boolean provisioned, long epoch, CopyRole role,
                         int minInSync, List<DesiredCopy> copies, Long leaseWaitMs) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                leaseWaitMs, null);
    }

    /** As the canonical constructor, with {@code leaseWaitMs} unknown (a promoted primary waits one full lease). */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts,
                         String subnqn, VolumeState state, boolean provisioned, long epoch, CopyRole role,
                         int minInSync, List<DesiredCopy> copies) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, epoch, role, minInSync, copies,
                null, null);
    }

    /**
     * A single-copy volume as older servers described it: this node's copy is the primary, epoch 1, minInSync 1, no
     * peer copies listed (for tests and callers that do not replicate).
     */
    public DesiredVolume(String id, String name, long sizeBytes, int lbaSize, List<String> allowedHosts,
                         String subnqn, VolumeState state, boolean provisioned) {
        this(id, name, sizeBytes, lbaSize, allowedHosts, subnqn, state, provisioned, 1, CopyRole.PRIMARY, 1,
                List.of());
    }
}
