package io.rdmablock.mgmt.client;

/**
 * Body of {@code POST /v1/volumes/{name}/rollback} (docs/snapshots.md, "Rollback").
 *
 * @param snapshot the snapshot whose content the volume takes, a {@code ready} snapshot of the volume
 * @param force    true: hosts connected to the volume are disconnected first (and refused until the rollback is
 *                 done on every copy); false: refused with 409 {@code volume-in-use} while a host is connected
 */
public record RollbackRequest(String snapshot, boolean force) {
}
