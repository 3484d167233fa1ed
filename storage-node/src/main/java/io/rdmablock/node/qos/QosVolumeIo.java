package io.rdmablock.node.qos;

import io.rdmablock.node.metrics.ForegroundLatency;
import io.rdmablock.node.target.Request;
import io.rdmablock.node.target.VolumeIo;

import java.util.concurrent.locks.LockSupport;

/**
 * The {@link VolumeIo} of one I/O queue of a volume served here as primary (or not replicated), in front of the
 * handle the subsystem's factory opened: a command over the volume's budget ({@link VolumeQosLimiter}, shared by all
 * of the volume's queues) is held here, in arrival order, and started on a later poll round once the budget allows
 * it; it is never failed. For the queue it stays an ordinary command in flight (state EXECUTING), handed back once
 * by {@link #poll}: the request state machine is the queue's, unchanged.
 *
 * <p>Secondaries do not use it (a primary's forwarded writes are not limited twice). Commands that do not count
 * ({@link VolumeQosLimiter#limited}: FLUSH, DATASET MANAGEMENT) are never held. Poller thread only, like every
 * {@link VolumeIo}; the held commands sit in a ring of the queue's depth made at open: no lock, nothing allocated
 * per command, one volatile read per command when the volume has no limit.
 *
 * <p>It also times the commands it hands to the inner handle (started there to completed, at the poll's clock;
 * time held for budget left out) into the node's {@link ForegroundLatency}, the signal of the background budget
 * ({@link BackgroundBudget}): two striped adds per command completed.
 */
public final class QosVolumeIo implements VolumeIo {
    private final VolumeIo inner;
    private final VolumeQosLimiter limiter;
    /** Held commands, oldest at {@link #head}; as many slots as the queue has requests. */
    private final Request[] held;
    /** When each held command was held (clock of {@link #start}), by ring slot. */
    private final long[] heldSinceNs;
    private int head;
    private int count;
    private final ForegroundLatency foreground;
    /** When each command was started on the inner handle (clock of the start), by request index. */
    private final long[] startedNs;
    /** The sink of the current {@link #poll}; null outside it. */
    private Completions outer;
    private long pollNs;
    private final Completions timed = this::innerCompleted;

    /**
     * @param inner   the handle that executes the commands (the local copy, or the replicated one)
     * @param limiter the volume's limits ({@code Subsystem.qos()})
     * @param entries the queue's requests (most commands in flight at once), &gt;= 1
     * @param foreground the node's foreground latency signal, told of each command completed by the inner handle
     * @throws IllegalArgumentException when {@code entries} &lt; 1
     */
    public QosVolumeIo(VolumeIo inner, VolumeQosLimiter limiter, int entries, ForegroundLatency foreground) {
        if (entries < 1) {
            throw new IllegalArgumentException("invalid entries: entries=" + entries + ", min=1");
        }
        this.inner = java.util.Objects.requireNonNull(inner, "inner");
        this.limiter = java.util.Objects.requireNonNull(limiter, "limiter");
        this.held = new Request[entries];
        this.heldSinceNs = new long[entries];
        this.foreground = java.util.Objects.requireNonNull(foreground, "foreground");
        this.startedNs = new long[entries];
    }

    /** Starts {@code r} on the inner handle, noting when (one answered at once, an error, is not timed). */
    private int startInner(Request r, long nowNs) {
        int status = inner.start(r, nowNs);
        int i = r.index();
        if (status == IN_FLIGHT && i >= 0 && i < startedNs.length) {
            startedNs[i] = nowNs;
        }
        return status;
    }

    /** The inner handle completed {@code r} within {@link #poll}: timed, then handed on. */
    private void innerCompleted(Request r, int status) {
        int i = r.index();
        if (i >= 0 && i < startedNs.length) {
            foreground.record(pollNs - startedNs[i]);
        }
        outer.completed(r, status);
    }

    /** The handle behind this one. */
    public VolumeIo inner() {
        return inner;
    }

    @Override
    public int start(Request r, long nowNs) {
        if (count == 0 ? limiter.tryAcquire(r.opcode(), r.lengthBytes(), nowNs)
                : !VolumeQosLimiter.limited(r.opcode())) {
            return startInner(r, nowNs);
        }
        // over budget, or behind commands held before it (arrival order): held until a poll round admits it
        int tail = (head + count) % held.length;
        held[tail] = r;
        heldSinceNs[tail] = nowNs;
        count++;
        limiter.held();
        return IN_FLIGHT;
    }

    @Override
    public int poll(Completions sink, int max, long nowNs) {
        int work = 0;
        while (count > 0) {
            Request r = held[head];
            if (!limiter.tryAcquire(r.opcode(), r.lengthBytes(), nowNs)) {
                break;
            }
            long since = heldSinceNs[head];
            held[head] = null;
            head = (head + 1) % held.length;
            count--; // before the start: a completion handed back below may start (and hold) a new command
            limiter.released(Math.max(1, nowNs - since));
            int status = startInner(r, nowNs);
            if (status != IN_FLIGHT) {
                sink.completed(r, status);
            }
            work++;
        }
        outer = sink;
        pollNs = nowNs;
        try {
            return work + inner.poll(timed, max, nowNs);
        } finally {
            outer = null;
        }
    }

    @Override
    public int inFlight() {
        return inner.inFlight() + count;
    }

    /** Commands held for budget on this queue now. */
    public int held() {
        return count;
    }

    /**
     * With commands held: waits at most one slice ({@link VolumeQosLimiter#SLICE_NS}) - on the store when it has
     * commands in flight, else parked - so a held command is tried again within about 1 ms. Otherwise the inner
     * handle's wait.
     */
    @Override
    public boolean awaitStore(long timeoutNs) {
        if (count == 0) {
            return inner.awaitStore(timeoutNs);
        }
        long wait = Math.min(timeoutNs, VolumeQosLimiter.SLICE_NS);
        if (inner.inFlight() > 0 && inner.awaitStore(wait)) {
            return true;
        }
        LockSupport.parkNanos(this, wait);
        return true;
    }

    /** Drops the held commands (never started: nothing to wait for), then closes the inner handle. */
    @Override
    public void close() {
        while (count > 0) {
            held[head] = null;
            head = (head + 1) % held.length;
            count--;
            limiter.released(0);
        }
        inner.close();
    }
}
