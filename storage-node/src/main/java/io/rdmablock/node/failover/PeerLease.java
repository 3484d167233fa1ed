package io.rdmablock.node.failover;

import io.rdmablock.node.replication.ReplicaSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongConsumer;

/**
 * A primary's peer lease (docs/failover.md, "Peer lease"): every {@code leaseMs / 4} it asks each in-sync secondary
 * (or syncing) secondary of its {@link ReplicaSet} for a lease of {@code leaseMs} at the set's epoch
 * ({@link io.rdmablock.node.replication.ForwardLink#renewLease}); the primary may serve until the earliest of {@code send time + granted - margin}
 * over every secondary in sync or syncing now, by its own monotonic clock. None, or one that has not granted: no
 * peer lease (the
 * management plane's lease alone counts). The result goes to {@code deadline} ({@code Subsystem#peerLeaseDeadline},
 * {@link #NONE} for none).
 *
 * <p>Why this is safe: a secondary records each grant's end before it checks its role and epoch, and stops granting
 * once it accepted a higher epoch; a newly promoted primary (always an in-sync copy, so one of those every grant is
 * needed from) waits out its own grants before serving. Renewals run on each link's thread; this class's timer only
 * starts them, and skips a copy whose last renewal has not come back. Never on a poller.
 */
public final class PeerLease implements AutoCloseable {
    /** No peer lease (the value given to {@code deadline}). */
    public static final long NONE = Long.MIN_VALUE;

    private final ReplicaSet set;
    private final long leaseMs;
    private final long marginNs;
    private final LongConsumer deadline;
    private final ScheduledFuture<?> renewals;
    /** Per copy index: the end granted (send time + granted), nanoTime; valid when {@link #held} is set. */
    private final AtomicLongArray until = new AtomicLongArray(ReplicaSet.MAX_COPIES);
    private final AtomicLongArray held = new AtomicLongArray(ReplicaSet.MAX_COPIES);
    private final AtomicLongArray inFlight = new AtomicLongArray(ReplicaSet.MAX_COPIES);
    private volatile boolean closed;
    private long published = NONE;

    /**
     * @param leaseMs  the lease asked for, ms, 1..60000 (the management plane's primary lease)
     * @param marginMs subtracted from each grant's end (clock rate differences, scheduling), ms, &gt;= 0
     * @param deadline receives the peer lease end (nanoTime) or {@link #NONE}; called on link threads and the timer
     * @param timer    runs the renewals' start every {@code leaseMs / 4}
     */
    public PeerLease(ReplicaSet set, long leaseMs, long marginMs, LongConsumer deadline,
                     ScheduledExecutorService timer) {
        if (leaseMs < 1 || leaseMs > 60_000 || marginMs < 0 || marginMs >= leaseMs) {
            throw new IllegalArgumentException("invalid peer lease: leaseMs=" + leaseMs + " (1..60000), marginMs="
                    + marginMs + " (0..leaseMs-1)");
        }
        this.set = set;
        this.leaseMs = leaseMs;
        this.marginNs = TimeUnit.MILLISECONDS.toNanos(marginMs);
        this.deadline = deadline;
        long period = Math.max(1, leaseMs / 4);
        this.renewals = timer.scheduleWithFixedDelay(this::renew, 0, period, TimeUnit.MILLISECONDS);
    }

    /** Starts one renewal per in-sync secondary whose last one came back (timer thread). */
    void renew() {
        if (closed) {
            return;
        }
        if (set.closed() || set.deposed()) {
            publish();
            return;
        }
        ReplicaSet.View v = set.view();
        for (ReplicaSet.Copy c : v.copies()) {
            if (!counts(v, c) || !inFlight.compareAndSet(c.index, 0, 1)) {
                continue;
            }
            long send = System.nanoTime();
            c.link.renewLease(v.epoch(), leaseMs).whenComplete((granted, failure) -> {
                if (failure == null && granted != null && granted > 0) {
                    long end = send + TimeUnit.MILLISECONDS.toNanos(granted);
                    until.accumulateAndGet(c.index, end, (a, b) -> b - a > 0 ? b : a);
                    held.set(c.index, 1);
                }
                inFlight.set(c.index, 0);
                publish();
            });
        }
        publish();
    }

    /** Computes the peer lease from the grants of the copies in sync now and passes it on when it changed. */
    private synchronized void publish() {
        long d = compute();
        if (d != published) {
            published = d;
            deadline.accept(d);
        }
    }

    private long compute() {
        if (closed || set.closed() || set.deposed()) {
            return NONE;
        }
        ReplicaSet.View v = set.view();
        long earliest = 0;
        boolean any = false;
        for (ReplicaSet.Copy c : v.copies()) {
            if (!counts(v, c)) {
                continue;
            }
            if (held.get(c.index) == 0) {
                return NONE; // an in-sync secondary that has not granted: its promotion would not wait for us
            }
            long end = until.get(c.index) - marginNs;
            if (!any || end - earliest < 0) {
                earliest = end;
                any = true;
            }
        }
        return any ? earliest : NONE;
    }

    /**
     * True for a copy in sync or syncing in the view: syncing too, because the management plane's record may show a
     * copy in sync (promotable) before this view does (between its compare-and-set and {@link ReplicaSet#resynced}).
     */
    private static boolean counts(ReplicaSet.View v, ReplicaSet.Copy c) {
        return !c.removed && (v.isInSync(c.index) || v.isSyncing(c.index));
    }

    /** The peer lease end now (nanoTime), or {@link #NONE}. */
    public long deadlineNanos() {
        return compute();
    }

    /** Stops the renewals and withdraws the peer lease. Idempotent. */
    @Override
    public void close() {
        closed = true;
        renewals.cancel(false);
        publish();
    }
}
