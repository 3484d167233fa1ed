package io.rdmablock.mgmt.client;

import com.fasterxml.jackson.core.type.TypeReference;

import java.util.List;

import static io.rdmablock.mgmt.client.MgmtTransport.segment;

/**
 * The node calls of the management REST API ({@code /v1/nodes}: registration, heartbeat, drain, key rotation,
 * removal, listing), on the {@link MgmtClient} that made it ({@link MgmtClient#nodes()}). Thread-safe.
 */
public final class NodeClient {
    private static final TypeReference<List<Node>> NODE_LIST = new TypeReference<>() { };

    private final MgmtTransport t;

    NodeClient(MgmtTransport transport) {
        this.t = transport;
    }

    /** {@code POST /v1/nodes}: register or re-register a node. Errors 400, 401, 403. */
    public Node registerNode(RegisterNodeRequest request) {
        return registerNodeForCredential(request).node();
    }

    /**
     * {@code POST /v1/nodes} as {@link #registerNode}, with the node credential the answer carries (issued when this
     * client sends the cluster token; docs/authentication.md, "Credentials and scopes"). Errors 400, 401 (a node
     * credential that is not current), 403 (another node's credential).
     */
    public NodeRegistration registerNodeForCredential(RegisterNodeRequest request) {
        String text = t.exchange("POST", "/v1/nodes", request);
        return new NodeRegistration(Json.read(text, Node.class),
                Json.read(text, NodeRegistration.CredentialOnly.class).credential());
    }

    /** {@code POST /v1/nodes/{nodeId}/heartbeat}: report, get the desired state. Errors 400, 401, 404. */
    public HeartbeatResponse heartbeat(String nodeId, HeartbeatRequest request) {
        return t.send("POST", "/v1/nodes/" + segment(nodeId) + "/heartbeat", request,
                HeartbeatResponse.class);
    }

    /** {@code POST /v1/nodes/{nodeId}/drain}: no new volumes go to the node. Errors 401, 404. */
    public Node drainNode(String nodeId) {
        return t.send("POST", "/v1/nodes/" + segment(nodeId) + "/drain", null, Node.class);
    }

    /** {@code POST /v1/nodes/{nodeId}/undrain}: volumes may be placed on the node again. Errors 401, 404. */
    public Node undrainNode(String nodeId) {
        return t.send("POST", "/v1/nodes/" + segment(nodeId) + "/undrain", null, Node.class);
    }

    /**
     * {@code POST /v1/nodes/{nodeId}/rotate-key}: gives the node a new node key (operator); the answer names its
     * fingerprint, never the key. Errors 401, 403, 404, 503.
     */
    public NodeKeyRotation rotateNodeKey(String nodeId) {
        return t.send("POST", "/v1/nodes/" + segment(nodeId) + "/rotate-key", null,
                NodeKeyRotation.class);
    }

    /** {@code DELETE /v1/nodes/{nodeId}}: forget the node. Errors 401, 404, 409 while volumes are placed on it. */
    public void removeNode(String nodeId) {
        t.exchange("DELETE", "/v1/nodes/" + segment(nodeId), null);
    }

    /** {@code GET /v1/nodes/{nodeId}}: one node. Errors 401, 404. */
    public Node getNode(String nodeId) {
        return t.send("GET", "/v1/nodes/" + segment(nodeId), null, Node.class);
    }

    /**
     * {@code PATCH /v1/nodes/{nodeId} {"background": ...}}: sets the node's background budget bounds (docs/qos.md,
     * "Background budget"), in effect on the node at its next heartbeat.
     *
     * @param background the bounds, or null to go back to the node's start-up values (JSON null)
     * @return the node as stored after the change. Errors 400 (bounds), 401, 403, 404, 503
     */
    public Node setNodeBackground(String nodeId, NodeBackground background) {
        return t.send("PATCH", "/v1/nodes/" + segment(nodeId), java.util.Collections.singletonMap("background", background), Node.class);
    }

    /** {@code GET /v1/nodes}: every node, ordered by id. */
    public List<Node> listNodes() {
        return t.send("GET", "/v1/nodes", null, NODE_LIST);
    }
}
