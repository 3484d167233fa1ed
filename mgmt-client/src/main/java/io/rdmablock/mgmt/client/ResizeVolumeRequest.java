package io.rdmablock.mgmt.client;

/**
 * Body of {@code PATCH /v1/volumes/{name}}: grow only, a smaller size answers 400
 * ({@link ProblemTypes#SHRINK_NOT_ALLOWED}).
 *
 * @param sizeBytes new capacity in bytes, same bounds as at creation
 */
public record ResizeVolumeRequest(long sizeBytes) {
}
