package io.rdmablock.mgmt.client;

/**
 * The stable {@code type} URIs of every error the management server answers. Clients switch on these, never on
 * titles or details. The URIs are identifiers (RFC 9457 section 3.1.1), not links that must resolve.
 */
public final class ProblemTypes {
    private static final String BASE = "https://rdmablock.io/problems/";

    /** 400: a field is missing, has the wrong type or is outside its bounds; detail names field and bounds. */
    public static final String VALIDATION = BASE + "validation";
    /** 400: the body is not JSON or not an object. */
    public static final String MALFORMED_BODY = BASE + "malformed-body";
    /** 400: PATCH with a size smaller than the current one (grow only). */
    public static final String SHRINK_NOT_ALLOWED = BASE + "shrink-not-allowed";
    /**
     * 401: a route without {@code Authorization: Bearer <token>}, or with a token that is neither the cluster token
     * nor the read token.
     */
    public static final String UNAUTHORIZED = BASE + "unauthorized";
    /**
     * 403: the read-only token on a mutating route, or a node or host credential on a route outside its scope or
     * acting for another node or reporter ({@code WWW-Authenticate: Bearer error="insufficient_scope"}); a wrong
     * token is 401 {@link #UNAUTHORIZED} (RFC 6750 section 3.1).
     */
    public static final String FORBIDDEN = BASE + "forbidden";
    /** 404: no volume with that name. */
    public static final String VOLUME_NOT_FOUND = BASE + "volume-not-found";
    /** 404: no node with that id (a node that gets this on heartbeat registers again). */
    public static final String NODE_NOT_FOUND = BASE + "node-not-found";
    /** 404: no host with that NQN ({@code /v1/hosts/{hostNqn}}). */
    public static final String HOST_NOT_FOUND = BASE + "host-not-found";
    /** 404: no such route. */
    public static final String NOT_FOUND = BASE + "not-found";
    /** 405: route exists, method does not. */
    public static final String METHOD_NOT_ALLOWED = BASE + "method-not-allowed";
    /** 409: a volume with that name exists. */
    public static final String VOLUME_EXISTS = BASE + "volume-exists";
    /** 409: delete of a volume a host is connected to, without {@code force=true}. */
    public static final String VOLUME_IN_USE = BASE + "volume-in-use";
    /** 409: resize or delete of a volume that is being deleted. */
    public static final String VOLUME_DELETING = BASE + "volume-deleting";
    /** 413: request body larger than the server accepts. */
    public static final String BODY_TOO_LARGE = BASE + "body-too-large";
    /** 415: a body that is not {@code application/json}. */
    public static final String UNSUPPORTED_MEDIA_TYPE = BASE + "unsupported-media-type";
    /** 409: no node is up, not draining, and has room for the volume (or, on resize, its node has no room). */
    public static final String NO_CAPACITY = BASE + "no-capacity";
    /** 409: {@code DELETE /v1/nodes/{id}} while volumes are placed on the node. */
    public static final String NODE_IN_USE = BASE + "node-in-use";
    /**
     * 409: fewer nodes are up, not draining and have room for the volume than its replicas; extension members
     * {@code needed} (the replicas) and {@code available} (the nodes that qualified).
     */
    public static final String INSUFFICIENT_NODES = BASE + "insufficient-nodes";
    /**
     * 409: a stale-copy report under an epoch that is no longer the volume's; extension member {@code epoch} (the
     * current one). The reporter adopts the current record ({@code GET /v1/volumes/{name}}).
     */
    public static final String EPOCH_MISMATCH = BASE + "epoch-mismatch";
    /** 409: a stale-copy report from a node that is not the volume's primary. */
    public static final String NOT_PRIMARY = BASE + "not-primary";
    /** 409: a stale-copy report naming a node that holds no secondary copy of the volume. */
    public static final String NOT_A_SECONDARY = BASE + "not-a-secondary";
    /** 404: a volume has no copy on the node named in the path (unreachable report, promote). */
    public static final String COPY_NOT_FOUND = BASE + "copy-not-found";
    /** 409: an explicit promote while the primary's node still heartbeats within the lease (docs/failover.md). */
    public static final String PRIMARY_ALIVE = BASE + "primary-alive";
    /**
     * 409: an explicit promote of a copy that is not in sync (or onto the primary itself) without
     * {@code acceptDataLoss: true}; the detail says why.
     */
    public static final String PROMOTE_REFUSED = BASE + "promote-refused";
    /** 409: a resync may only start from a {@code stale} copy (docs/resync.md). */
    public static final String COPY_NOT_STALE = BASE + "copy-not-stale";
    /** 409: only a {@code syncing} copy can be declared in sync (docs/resync.md). */
    public static final String COPY_NOT_SYNCING = BASE + "copy-not-syncing";
    /** 409: the volume has no serving primary or fewer than two copies to compare (verify). */
    public static final String VOLUME_NOT_READY = BASE + "volume-not-ready";
    /** 409: a new node cannot get a controller-id ordinal: every one of 1..62 is taken by a registered node. */
    public static final String NO_FREE_ORDINAL = BASE + "no-free-ordinal";
    /** 404: the volume has no snapshot with that name ({@code /v1/volumes/{name}/snapshots/{snap}}). */
    public static final String SNAPSHOT_NOT_FOUND = BASE + "snapshot-not-found";
    /** 409: a snapshot with that name exists on the volume. */
    public static final String SNAPSHOT_EXISTS = BASE + "snapshot-exists";
    /** 409: the volume holds the most snapshots a volume may have; the detail says the limit. */
    public static final String SNAPSHOT_LIMIT = BASE + "snapshot-limit";
    /** 409: a rollback to a snapshot that is not {@code ready} (still creating, or deleting). */
    public static final String SNAPSHOT_NOT_READY = BASE + "snapshot-not-ready";
    /**
     * 409: the volume is rolling back to another snapshot, or a snapshot being rolled back to cannot be deleted
     * until the rollback is done on every copy.
     */
    public static final String ROLLBACK_IN_PROGRESS = BASE + "rollback-in-progress";
    /** 408: the request did not arrive whole within the server's request timeout. */
    public static final String REQUEST_TIMEOUT = BASE + "request-timeout";
    /** 414: the request line is longer than the server accepts. */
    public static final String URI_TOO_LONG = BASE + "uri-too-long";
    /** 431: the request headers are larger than the server accepts. */
    public static final String HEADERS_TOO_LARGE = BASE + "headers-too-large";
    /**
     * 503: the cluster metadata store cannot answer now (etcd without quorum or unreachable, within the server's
     * bound); nothing is known about whether a write was applied: re-read, then retry later or on another server.
     */
    public static final String METADATA_UNAVAILABLE = BASE + "metadata-unavailable";
    /**
     * 307: a write (any method but GET/HEAD under {@code /v1/}) sent to a management server that is not the leader;
     * {@code Location} and the extension member {@code leader} name the leader's URL. The request was not executed:
     * send it again, same method and body, to the Location.
     */
    public static final String NOT_LEADER = BASE + "not-leader";
    /**
     * 503: a write sent while no management server leads (an election in progress, or etcd unreachable);
     * {@code Retry-After: 1}. Nothing was executed: retry later or on another server.
     */
    public static final String NO_LEADER = BASE + "no-leader";
    /**
     * 500: a bug or a metadata store failure; detail says which. 503 with this type: a write that met other writers
     * of the same record on every attempt, or waited too long for a lock; nothing was changed, retry.
     */
    public static final String INTERNAL = BASE + "internal";

    private ProblemTypes() {
    }
}
