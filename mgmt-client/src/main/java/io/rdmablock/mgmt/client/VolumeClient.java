package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.type.TypeReference;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.rdmablock.mgmt.client.MgmtTransport.segment;

/**
 * The volume calls of the management REST API ({@code /v1/volumes}: lifecycle, settings, the copies' state
 * transitions a primary reports, verify, failover reports and promotion), on the {@link MgmtClient} that made it
 * ({@link MgmtClient#volumes()}): the same servers, token, timeout and failover among URLs. Thread-safe.
 */
public final class VolumeClient {
    private static final TypeReference<List<Volume>> VOLUME_LIST = new TypeReference<>() { };
    private static final TypeReference<List<Snapshot>> SNAPSHOT_LIST = new TypeReference<>() { };

    private final MgmtTransport t;

    VolumeClient(MgmtTransport transport) {
        this.t = transport;
    }

    /** {@code POST /v1/volumes}: 201 + the new volume (state creating). Errors 400, 401, 409 (exists, no capacity). */
    public Volume createVolume(CreateVolumeRequest request) {
        return t.send("POST", "/v1/volumes", request, Volume.class);
    }

    /** {@code GET /v1/volumes}: every volume, ordered by name. */
    public List<Volume> listVolumes() {
        return t.send("GET", "/v1/volumes", null, VOLUME_LIST);
    }

    /** {@code GET /v1/volumes/{name}}. Errors 404. */
    public Volume getVolume(String name) {
        return t.send("GET", "/v1/volumes/" + segment(name), null, Volume.class);
    }

    /** {@code PATCH /v1/volumes/{name}} (grow only). Errors 400 (shrink, bounds), 401, 404, 409 (deleting). */
    public Volume resizeVolume(String name, long sizeBytes) {
        return t.send("PATCH", "/v1/volumes/" + segment(name), new ResizeVolumeRequest(sizeBytes), Volume.class);
    }

    /**
     * {@code PATCH /v1/volumes/{name}} {@code {"requireAuth": on}}: only hosts with a DH-HMAC-CHAP secret may
     * connect (or any host again). Errors 400, 401, 404, 409 (deleting).
     */
    public Volume requireAuth(String name, boolean on) {
        return t.send("PATCH", "/v1/volumes/" + segment(name), Map.of("requireAuth", on), Volume.class);
    }

    /**
     * {@code PATCH /v1/volumes/{name}} {@code {"allowedHosts": hosts}}: replaces the allow-list (host NQNs,
     * {@code ["*"]} any host, empty none); applies to Connects after the nodes' next heartbeat. Errors 400, 401,
     * 404, 409 (deleting).
     */
    public Volume allowedHosts(String name, List<String> hosts) {
        return t.send("PATCH", "/v1/volumes/" + segment(name), Map.of("allowedHosts", hosts), Volume.class);
    }

    /**
     * {@code PATCH /v1/volumes/{name}} {@code {"qos": limits}}: replaces the volume's limits (every field not given
     * is 0 = no limit; {@link VolumeQos#NONE} lifts them all); the primary enforces them from its next heartbeat
     * (within about 1 s). Errors 400 (bounds, {@link VolumeQos#check()}), 401, 404, 409 (deleting).
     */
    public Volume setQos(String name, VolumeQos limits) {
        return t.send("PATCH", "/v1/volumes/" + segment(name), Map.of("qos", limits), Volume.class);
    }

