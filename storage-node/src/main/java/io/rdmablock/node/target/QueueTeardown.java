package io.rdmablock.node.target;

import io.rdmablock.rdma.verbs.CmId;

/**
 * The teardown of one {@link FabricQueue}, in steps so that its poller never blocks on a slow store: {@link #begin}
 * disconnects (the host's QP flushes) and detaches the queue from its controller (an admin queue destroys its
 * controller); {@link #drainStep}, once a polling round, polls and drops the volume I/O's completions until none is
 * in flight or {@link FabricQueue#DRAIN_TIMEOUT_NS} has passed; {@link #release} then closes the volume I/O and
 * hands the connection, the CQ and the registered memory (which stays registered and alive until the store has
 * finished with it) to the target's {@link QueueReaper}, so no poller waits for the peer (a provider's linger) or
 * the device. Every step is idempotent.
 *
 * <p>One per queue, made with it; poller thread only (or whoever owns the queue last, for {@link #close}).
 */
final class QueueTeardown {
    /** Drops completions while draining after {@link #begin}. */
    private static final VolumeIo.Completions DROP = (r, status) -> { };

    private final FabricQueue q;
    private boolean closed;
    private boolean released;
    private long drainDeadlineNs;

    QueueTeardown(FabricQueue q) {
        this.q = q;
    }

    /** True once {@link #begin} ran: the queue's teardown is no longer logged by {@link FabricQueue#fail}. */
    boolean closed() {
        return closed;
    }

    /**
     * Starts the teardown: disconnect (the host's QP flushes), detach from the controller (an admin queue destroys
     * its controller), count the commands still outstanding as dropped. The queue then only drains its store I/O
     * ({@link #drainStep}); memory stays registered and alive until the store has finished with it.
     */
    void begin(long nowNs) {
        if (closed) {
            return;
        }
        closed = true;
        q.fail("shutdown", "closed"); // the reason unless the queue failed before; not logged (closed)
        q.target.pendingDone(q);
        q.admission.gone();
        drainDeadlineNs = nowNs + FabricQueue.DRAIN_TIMEOUT_NS;
        TargetQueueMemory.closeQuietly(q::disconnect);
        TargetController c = q.controller;
        if (c != null) {
            if (q.qid == 0) {
                c.destroy("admin queue closed (" + q.fatalReason() + ")");
            } else {
                c.detachIoQueue(q.qid, q);
                c.ioQueueClosed(q.ioCounters);
            }
        }
        q.dropOutstanding();
    }

    /**
     * One round of draining after {@link #begin}: polls (and drops) volume I/O completions; when none is left in
     * flight, or after {@link FabricQueue#DRAIN_TIMEOUT_NS}, releases everything.
     *
     * @return true when the queue is fully closed
     */
    boolean drainStep(long nowNs) {
        if (released) {
            return true;
        }
        VolumeIo v = q.volumeIo.handle();
        if (v != null && v.inFlight() > 0 && nowNs - drainDeadlineNs < 0) {
            try {
                v.poll(DROP, FabricQueue.BATCH, nowNs);
            } catch (RuntimeException e) {
                FabricQueue.LOG.debug("reap while draining failed: {}", e.toString());
            }
            return false;
        }
        release();
        return true;
    }

    /** Full teardown now: {@link #begin}, then waits (bounded) for store I/O and releases. */
    void close() {
        begin(System.nanoTime());
        release();
    }

    private void release() {
        if (released) {
            return;
        }
        released = true;
        q.volumeIo.close(); // waits for what is still in flight: it may still use our buffers
        TargetController c = q.controller;
        if (c != null) {
            c.queueClosed(); // no store I/O of this queue is left: its association may drain
        }
        String reason = q.fatalReason();
        // off the poller: destroying the QP and the id may wait for the peer or the device, deregistering for the
        // device. The QP is in ERROR (begin disconnected it) and polled by no one; its memory is freed after it
        q.target.reap(() -> {
            q.releaseTransport();
            q.metrics.queueDown(reason);
        });
    }
}
