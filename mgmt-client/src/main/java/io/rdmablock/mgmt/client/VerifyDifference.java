package io.rdmablock.mgmt.client;

import java.util.List;

/**
 * A region whose contents differ between copies (an entry of {@link VerifyReport#differences()}).
 *
 * @param offsetBytes start of the region in the volume, bytes, a multiple of the region size
 * @param lengthBytes region length, bytes (the region size, less at the volume's end)
 * @param nodeIds     nodes whose copy's CRC32C of the region differs from the primary's
 */
public record VerifyDifference(long offsetBytes, long lengthBytes, List<String> nodeIds) {
    public VerifyDifference {
        nodeIds = nodeIds == null ? List.of() : List.copyOf(nodeIds);
    }
}
