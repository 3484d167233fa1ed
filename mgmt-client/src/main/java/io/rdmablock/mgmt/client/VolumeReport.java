package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * One volume as a node reports it in a heartbeat.
 *
 * @param id             volume id (from the desired state)
 * @param sizeBytes      size the node holds now
 * @param state          {@link VolumeState#READY} once the node serves it at sizeBytes;
 *                       {@link VolumeState#CREATING} while it is being made or grown
 * @param connectedHosts host NQNs with a live controller on this volume
 * @param resyncs        for a primary copy: the resyncs it runs now (docs/resync.md); empty otherwise or from older nodes
 * @param verify         for a primary copy: the verify run it was asked for ({@link DesiredVolume#verifyId()}), as far
 *                       as it got; null when none
 * @param primarySilence for a secondary copy in sync or syncing: its primary has renewed no peer lease here for a
 *                       lease ({@link PrimarySilence}); null otherwise, or from older nodes
 * @param snapshots      the snapshots this copy holds ({@link SnapshotReport}), oldest first; empty for a volume
 *                       without any, and from older nodes; left out of the JSON when empty (a server from before
 *                       snapshots refuses the property)
 * @param rollback       this copy's word on the rollback it was asked for ({@link RollbackReport}); null when none
 *                       (left out of the JSON then, as from older nodes)
 * @param qosActivity    the volume's held commands and delay under its limits ({@link QosActivity}); null while none
 *                       of its commands ever waited on this node (left out of the JSON then, as from older nodes)
 */
public record VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts,
                           List<ResyncProgress> resyncs, VerifyReport verify, PrimarySilence primarySilence,
                           @com.fasterxml.jackson.annotation.JsonInclude(
                                   com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
                           List<SnapshotReport> snapshots,
                           @com.fasterxml.jackson.annotation.JsonInclude(
                                   com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
                           RollbackReport rollback,
                           @com.fasterxml.jackson.annotation.JsonInclude(
                                   com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
                           QosActivity qosActivity) {
    public VolumeReport {
        connectedHosts = connectedHosts == null ? List.of() : List.copyOf(connectedHosts);
        resyncs = resyncs == null ? List.of() : List.copyOf(resyncs);
        snapshots = snapshots == null ? List.of() : List.copyOf(snapshots);
    }

    /** A report without QoS activity. */
    public VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts,
                        List<ResyncProgress> resyncs, VerifyReport verify, PrimarySilence primarySilence,
                        List<SnapshotReport> snapshots, RollbackReport rollback) {
        this(id, sizeBytes, state, connectedHosts, resyncs, verify, primarySilence, snapshots, rollback, null);
    }

    /** A report without a rollback. */
    public VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts,
                        List<ResyncProgress> resyncs, VerifyReport verify, PrimarySilence primarySilence,
                        List<SnapshotReport> snapshots) {
        this(id, sizeBytes, state, connectedHosts, resyncs, verify, primarySilence, snapshots, null);
    }

    /** @return this report with {@code r} as its rollback (null: none) */
    public VolumeReport withRollback(RollbackReport r) {
        return new VolumeReport(id, sizeBytes, state, connectedHosts, resyncs, verify, primarySilence, snapshots, r,
                qosActivity);
    }

    /** @return this report with {@code a} as its QoS activity (null: none) */
    public VolumeReport withQosActivity(QosActivity a) {
        return new VolumeReport(id, sizeBytes, state, connectedHosts, resyncs, verify, primarySilence, snapshots,
                rollback, a);
    }

    /** A report without snapshots. */
    public VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts,
                        List<ResyncProgress> resyncs, VerifyReport verify, PrimarySilence primarySilence) {
        this(id, sizeBytes, state, connectedHosts, resyncs, verify, primarySilence, List.of());
    }

    /** A report without a primary's silence (a primary, or from older nodes). */
    public VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts,
                        List<ResyncProgress> resyncs, VerifyReport verify) {
        this(id, sizeBytes, state, connectedHosts, resyncs, verify, null);
    }

    /** A report with no resync and no verify run (a secondary, or a primary with nothing to copy). */
    public VolumeReport(String id, long sizeBytes, VolumeState state, List<String> connectedHosts) {
        this(id, sizeBytes, state, connectedHosts, List.of(), null, null);
    }
}
