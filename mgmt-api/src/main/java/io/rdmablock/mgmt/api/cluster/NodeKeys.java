package io.rdmablock.mgmt.api.cluster;

import io.rdmablock.mgmt.api.state.ApiException;
import io.rdmablock.mgmt.api.state.ClusterState;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.NodeRecord;
import io.rdmablock.mgmt.client.Node;
import io.rdmablock.mgmt.client.NodeLink;
import io.rdmablock.mgmt.client.ProblemTypes;
import io.rdmablock.nvme.auth.NodeLinkKeys;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Node keys (docs/authentication.md, "Node identities"): making one ({@value NodeLinkKeys#KEY_BYTES} bytes from a
 * {@link SecureRandom}, stored base64 in the {@link NodeRecord}), its fingerprint (what REST answers show instead),
 * giving a stored record without one a key by compare-and-set, and the {@link NodeLink}s of a heartbeat answer.
 * Stateless and thread-safe. Nothing here logs or puts a key into an exception message.
 */
public final class NodeKeys {
    /** Hex digits of a key fingerprint. */
    static final int FINGERPRINT_HEX = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private NodeKeys() {
    }

    /** @return a new random node key, base64 (standard alphabet, padded) of {@value NodeLinkKeys#KEY_BYTES} bytes */
    static String newKey() {
        return Base64.getEncoder().encodeToString(NodeLinkKeys.newKey(RANDOM));
    }

    /**
     * @param key a node key, base64
     * @return its fingerprint: the first {@value #FINGERPRINT_HEX} lowercase hex digits of SHA-256 over the key's
     *         {@value NodeLinkKeys#KEY_BYTES} bytes (tells two keys apart; does not reveal the key)
     * @throws IllegalArgumentException when the text is not base64
     */
    public static String fingerprint(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(Base64.getDecoder().decode(key));
            return HexFormat.of().formatHex(digest).substring(0, FINGERPRINT_HEX);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    /**
     * The node's record with a node key: {@code node} itself when it has one, else {@code node} with a new key
     * written by compare-and-set ({@link MetadataStore#replaceNode}); on a conflict the record is read again (a
     * concurrent writer's key is kept), at most {@value ClusterState#CAS_ATTEMPTS} times.
     *
     * @return the record with its key as stored; null when the node was removed meanwhile
     * @throws ApiException 503 when the record changed on every attempt
     */
    static NodeRecord withKey(MetadataStore store, NodeRecord node) {
        NodeRecord current = node;
        for (int attempt = 0; attempt < ClusterState.CAS_ATTEMPTS; attempt++) {
            if (current.nodeKey() != null) {
                return current;
            }
            NodeRecord keyed = current.withNodeKey(newKey());
            if (store.replaceNode(current.nodeId(), current, keyed)) {
                return keyed;
            }
            current = store.node(node.nodeId()).orElse(null);
            if (current == null) {
                return null;
            }
        }
        throw contention(node.nodeId(), "giving it a node key");
    }

    /**
     * The links of a heartbeat answer to {@code nodeId}: for each peer (other than the node itself) that is
     * registered and has a key, ordered by node id, the secrets {@code nodeId} proves to it and that it proves back
     * ({@link NodeLinkKeys#hostSecret}, {@link NodeLinkKeys#ctrlSecret} of the peer's key and
     * {@link Node#hostnqnOf nodeId's host NQN}). A peer without a key yet (a record of before node keys) gets its
     * key at its own next registration or heartbeat, and its link in the answers after that.
     *
     * @param peers the node ids holding a copy of a volume {@code nodeId} holds a copy of (may contain it)
     * @param nodes the registered nodes by id
     */
    static List<NodeLink> links(String nodeId, Collection<String> peers, Map<String, NodeRecord> nodes) {
        String hostNqn = Node.hostnqnOf(nodeId);
        var links = new ArrayList<NodeLink>();
        for (String peer : new TreeSet<>(peers)) {
            NodeRecord p = nodes.get(peer);
            if (peer.equals(nodeId) || p == null || p.nodeKey() == null) {
                continue;
            }
            byte[] key = Base64.getDecoder().decode(p.nodeKey().getBytes(StandardCharsets.US_ASCII));
            links.add(new NodeLink(peer, NodeLinkKeys.hostSecret(key, hostNqn).encoded(),
                    NodeLinkKeys.ctrlSecret(key, hostNqn).encoded()));
            Arrays.fill(key, (byte) 0);
        }
        return links;
    }

    /** @return 503: the node's record changed on every compare-and-set attempt */
    static ApiException contention(String nodeId, String what) {
        return new ApiException(503, ProblemTypes.INTERNAL, "Store contention", "node " + nodeId + " changed "
                + ClusterState.CAS_ATTEMPTS + " times while " + what + "; retry");
    }
}
