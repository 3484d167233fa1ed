package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * A {@code volume verify} run: as the primary reports it in a heartbeat ({@link VolumeReport#verify()}) and as
 * {@code GET /v1/volumes/{name}/verify} answers it (docs/resync.md, "Verify").
 *
 * @param id           run id, assigned by the management server at {@code POST /v1/volumes/{name}/verify}
 * @param state        pending, running, done or failed
 * @param nodeIds      copies compared (the primary first); empty while pending
 * @param checkedBytes bytes compared so far, 0..totalBytes
 * @param totalBytes   the volume size at the start of the run
 * @param differences  the first regions that differ (at most {@link #MAX_DIFFERENCES}), in offset order
 * @param differing    how many regions differ in all (may exceed the list's size)
 * @param error        why the run failed; null otherwise
 */
public record VerifyReport(String id, VerifyState state, List<String> nodeIds, long checkedBytes, long totalBytes,
                           List<VerifyDifference> differences, long differing, String error) {
    /** Most differing regions a report lists. */
    public static final int MAX_DIFFERENCES = 64;

    public VerifyReport {
        nodeIds = nodeIds == null ? List.of() : List.copyOf(nodeIds);
        differences = differences == null ? List.of() : List.copyOf(differences);
    }
}
