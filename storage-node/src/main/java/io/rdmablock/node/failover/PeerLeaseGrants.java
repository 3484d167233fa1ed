package io.rdmablock.node.failover;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * What one copy, as a secondary, grants its primary (docs/failover.md, "Peer lease"; {@link
 * io.rdmablock.rdma.fabric.Opcodes#ADMIN_PEER_LEASE}): the limit until which it may grant at all (its last answered
 * heartbeat's send time + {@code peerLeaseMaxMs}) and the latest end of any lease it granted. Every end is recorded
 * <em>before</em> the caller's check of role and epoch runs, so a promotion that raised the epoch and then reads
 * {@link #grantedUntilNanos} sees every grant that passed the check. Lock-free; a few calls per second.
 */
public final class PeerLeaseGrants {
    /** No grants. */
    public static final long NO_GRANTS = Long.MIN_VALUE;
    /** Until when (nanoTime) grants may be given; {@link #NO_GRANTS}: none. */
    private volatile long limitNanos = NO_GRANTS;
    /** The latest end of any lease granted (recorded before the checks), nanoTime; starts at creation. */
    private final AtomicLong grantedUntilNanos = new AtomicLong(System.nanoTime());

    public void limit(long nanoTime) {
        limitNanos = nanoTime;
    }

    /**
     * @param grantable checked after the end was recorded: this copy is a secondary that accepted no epoch above
     *                  the one asked for
     * @return the granted length, ns ({@code min(now + leaseNs, limit) - now} &gt; 0); 0 when refused
     */
    public long grant(long leaseNs, long nowNs, BooleanSupplier grantable) {
        long limit = limitNanos;
        if (limit == NO_GRANTS || leaseNs <= 0) {
            return 0;
        }
        long until = limit - (nowNs + leaseNs) < 0 ? limit : nowNs + leaseNs;
        if (until - nowNs <= 0) {
            return 0;
        }
        grantedUntilNanos.accumulateAndGet(until, (a, b) -> b - a > 0 ? b : a);
        return grantable.getAsBoolean() ? until - nowNs : 0;
    }

    /** When each peer node last asked for a peer lease (nanoTime), by host NQN; a few entries. */
    private final java.util.concurrent.ConcurrentHashMap<String, Long> asked =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Notes that peer node {@code hostnqn} asked for a peer lease now, granted or not: it is alive and reaches this
     * copy over the fabric (docs/failover.md, "a secondary's report").
     */
    public void asked(String hostnqn, long nowNs) {
        asked.put(hostnqn, nowNs);
    }

    /** When peer node {@code hostnqn} last asked ({@link System#nanoTime()}), or {@link Long#MIN_VALUE}: never. */
    public long askedNanos(String hostnqn) {
        Long t = hostnqn == null ? null : asked.get(hostnqn);
        return t == null ? Long.MIN_VALUE : t;
    }

    /** The latest end of any lease granted (or the creation time), a nanoTime value. */
    public long grantedUntilNanos() {
        return grantedUntilNanos.get();
    }
}
