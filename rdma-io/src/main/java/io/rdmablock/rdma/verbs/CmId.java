package io.rdmablock.rdma.verbs;

import java.net.InetSocketAddress;

/**
 * A connection-manager identifier ({@code rdma_cm_id}) with its own event channel: the active side of a connection
 * ({@link VerbsProvider#createId()}) or the passive side of one request ({@link CmListener#getRequest}).
 *
 * <p>Active side: {@link #resolve} -> {@link #device()} -> allocate PD/CQs there -> {@link #createQp} ->
 * {@link #connect}. Passive side: {@link CmListener#getRequest} -> {@link #device()} / {@link #privateData()} ->
 * {@link #createQp} -> {@link #accept} or {@link #reject}. Private data is at most {@link #MAX_PRIVATE_DATA} bytes.
 * Not thread-safe, except {@link #disconnect()} and {@link #close()}, which may be called from any thread.
 */
public interface CmId extends AutoCloseable {
    /** Maximum private data for connect/accept/reject (RC over rdma_cm: 56 bytes, rdma_connect(3)). */
    int MAX_PRIVATE_DATA = 56;

    /**
     * Resolves address and route to {@code remote} ({@code rdma_resolve_addr(3)}, {@code rdma_resolve_route(3)}).
     *
     * @throws CmException with ADDR_ERROR / ROUTE_ERROR, or null event on timeout
     */
    void resolve(InetSocketAddress remote, long timeoutNs);

    /** The device that routes to the peer; valid after {@link #resolve} or for a connect request. */
    DeviceContext device();

    /** Creates this id's RC queue pair ({@code rdma_create_qp(3)}); one per id. */
    QueuePair createQp(QpInitAttr attr);

    /** The queue pair, or null before {@link #createQp}. */
    QueuePair qp();

    /**
     * Connects ({@code rdma_connect(3)}) and waits for ESTABLISHED. The QP is in RTS when this returns.
     *
     * @param privateData at most 56 bytes
     * @throws IllegalArgumentException when privateData is longer than 56 bytes
     * @throws CmException for REJECTED (with the peer's private data), UNREACHABLE, CONNECT_ERROR, or timeout
     */
    void connect(byte[] privateData, long timeoutNs);

    /** Private data of the connect request (passive side) or of the accept (active side after connect). */
    byte[] privateData();

    /**
     * Accepts a connect request ({@code rdma_accept(3)}) and waits for ESTABLISHED.
     *
     * @throws CmException on CONNECT_ERROR, DISCONNECTED, or timeout
     */
    void accept(byte[] privateData, long timeoutNs);

    /** Rejects a connect request with private data ({@code rdma_reject(3)}); the id is then closed. */
    void reject(byte[] privateData);

    /**
     * Waits for the next event on this id (after the connection is established: DISCONNECTED, DEVICE_REMOVAL,
     * TIMEWAIT_EXIT) for up to {@code timeoutNs}; null on timeout.
     */
    CmEventType pollEvent(long timeoutNs);

    /**
     * Disconnects ({@code rdma_disconnect(3)}): both QPs move to ERROR and flush; the peer gets DISCONNECTED.
     * Idempotent; safe from any thread.
     */
    void disconnect();

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** Disconnects if needed, destroys the QP and the id ({@code rdma_destroy_qp}, {@code rdma_destroy_id}); idempotent. */
    @Override
    void close();
}
