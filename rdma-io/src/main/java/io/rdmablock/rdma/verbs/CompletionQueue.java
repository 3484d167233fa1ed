package io.rdmablock.rdma.verbs;

/**
 * A completion queue ({@code ibv_cq}) with a completion channel. Polled by one thread at a time (the poller that
 * owns it); several queue pairs may share it.
 *
 * <p>Overrun: when a completion arrives and the CQ is full, the CQ enters the error state
 * ({@code IBV_EVENT_CQ_ERR}): {@link #poll} and {@link #await} throw {@link CqOverrunException} and every queue pair
 * attached to it moves to ERROR. Size CQs for the sum of the work queues attached to them.
 */
public interface CompletionQueue extends AutoCloseable {

    /** Number of completions it holds. */
    int capacity();

    /**
     * Moves up to {@code max} completions into {@code out[0 .. n)} ({@code ibv_poll_cq(3)}); never blocks or allocates.
     *
     * @return n, 0 when none
     * @throws CqOverrunException after an overrun
     */
    int poll(WorkCompletion[] out, int max);

    /**
     * Polls; if nothing is there, waits for a completion event up to {@code timeoutNs}, then polls again
     * ({@code ibv_req_notify_cq(3)} + {@code ibv_get_cq_event(3)} + {@code ibv_ack_cq_events(3)}).
     *
     * @return number of completions, 0 on timeout
     * @throws CqOverrunException after an overrun
     */
    int await(WorkCompletion[] out, int max, long timeoutNs);

    /** Wakes a thread blocked in {@link #await} (it returns 0). Safe from any thread. */
    void wakeup();

    /** Destroys the CQ ({@code ibv_destroy_cq(3)}); idempotent. Destroy the queue pairs that use it first. */
    @Override
    void close();

    /** Thrown when the CQ overran and is in the error state. */
    final class CqOverrunException extends VerbsException {
        public CqOverrunException(String message) {
            super(message);
        }
    }
}
