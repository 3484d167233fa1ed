package io.rdmablock.initiator;

/**
 * What one path of a multipath device ({@link Multipath}) tells it: the path's queues hand back I/O they will not
 * complete (the path was fenced or lost, or the command was answered with a path-related status, SCT 3h), and its
 * controller reports connection and ANA changes. Set on a path's {@link NvmeBlockDevice} before it connects; a
 * single-path device has none and behaves as before. Calls come from the path's poller and controller threads and
 * must not block.
 */
interface PathEvents {
    /** Status value of {@link #reroute} for an I/O taken back from a fenced or lost path (no NVMe status). */
    int PATH_LOST = -1;

    /**
     * {@code r} is no longer on {@code path}: it never reached the wire, or the path's queue pair was destroyed
     * before this call (no late data transfer can touch its buffer), or it completed with the path-related
     * {@code status}. The multipath resubmits it on an Optimized path, or fails it.
     *
     * @param status the NVMe status (SCT 3h), or {@link #PATH_LOST}
     */
    void reroute(NvmeBlockDevice path, IoRequest r, int status);

    /**
     * {@code r} completed on {@code path} with Namespace Not Ready (SCT 0h, SC 82h) and DNR clear: the volume is not
     * ready now (a replicated volume below {@code minInSync}) and may be later. The multipath sends it again after a
     * delay, or fails it ({@link NotReadyRetries}).
     */
    void notReady(NvmeBlockDevice path, IoRequest r, int status);

    /**
     * A queue of {@code path} destroyed its queue pair (fence): the path must not be chosen again until its
     * association is re-established ({@link #connectionChanged} up). Called before the queue hands back its I/O.
     */
    void fenced(NvmeBlockDevice path);

    /** The path's association was lost ({@code up} false) or (re-)established with its ANA state read. */
    void connectionChanged(NvmeBlockDevice path, boolean up);

    /** An ANA Change notice arrived on the path (its ANA state was re-read). */
    void anaChanged(NvmeBlockDevice path);
}
