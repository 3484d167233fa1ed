package io.rdmablock.mgmt.api.http;

import java.util.List;
import java.util.Set;

/**
 * Every place in the management server's main sources that builds or raises a problem (as {@link ProblemSiteScan}
 * finds them: file, token, how many), with the answers it gives (status and problem type slug) and the operations of
 * openapi.yaml that can reach it, traced by reading the code. {@link OpenApiConformanceTest} checks that this table
 * holds exactly the sites the scan finds (a new or moved site fails it until it is entered here) and that every
 * answer is declared on every operation listed.
 *
 * <p>An operation entry starting with {@code *} names a group the test derives from the code and the document:
 * {@code *secured} every route that needs a token ({@link BearerAuth#isOpen} false), {@code *readScope} every
 * route but GET (the read token is 403 there), {@code *nodeScope} / {@code *hostScope} every route a node / host
 * credential may not call (outside {@code NODE_OPERATIONS} / {@code HOST_OPERATIONS}), {@code *input} every
 * operation with a parameter or a body (the validator), {@code *body} every one with a body, {@code *write} every
 * one a follower redirects or refuses as a write (not GET/HEAD), {@code *runtimeRead} the GETs of runtime state a
 * follower redirects too ({@code MgmtVerticle.runtimeState}), {@code *store} every one that reads the metadata
 * store ({@link OpenApiConformanceTest#STORELESS} excepted), {@code *any} any request at all (the HTTP layer:
 * declared once, in the document's description, not per route). A row without answers is a helper's definition:
 * its callers are rows of their own.
 */
final class ProblemSites {
    private ProblemSites() {
    }

    /** An answer: HTTP status and problem type slug (the last segment of the {@code ProblemTypes} URI). */
    record Answer(int status, String type) {
        @Override
        public String toString() {
            return status + " " + type;
        }
    }

    /** {@code count} sites of {@code token} in {@code file}, answering {@code answers} on {@code ops}. */
    record Site(String file, String token, int count, List<Answer> answers, Set<String> ops) {
    }

    private static Site site(String file, String token, int count, List<Answer> answers, String... ops) {
        return new Site(file, token, count, answers, Set.of(ops));
    }

    /** A helper's own definition (its callers are the rows that count). */
    private static Site helper(String file, String token, int count) {
        return new Site(file, token, count, List.of(), Set.of());
    }

    private static List<Answer> a(Object... statusTypePairs) {
        var out = new java.util.ArrayList<Answer>();
        for (int i = 0; i < statusTypePairs.length; i += 2) {
            out.add(new Answer((Integer) statusTypePairs[i], (String) statusTypePairs[i + 1]));
        }
        return List.copyOf(out);
    }

    private static final String[] MARKS = {"markCopyStale", "markCopySyncing", "markCopyInSync"};
    private static final String[] NODE_LOCKED = {"registerNode", "rotateNodeKey", "drainNode", "undrainNode",
            "removeNode", "updateNode"};

