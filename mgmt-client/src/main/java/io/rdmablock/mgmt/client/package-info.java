/**
 * The management-plane model and its REST client, shared by the management server (mgmt-api), the storage
 * nodes and the CLI. Plain JDK {@link java.net.http.HttpClient} + Jackson; no Vert.x here.
 *
 * <p>Contract (pull model: the management server never calls a node):
 * <ul>
 *   <li>{@code POST /v1/nodes} registers a node ({@link RegisterNodeRequest} → {@link Node});</li>
 *   <li>{@code POST /v1/nodes/{nodeId}/heartbeat} ({@link HeartbeatRequest} → {@link HeartbeatResponse}) reports
 *       what the node holds and returns the desired state for that node; the node creates/grows/deletes its
 *       volumes to match and reports back. Every node holding a copy of a volume gets it, with its
 *       copy's role, the epoch and every copy ({@link DesiredVolume}). The server marks a volume {@code ready} once
 *       the nodes of its copies report it {@code ready} with the desired size, and forgets a {@code deleting}
 *       volume once no copy's node reports it;</li>
 *   <li>{@code POST /v1/nodes/{nodeId}/drain}, {@code GET /v1/nodes};</li>
 *   <li>{@code POST/GET /v1/volumes}, {@code GET/PATCH/DELETE /v1/volumes/{name}};</li>
 *   <li>{@code POST /v1/volumes/{name}/copies/{nodeId}/stale} ({@link MarkCopyStaleRequest} → {@link Volume}): a
 *       primary drops a secondary from the in-sync set, a compare-and-set on the volume's epoch
 *       (docs/replication.md).</li>
 *   <li>{@code POST/GET /v1/host-credentials}, {@code DELETE /v1/host-credentials/{id}}
 *       ({@link IssueHostCredentialRequest} → {@link IssuedHostCredential}, {@link HostCredential}): a host's token,
 *       bound to one host NQN (docs/authentication.md, "Credentials and scopes").</li>
 * </ul>
 * Every error answer is {@code application/problem+json} ({@link Problem}, RFC 9457) with a stable
 * {@link ProblemTypes type}; the client throws it as a {@link MgmtException}. {@link MgmtClient} (its calls grouped
 * by resource in {@link VolumeClient}, {@link NodeClient}, {@link HostClient}) takes several
 * management URLs and fails over among them; a follower's {@code 307} ({@link ProblemTypes#NOT_LEADER}) is followed
 * once, to a configured URL only. The storage node plugs into
 * {@link NodeAgent}, which registers, heartbeats and hands the desired state to a {@link NodeAgent.Handler}.
 */
package io.rdmablock.mgmt.client;