    /**
     * {@code DELETE /v1/volumes/{name}[?force=true]}: 202 + the volume in state deleting (the node removes it).
     * Errors 401, 404, 409 when a host is connected and not forced.
     */
    public Volume deleteVolume(String name, boolean force) {
        return t.send("DELETE", "/v1/volumes/" + segment(name) + (force ? "?force=true" : ""), null, Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/stale}: the primary {@code reporter} drops secondary
     * {@code nodeId} from the in-sync set under {@code epoch}; answers the volume (epoch + 1, that copy stale), or
     * the current volume when the copy is already stale. Errors 400 (epoch &lt; 1, bad names), 401, 404 (volume),
     * 409 {@link ProblemTypes#EPOCH_MISMATCH} (see {@link Problem#epoch()}), {@link ProblemTypes#NOT_PRIMARY},
     * {@link ProblemTypes#NOT_A_SECONDARY}.
     */
    public Volume markCopyStale(String volume, String nodeId, long epoch, String reporter) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/stale",
                new MarkCopyStaleRequest(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/syncing}: the primary {@code reporter} starts resyncing the
     * stale copy on {@code nodeId} (docs/resync.md); the epoch does not change. Answers the volume (that copy
     * {@code syncing}), or the current volume when it already is. Errors 400, 401, 404, 409
     * {@link ProblemTypes#EPOCH_MISMATCH}, {@link ProblemTypes#NOT_PRIMARY}, {@link ProblemTypes#NOT_A_SECONDARY},
     * {@link ProblemTypes#COPY_NOT_STALE}.
     */
    public Volume markCopySyncing(String volume, String nodeId, long epoch, String reporter) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/syncing",
                new CopyTransition(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/copies/{nodeId}/in-sync}: the primary {@code reporter} finished resyncing the
     * copy on {@code nodeId}; answers the volume with epoch + 1 and that copy {@code in_sync} (docs/resync.md), or the
     * current volume when it already is. Errors 400, 401, 404, 409 {@link ProblemTypes#EPOCH_MISMATCH},
     * {@link ProblemTypes#NOT_PRIMARY}, {@link ProblemTypes#NOT_A_SECONDARY}, {@link ProblemTypes#COPY_NOT_SYNCING}.
     */
    public Volume markCopyInSync(String volume, String nodeId, long epoch, String reporter) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/in-sync",
                new CopyTransition(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/verify}: asks the primary to compare every copy (docs/resync.md, "Verify");
     * answers 202 with the run, state pending (a run already pending or running is answered as it is). Errors 401,
     * 404, 409 {@link ProblemTypes#VOLUME_NOT_READY} (no primary, or fewer than two copies to compare).
     */
    public VerifyReport startVerify(String volume) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/verify", null, VerifyReport.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/verify?snapshot=S}: as {@link #startVerify(String)} for the copies of snapshot
     * {@code snapshot} (docs/snapshots.md, "Verify of a snapshot"); also 404 {@link ProblemTypes#SNAPSHOT_NOT_FOUND},
     * 409 {@link ProblemTypes#SNAPSHOT_NOT_READY}. Null: the live volume.
     */
    public VerifyReport startVerify(String volume, String snapshot) {
        if (snapshot == null) {
            return startVerify(volume);
        }
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/verify?snapshot=" + segment(snapshot), null,
                VerifyReport.class);
    }

    /** {@code GET /v1/volumes/{name}/verify}: the latest verify run. Errors 401, 404 (volume, or no run yet). */
    public VerifyReport verifyStatus(String volume) {
        return t.send("GET", "/v1/volumes/" + segment(volume) + "/verify", null, VerifyReport.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/copies/{nodeId}/unreachable}: reports that the copy on {@code nodeId} does not
     * answer {@code reporter} (docs/failover.md). Answers the volume as the server has it after the report. Errors 400,
     * 401, 404 (volume or copy unknown).
     */
    public Volume reportUnreachable(String volume, String nodeId, long epoch, String reporter) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/copies/" + segment(nodeId) + "/unreachable",
                new UnreachableReport(epoch, reporter), Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{name}/promote}: makes the copy on {@code nodeId} the primary (operator action,
     * docs/failover.md); {@code acceptDataLoss} is required when that copy is not in sync. Errors 400, 401, 404,
     * 409 (primary still alive, or data loss not accepted).
     */
    public Volume promoteVolume(String volume, String nodeId, boolean acceptDataLoss) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/promote", new PromoteRequest(nodeId, acceptDataLoss),
                Volume.class);
    }

    /**
     * {@code POST /v1/volumes/{volume}/snapshots}: takes a snapshot of a volume, on every copy at one cut
     * (docs/snapshots.md). The
     * server waits (at most 10 s) for the primary to take it: the answer is {@link SnapshotState#READY} (201), or
     * still {@link SnapshotState#CREATING} (202) when it did not report it in time. Errors 400 (name), 401, 403, 404
     * (volume), 409 {@link ProblemTypes#VOLUME_NOT_READY} (also: a copy not in sync),
     * {@link ProblemTypes#VOLUME_DELETING}, {@link ProblemTypes#SNAPSHOT_EXISTS}, {@link ProblemTypes#SNAPSHOT_LIMIT}.
     */
    public Snapshot createSnapshot(String volume, String name) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/snapshots", new CreateSnapshotRequest(name),
                Snapshot.class);
    }

    /** {@code GET /v1/volumes/{volume}/snapshots}: the volume's snapshots, oldest first. Errors 401, 404. */
    public List<Snapshot> listSnapshots(String volume) {
        return t.send("GET", "/v1/volumes/" + segment(volume) + "/snapshots", null, SNAPSHOT_LIST);
    }

    /** {@code GET /v1/volumes/{volume}/snapshots/{name}}. Errors 401, 404 (volume, or snapshot-not-found). */
    public Snapshot getSnapshot(String volume, String name) {
        return t.send("GET", "/v1/volumes/" + segment(volume) + "/snapshots/" + segment(name), null, Snapshot.class);
    }

    /**
     * {@code DELETE /v1/volumes/{volume}/snapshots/{name}}: the server waits (at most 10 s) for the primary to
     * delete it.
     *
     * @return empty when it is gone (204); the snapshot, {@link SnapshotState#DELETING}, when the primary did not
     *         report it gone in time (202)
     * @throws MgmtException 401, 403, 404 (volume, or snapshot-not-found)
     */
    public Optional<Snapshot> deleteSnapshot(String volume, String name) {
        String body = t.exchange("DELETE", "/v1/volumes/" + segment(volume) + "/snapshots/" + segment(name), null);
        return body == null || body.isBlank() ? Optional.empty() : Optional.of(Json.read(body, Snapshot.class));
    }

    /**
     * {@code POST /v1/volumes/{volume}/rollback}: the volume's content becomes snapshot {@code snapshot}'s on every
     * copy (docs/snapshots.md, "Rollback"). The server waits (at most 10 s) for every copy to report it.
     *
     * @param force true: disconnect connected hosts first; false: refused while a host is connected
     * @return the volume: {@link Volume#rollback()} null when every copy reported it done (200); its state
     *         {@code rolling-back} when some did not in time (202), or {@code failed}
     * @throws MgmtException 400, 401, 403, 404 (volume, or snapshot-not-found), 409
     *                       {@link ProblemTypes#VOLUME_IN_USE}, {@link ProblemTypes#SNAPSHOT_NOT_READY},
     *                       {@link ProblemTypes#ROLLBACK_IN_PROGRESS}, {@link ProblemTypes#VOLUME_NOT_READY},
     *                       {@link ProblemTypes#VOLUME_DELETING}
     */
    public Volume rollback(String volume, String snapshot, boolean force) {
        return t.send("POST", "/v1/volumes/" + segment(volume) + "/rollback", new RollbackRequest(snapshot, force),
                Volume.class);
    }
}