    private static String[] plus(String[] ops, String... more) {
        var all = new java.util.ArrayList<>(List.of(ops));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    static final List<Site> SITES = List.of(
            // ---- the HTTP layer and authentication: every route, or groups derived from the code ----
            site("BearerAuth", "UNAUTHORIZED", 2, a(401, "unauthorized"), "*secured"),
            helper("BearerAuth", "FORBIDDEN", 1), // insufficientScope's body
            site("BearerAuth", "insufficientScope", 2, a(403, "forbidden"), "*readScope"), // its definition + 1 call
            site("BearerAuth", "Problems.badPath", 1, a(400, "validation"), "*any"),
            site("MgmtVerticle", "insufficientScope", 2, a(403, "forbidden"), "*nodeScope", "*hostScope"),
            site("MgmtVerticle", "NOT_LEADER", 1, a(307, "not-leader"), "*write", "*runtimeRead"),
            helper("MgmtVerticle", "NO_LEADER", 1), // noLeader's body
            // leaderOnly (no leader known) and the failure handler (NotLeaderException: lease lost mid-write)
            site("MgmtVerticle", "noLeader", 3, a(503, "no-leader"), "*write"),
            site("MgmtVerticle", "METADATA_UNAVAILABLE", 1, a(503, "metadata-unavailable"), "*store"),
            site("MgmtVerticle", "MALFORMED_BODY", 2, a(400, "malformed-body"), "*body"),
            site("MgmtVerticle", "BODY_TOO_LARGE", 1, a(413, "body-too-large"), "*any"),
            site("MgmtVerticle", "INTERNAL", 1, a(500, "internal"), "*any"),
            site("MgmtVerticle", "Problems.notFound", 2, a(404, "not-found"), "*any"),
            site("MgmtVerticle", "Problems.methodNotAllowed", 2, a(405, "method-not-allowed"), "*any"),
            site("MgmtVerticle", "Problems.badPath", 1, a(400, "validation"), "*any"),
            site("Problems", "VALIDATION", 1, a(400, "validation"), "*any"),
            site("Problems", "NOT_FOUND", 1, a(404, "not-found"), "*any"),
            site("Problems", "METHOD_NOT_ALLOWED", 1, a(405, "method-not-allowed"), "*any"),
            helper("Problems", "notFound", 1),
            site("HttpFaults", "URI_TOO_LONG", 1, a(414, "uri-too-long"), "*any"),
            site("HttpFaults", "HEADERS_TOO_LARGE", 1, a(431, "headers-too-large"), "*any"),
            site("HttpFaults", "MALFORMED_BODY", 1, a(400, "malformed-body"), "*any"),
            site("HttpFaults", "REQUEST_TIMEOUT", 1, a(408, "request-timeout"), "*any"),
            site("StrictJson", "MALFORMED_BODY", 1, a(400, "malformed-body"), "*body"),
            site("ValidationProblems", "VALIDATION", 4, a(400, "validation"), "*input"),
            site("ValidationProblems", "MALFORMED_BODY", 2, a(400, "malformed-body"), "*body"),
            site("ValidationProblems", "UNSUPPORTED_MEDIA_TYPE", 1, a(415, "unsupported-media-type"), "*any"),
            // ---- helpers: definitions only ----
            helper("ApiException", "VALIDATION", 1),
            helper("ApiException", "VOLUME_NOT_FOUND", 1),
            helper("ApiException", "NODE_NOT_FOUND", 1),
            helper("ApiException", "NO_CAPACITY", 1),
            helper("ClusterState", "COPY_NOT_FOUND", 1),
            helper("ClusterState", "VOLUME_DELETING", 1),
            helper("ClusterState", "INTERNAL", 1), // contention: 503 Store contention
            helper("ClusterState", "contention", 1),
            helper("NodeKeys", "INTERNAL", 1),
            helper("NodeCredentials", "FORBIDDEN", 2), // authorize: callers' rows
            helper("NodeCredentials", "UNAUTHORIZED", 1), // verify: 401 on *secured
            helper("NodeCredentials", "authorize", 1),
            helper("HostCredentials", "FORBIDDEN", 1), // checkReport
            helper("HostCredentials", "UNAUTHORIZED", 1), // verify: 401 on *secured
            helper("HostCredentials", "ApiException.volumeNotFound", 1), // visible
            helper("HostCredentials", "visible", 3), // two definitions and checkReport's call
            helper("HostCredentials", "checkReport", 1),
            helper("ClusterService", "authorize", 2), // definition and its NodeCredentials.authorize call
            // ---- volumes ----
            site("ClusterService", "VOLUME_EXISTS", 1, a(409, "volume-exists"), "createVolume"),
            site("ClusterService", "exists", 3, a(409, "volume-exists"), "createVolume"),
            site("ClusterService", "INSUFFICIENT_NODES", 1, a(409, "insufficient-nodes"), "createVolume"),
            site("ClusterService", "ApiException.noCapacity", 3, a(409, "no-capacity"), "createVolume",
                    "resizeVolume"),
            site("ClusterService", "SHRINK_NOT_ALLOWED", 1, a(400, "shrink-not-allowed"), "resizeVolume"),
            site("ClusterService", "ClusterState.deleting", 1, a(409, "volume-deleting"), "resizeVolume"),
            site("ClusterService", "ClusterState.contention", 2, a(503, "internal"), "resizeVolume",
                    "deleteVolume"),
            site("ClusterService", "VOLUME_IN_USE", 1, a(409, "volume-in-use"), "deleteVolume"),
            // resize, delete, and requireVolume (getVolume, startVerify, getVerify)
            site("ClusterService", "ApiException.volumeNotFound", 3, a(404, "volume-not-found"), "resizeVolume",
                    "deleteVolume", "getVolume", "startVerify", "getVerify"),
            site("ClusterService", "ApiException.nodeNotFound", 1, a(404, "node-not-found"), "heartbeat"),
            site("VolumeSettings", "ApiException.volumeNotFound", 1, a(404, "volume-not-found"), "resizeVolume"),
            site("VolumeSettings", "ClusterState.deleting", 1, a(409, "volume-deleting"), "resizeVolume"),
            site("VolumeSettings", "ClusterState.contention", 1, a(503, "internal"), "resizeVolume"),
            // a node or host credential acting for another node or reporter (401 when not current: *secured)
            site("VolumeRoutes", "authorize", 4, a(403, "forbidden"), plus(MARKS, "reportUnreachable")),
            site("VolumeRoutes", "checkReport", 1, a(403, "forbidden", 404, "volume-not-found"),
                    "reportUnreachable"),
            // getVolume: a volume that does not admit the host credential; listVolumes' visible only filters
            site("VolumeRoutes", "visible", 2, a(404, "volume-not-found"), "getVolume"),
            // ---- replication, resync, verify ----
            site("ResyncRecords", "ApiException.volumeNotFound", 1, a(404, "volume-not-found"), MARKS),
            site("ResyncRecords", "NOT_A_SECONDARY", 1, a(409, "not-a-secondary"), MARKS),
            site("ResyncRecords", "EPOCH_MISMATCH", 1, a(409, "epoch-mismatch"), MARKS),
            site("ResyncRecords", "NOT_PRIMARY", 1, a(409, "not-primary"), MARKS),
            site("ResyncRecords", "COPY_NOT_STALE", 1, a(409, "copy-not-stale"), "markCopySyncing"),
            site("ResyncRecords", "COPY_NOT_SYNCING", 1, a(409, "copy-not-syncing"), "markCopyInSync"),
            site("ResyncRecords", "ClusterState.contention", 1, a(503, "internal"), MARKS),
            site("ResyncRecords", "VOLUME_NOT_READY", 2, a(409, "volume-not-ready"), "startVerify"),
            site("ResyncRecords", "NOT_FOUND", 1, a(404, "not-found"), "getVerify"),
            // ---- failover ----
            site("Promotions", "ApiException.volumeNotFound", 2, a(404, "volume-not-found"), "reportUnreachable",
                    "promoteVolume"),
            site("Promotions", "ClusterState.copyNotFound", 2, a(404, "copy-not-found"), "reportUnreachable",
                    "promoteVolume"),
            site("Promotions", "ClusterState.deleting", 1, a(409, "volume-deleting"), "promoteVolume"),
            site("Promotions", "PROMOTE_REFUSED", 2, a(409, "promote-refused"), "promoteVolume"),
            site("Promotions", "PRIMARY_ALIVE", 1, a(409, "primary-alive"), "promoteVolume"),
            site("Promotions", "ClusterState.contention", 1, a(503, "internal"), "promoteVolume"),
            // ---- snapshots and rollback ----
            // create, markDeleting, requireVolume (list, get)
            site("SnapshotLedger", "ApiException.volumeNotFound", 3, a(404, "volume-not-found"), "createSnapshot",
                    "deleteSnapshot", "listSnapshots", "getSnapshot", "startVerify"),
            site("SnapshotLedger", "ClusterState.deleting", 1, a(409, "volume-deleting"), "createSnapshot"),
            site("SnapshotLedger", "VOLUME_NOT_READY", 2, a(409, "volume-not-ready"), "createSnapshot"),
            site("SnapshotLedger", "SNAPSHOT_EXISTS", 1, a(409, "snapshot-exists"), "createSnapshot"),
            site("SnapshotLedger", "SNAPSHOT_LIMIT", 1, a(409, "snapshot-limit"), "createSnapshot"),
            site("SnapshotLedger", "ClusterState.contention", 2, a(503, "internal"), "createSnapshot",
                    "deleteSnapshot"),
            site("SnapshotLedger", "SNAPSHOT_NOT_FOUND", 1, a(404, "snapshot-not-found"), "getSnapshot",
                    "deleteSnapshot", "startVerify"),
            site("SnapshotLedger", "notFound", 3, a(404, "snapshot-not-found"), "getSnapshot", "deleteSnapshot",
                    "startVerify"),
            // readyId: a verify of a snapshot (docs/snapshots.md, "Verify of a snapshot")
            site("SnapshotLedger", "SNAPSHOT_NOT_READY", 1, a(409, "snapshot-not-ready"), "startVerify"),
            site("SnapshotLedger", "checkNotRollingBackTo", 1, a(409, "rollback-in-progress"), "deleteSnapshot"),
            site("RollbackLedger", "checkNotRollingBackTo", 1, a(409, "rollback-in-progress"), "deleteSnapshot"),
            site("RollbackLedger", "ROLLBACK_IN_PROGRESS", 2, a(409, "rollback-in-progress"), "rollbackVolume",
                    "deleteSnapshot"),
            site("RollbackLedger", "ApiException.volumeNotFound", 1, a(404, "volume-not-found"), "rollbackVolume"),
            site("RollbackLedger", "ClusterState.deleting", 1, a(409, "volume-deleting"), "rollbackVolume"),
            site("RollbackLedger", "SNAPSHOT_NOT_FOUND", 1, a(404, "snapshot-not-found"), "rollbackVolume"),
            site("RollbackLedger", "SNAPSHOT_NOT_READY", 1, a(409, "snapshot-not-ready"), "rollbackVolume"),
            site("RollbackLedger", "VOLUME_NOT_READY", 1, a(409, "volume-not-ready"), "rollbackVolume"),
            site("RollbackLedger", "VOLUME_IN_USE", 1, a(409, "volume-in-use"), "rollbackVolume"),
            site("RollbackLedger", "ClusterState.contention", 1, a(503, "internal"), "rollbackVolume"),
            // ---- nodes ----
            site("NodeRegistry", "INTERNAL", 2, a(503, "internal"), NODE_LOCKED), // underNodeLock: Busy
            site("NodeRegistry", "NodeKeys.contention", 2, a(503, "internal"), "registerNode", "rotateNodeKey",
                    "drainNode", "undrainNode", "updateNode"),
            site("NodeRegistry", "NO_FREE_ORDINAL", 1, a(409, "no-free-ordinal"), "registerNode"),
            site("NodeRegistry", "authorize", 1, a(403, "forbidden"), "registerNode"),
            site("NodeRegistry", "ApiException.nodeNotFound", 3, a(404, "node-not-found"), "rotateNodeKey",
                    "drainNode", "undrainNode", "removeNode", "updateNode", "getNode"),
            site("NodeRegistry", "NODE_IN_USE", 1, a(409, "node-in-use"), "removeNode"),
            site("NodeRoutes", "authorize", 1, a(403, "forbidden"), "heartbeat"),
            site("Heartbeats", "ApiException.nodeNotFound", 1, a(404, "node-not-found"), "heartbeat"),
            site("Heartbeats", "ApiException.validation", 1, a(400, "validation"), "heartbeat"),
            site("Heartbeats", "ClusterState.contention", 1, a(503, "internal"), "heartbeat"),
            site("NodeKeys", "contention", 2, a(503, "internal"), "heartbeat"), // withKey (and the definition)
            // ---- hosts and host credentials ----
            site("ManagedHosts", "ApiException.validation", 2, a(400, "validation"), "setHost"),
            site("ManagedHosts", "HOST_NOT_FOUND", 1, a(404, "host-not-found"), "getHost", "removeHost"),
            site("ManagedHosts", "notFound", 3, a(404, "host-not-found"), "getHost", "removeHost"),
            site("ManagedHosts", "INTERNAL", 1, a(503, "internal"), "setHost", "removeHost"), // busy
            site("ManagedHosts", "busy", 4, a(503, "internal"), "setHost", "removeHost"),
            site("HostCredentialRegistry", "NOT_FOUND", 1, a(404, "not-found"), "revokeHostCredential"));
}
