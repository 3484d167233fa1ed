package io.rdmablock.mgmt.client;

/**
 * A host that must pass DH-HMAC-CHAP, as the management server answers it ({@code GET /v1/hosts/{hostNqn}}). Never
 * carries a secret: only which kind of secret is set, a fingerprint to compare with one's own copy, and the revision.
 *
 * @param hostNqn       the host NQN ({@link Limits#NQN_PATTERN})
 * @param hash          the host secret's transformation hash, from its {@code hh} field: {@code none} (00),
 *                      {@code sha256} (01), {@code sha384} (02) or {@code sha512} (03)
 * @param keyBytes      the host secret's key length, bytes: 32, 48 or 64
 * @param fingerprint   the first 16 hex digits of SHA-256 over the host secret's text form: equal fingerprints, equal
 *                      secrets (to check a copy without showing it; not a way to recover it)
 * @param bidirectional true when a controller secret is set (the node then proves itself to the host when asked)
 * @param revision      the metadata store's revision of the record, &gt;= 1: every {@code PUT} gives a new one
 * @param updatedAt     time of the last {@code PUT}, ISO-8601 UTC
 */
public record Host(String hostNqn, String hash, int keyBytes, String fingerprint, boolean bidirectional,
                   long revision, String updatedAt) {
}
