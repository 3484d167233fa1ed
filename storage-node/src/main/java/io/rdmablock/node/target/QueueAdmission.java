package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;

/**
 * The admission of one {@link FabricQueue} at its Fabrics Connect: counted for its host against the target's
 * {@link ConnectLimits} ({@link Target#admitQueue}), then given its full buffers and RECVs; and the status that
 * answers a refused Connect. Poller thread (or the handshake thread that runs the Connect) only.
 */
final class QueueAdmission {
    /** Connect Controller Busy, DNR: a {@link ConnectLimits} cap (as Linux nvmet when it cannot make a controller). */
    static final int CONTROLLER_BUSY = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC,
            NvmeStatus.SC_CONNECT_CONTROLLER_BUSY, true);
    private static final int INTERNAL_ERROR = NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);

    private final FabricQueue q;
    /** The host NQN this queue is counted for ({@link Target#admitQueue}), or null. */
    private String admittedHost;
    /** The status of a Connect that {@link #grow} refused. */
    private int refusal = INTERNAL_ERROR;

    QueueAdmission(FabricQueue q) {
        this.q = q;
    }

    /**
     * The status that answers a Connect whose {@link #grow} returned false: Connect Controller Busy (DNR) when a
     * {@link ConnectLimits} cap refused it, Internal Error when the buffers could not be registered.
     */
    int refusal() {
        return refusal;
    }

    /** Teardown: the queue no longer counts for its host ({@link Target#queueGone}). Idempotent. */
    void gone() {
        if (admittedHost != null) {
            q.target.queueGone(admittedHost);
            admittedHost = null;
        }
    }

    /**
     * After a Connect has been validated, before its controller is created or its volume I/O opened: registers the
     * queue's full buffers ({@link TargetQueueMemory#grow}) and posts its {@code entries} RECVs (the Connect slot's
     * RECV was consumed by the Connect capsule, so no more than {@code entries} are ever posted). Idempotent.
     *
     * @param hostnqn the connecting host: the queue is counted for it against {@link ConnectLimits#maxQueuesPerHost()}
     *                and its buffers against {@link ConnectLimits#maxRegisteredBytes()} first
     * @return false when a cap refused the queue, the memory could not be allocated or registered, or a RECV could
     *         not be posted (logged; {@link #refusal} says how to answer; the queue is then failed or stays pending)
     */
    boolean grow(String hostnqn) {
        if (q.grown()) {
            return true;
        }
        if (admittedHost == null) {
            if (!q.target.admitQueue(hostnqn, q.qid, q.growBytes(), q.peer)) {
                refusal = CONTROLLER_BUSY;
                return false;
            }
            admittedHost = hostnqn;
        }
        refusal = INTERNAL_ERROR;
        try {
            q.growBuffers();
        } catch (RuntimeException e) {
            FabricQueue.LOG.warn("queue buffers could not be registered at Connect: qid={}, entries={}, peer={}: {}",
                    q.qid, q.entries, q.peer, e.toString());
            return false;
        }
        try {
            q.postRecvs();
        } catch (RuntimeException e) {
            q.fail("transport", "post RECV failed: " + e);
            return false;
        }
        return true;
    }
}
