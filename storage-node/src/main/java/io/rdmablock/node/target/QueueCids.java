package io.rdmablock.node.target;

/**
 * The command identifiers of the requests outstanding on one {@link FabricQueue}: one bit per cid (65,536 bits, 8 KiB,
 * allocated with the queue). NVMe base spec 2.0 section 3.3.3.1: the host must not reuse a cid before its command's
 * completion; a capsule that does is answered Command ID Conflict and the outstanding command keeps the cid. Poller
 * thread only; no allocation.
 */
final class QueueCids {
    private final long[] inUse = new long[1024];

    /** Claims {@code r.cid} for {@code r} ({@link Request#ownsCid}); false when another outstanding command has it. */
    boolean claim(Request r) {
        int cid = r.cid;
        long bit = 1L << (cid & 63);
        if ((inUse[cid >>> 6] & bit) != 0) {
            return false;
        }
        inUse[cid >>> 6] |= bit;
        r.ownsCid = true;
        return true;
    }

    /** Gives {@code r}'s cid back when it owns one (its response is posted); otherwise nothing. */
    void release(Request r) {
        if (r.ownsCid) {
            r.ownsCid = false;
            inUse[r.cid >>> 6] &= ~(1L << (r.cid & 63));
        }
    }
}
