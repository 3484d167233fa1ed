package io.rdmablock.mgmt.client;

/**
 * The answer to {@code POST /v1/nodes/{nodeId}/rotate-key}: the node's new key, by fingerprint only (the key itself
 * goes to the node alone, in its heartbeat answers; docs/authentication.md, "Node identities").
 *
 * @param nodeId         the node
 * @param keyFingerprint the first 16 lowercase hex digits of SHA-256 over the new key's 32 bytes
 */
public record NodeKeyRotation(String nodeId, String keyFingerprint) {
}
