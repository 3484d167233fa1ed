package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * A volume as the management server answers it ({@code GET /v1/volumes/{name}}).
 *
 * @param id             server-assigned UUID, stable for the life of the volume
 * @param name           unique name, {@link Limits#NAME_PATTERN}
 * @param sizeBytes      capacity in bytes; a multiple of {@link Limits#SIZE_ALIGNMENT_BYTES}
 * @param lbaSize        logical block size in bytes, 512 or 4096
 * @param replicas       copies wanted, {@link Limits#MIN_REPLICAS}..{@link Limits#MAX_REPLICAS}
 * @param allowedHosts   host NQNs allowed to connect; {@code ["*"]} any host; empty none
 * @param nodeId         node holding the primary copy (hosts connect there)
 * @param fabricAddress  that node's fabric listener, {@code "host:port"}
 * @param subnqn         NVMe subsystem NQN of the volume, {@code nqn.2026-11.io.rdmablock:volume:<name>}
 * @param nsid           namespace id inside that subsystem (always 1)
 * @param state          lifecycle state
 * @param connectedHosts host NQNs connected now, as last reported by the node
 * @param createdAt      creation time, ISO-8601 UTC ({@code 2026-11-29T22:00:00Z})
 * @param epoch          1 at create, + 1 at every change of primary or of the in-sync set (0 from older servers)
 * @param minInSync      fewest in-sync copies with which writes are accepted, 1..replicas (0 from older servers)
 * @param copies         one per copy, the primary first; empty from older servers (then {@code nodeId} is the only
 *                       copy)
 * @param requireAuth    true: only hosts with a DH-HMAC-CHAP secret ({@code /v1/hosts}) may connect, after
 *                       authenticating (docs/authentication.md, "Managed secrets"); false from older servers
 * @param rollback       the rollback in progress, or the last one that failed ({@link VolumeRollback}); null when
 *                       none (left out of the JSON then)
 * @param qos            the volume's limits (docs/qos.md); {@link VolumeQos#NONE} when it has none, and from older
 *                       servers
 * @param qosActivity    the primary's held commands and delay under those limits at its last heartbeat
 *                       ({@link QosActivity}); null (left out of the JSON) while none of its commands ever waited
 *                       there, while its node is down, and from older servers or nodes
 */
public record Volume(
        String id,
        String name,
        long sizeBytes,
        int lbaSize,
        int replicas,
        List<String> allowedHosts,
        String nodeId,
        String fabricAddress,
        String subnqn,
        int nsid,
        VolumeState state,
        List<String> connectedHosts,
        String createdAt,
        long epoch,
        int minInSync,
        List<VolumeCopy> copies,
        boolean requireAuth,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        VolumeRollback rollback,
        VolumeQos qos,
        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        QosActivity qosActivity) {

    /** Prefix of every volume subsystem NQN; the volume name follows. */
    public static final String SUBNQN_PREFIX = "nqn.2026-11.io.rdmablock:volume:";

    public Volume {
        allowedHosts = allowedHosts == null ? List.of() : List.copyOf(allowedHosts);
        connectedHosts = connectedHosts == null ? List.of() : List.copyOf(connectedHosts);
        copies = copies == null ? List.of() : List.copyOf(copies);
        qos = qos == null ? VolumeQos.NONE : qos;
    }

    /** As the canonical constructor, without QoS activity. */
    public Volume(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                  String nodeId, String fabricAddress, String subnqn, int nsid, VolumeState state,
                  List<String> connectedHosts, String createdAt, long epoch, int minInSync, List<VolumeCopy> copies,
                  boolean requireAuth, VolumeRollback rollback, VolumeQos qos) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid, state,
                connectedHosts, createdAt, epoch, minInSync, copies, requireAuth, rollback, qos, null);
    }

    /** As the canonical constructor, without limits. */
    public Volume(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                  String nodeId, String fabricAddress, String subnqn, int nsid, VolumeState state,
                  List<String> connectedHosts, String createdAt, long epoch, int minInSync, List<VolumeCopy> copies,
                  boolean requireAuth, VolumeRollback rollback) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid, state,
                connectedHosts, createdAt, epoch, minInSync, copies, requireAuth, rollback, VolumeQos.NONE);
    }

    /** As the canonical constructor, without a rollback. */
    public Volume(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                  String nodeId, String fabricAddress, String subnqn, int nsid, VolumeState state,
                  List<String> connectedHosts, String createdAt, long epoch, int minInSync, List<VolumeCopy> copies,
                  boolean requireAuth) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid, state,
                connectedHosts, createdAt, epoch, minInSync, copies, requireAuth, (VolumeRollback) null);
    }

    /** @return this volume with {@code r} as its rollback (null: none) */
    public Volume withRollback(VolumeRollback r) {
        return new Volume(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid,
                state, connectedHosts, createdAt, epoch, minInSync, copies, requireAuth, r, qos, qosActivity);
    }

    /** As the canonical constructor, without {@code requireAuth}. */
    public Volume(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                  String nodeId, String fabricAddress, String subnqn, int nsid, VolumeState state,
                  List<String> connectedHosts, String createdAt, long epoch, int minInSync, List<VolumeCopy> copies) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid, state,
                connectedHosts, createdAt, epoch, minInSync, copies, false);
    }

    /**
     * A single-copy volume (callers that do not replicate, tests): one primary {@code in_sync} copy on {@code nodeId},
     * epoch 1, minInSync 1.
     */
    public Volume(String id, String name, long sizeBytes, int lbaSize, int replicas, List<String> allowedHosts,
                  String nodeId, String fabricAddress, String subnqn, int nsid, VolumeState state,
                  List<String> connectedHosts, String createdAt) {
        this(id, name, sizeBytes, lbaSize, replicas, allowedHosts, nodeId, fabricAddress, subnqn, nsid, state,
                connectedHosts, createdAt, 1, 1,
                List.of(new VolumeCopy(nodeId, CopyRole.PRIMARY, CopyState.IN_SYNC, fabricAddress)));
    }

    /** @return how many copies are {@code in_sync} */
    public long inSyncCount() {
        return copies.stream().filter(c -> c.state() == CopyState.IN_SYNC).count();
    }

    /** @return the subsystem NQN for a volume name */
    public static String subnqnOf(String name) {
        return SUBNQN_PREFIX + name;
    }

    /** @return the number of logical blocks, {@code sizeBytes / lbaSize} */
    public long blockCount() {
        return sizeBytes / lbaSize;
    }
}
