package io.rdmablock.initiator;

import java.util.List;

/**
 * Where a multipath device learns about the volume's copies and reports a primary it cannot reach: the management
 * server ({@link MgmtCopySource}), or a test's stand-in. Called on the multipath's failover thread only; both calls
 * may throw (the caller logs and goes on).
 */
interface CopySource {

    /** One copy of the volume: its node, whether it is the primary, its fabric address ({@code host:port}). */
    record Copy(String nodeId, boolean primary, String fabricAddress) {
    }

    /** The volume record as last read: its epoch and copies (the primary first). */
    record Copies(long epoch, List<Copy> copies) {
        public Copies {
            copies = List.copyOf(copies);
        }

        /** The primary's node id, or null. */
        String primaryNodeId() {
            for (Copy c : copies) {
                if (c.primary()) {
                    return c.nodeId();
                }
            }
            return null;
        }
    }

    /** Re-reads the volume record. */
    Copies read();

    /** Reports that the copy on {@code nodeId} does not answer this host ({@code reporter}: its host NQN). */
    void reportUnreachable(String nodeId, long epoch, String reporter);
}
