package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/snapshots}.
 *
 * @param name the snapshot's name: 1-64 characters of {@code [A-Za-z0-9._-]}, starting with a letter or digit
 */
public record CreateSnapshotRequest(String name) {
}
