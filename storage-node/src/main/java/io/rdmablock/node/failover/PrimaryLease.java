package io.rdmablock.node.failover;

/**
 * A primary's lease (docs/failover.md, "Lease", "Peer lease"): host I/O is served only before its end, the later of
 * the management plane's lease and the peer lease its in-sync secondaries granted; with no management lease at all
 * (a single copy, no management plane) there is no end. Ends are {@link System#nanoTime()} values. Any thread: the
 * two ends are set under this object's lock (a few times per second), the combined end is read with one volatile
 * read (the I/O gate).
 */
public final class PrimaryLease {
    /** No lease: {@link #deadlineNanos()} when no management lease was set. */
    public static final long NONE = Long.MAX_VALUE;
    /** No peer lease ({@link #peer}). */
    public static final long NO_PEER_LEASE = Long.MIN_VALUE;

    private long mgmtNanos = NONE;
    private long peerNanos = NO_PEER_LEASE;
    private volatile long deadlineNanos = NONE;

    /** Sets the management plane's lease end ({@link #NONE}: no lease). */
    public synchronized void mgmt(long nanoTime) {
        mgmtNanos = nanoTime;
        deadlineNanos = effective(mgmtNanos, peerNanos);
    }

    /** Sets the peer lease end: the earliest grant end of the in-sync secondaries less the margin, or {@link #NO_PEER_LEASE}. */
    public synchronized void peer(long nanoTime) {
        peerNanos = nanoTime;
        deadlineNanos = effective(mgmtNanos, peerNanos);
    }

    /** The end host I/O is served until, or {@link #NONE}. */
    public long deadlineNanos() {
        return deadlineNanos;
    }

    /** True when there is an end and {@code nowNs} is at or past it. */
    public boolean lapsed(long nowNs) {
        long d = deadlineNanos;
        return d != NONE && nowNs - d >= 0;
    }

    private static long effective(long mgmt, long peer) {
        if (mgmt == NONE || peer == NO_PEER_LEASE) {
            return mgmt;
        }
        return peer - mgmt > 0 ? peer : mgmt;
    }
}
