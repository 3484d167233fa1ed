package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.POLLFD;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RDMA_CM_EVENT;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An {@code rdma_event_channel} whose fd is O_NONBLOCK and waited on with {@code poll(2)} together with an eventfd
 * (for {@link #wakeup()}), so every wait has a timeout ({@code rdma_get_cm_event(3)} itself would block forever).
 * Events are copied into {@link Event} and acked at once ({@code rdma_ack_cm_event(3)}), so no event is ever held
 * (rdma_destroy_id waits for unacked events). One thread waits at a time; {@link #wakeup()} is safe from any thread.
 */
final class CmEventChannel implements AutoCloseable {
    private static final long EV_ID = off(RDMA_CM_EVENT, "id");
    private static final long EV_EVENT = off(RDMA_CM_EVENT, "event");
    private static final long EV_STATUS = off(RDMA_CM_EVENT, "status");
    private static final long EV_PDATA = off(RDMA_CM_EVENT, "param", "conn", "private_data");
    private static final long EV_PDATA_LEN = off(RDMA_CM_EVENT, "param", "conn", "private_data_len");
    private static final long EV_RESP_RES = off(RDMA_CM_EVENT, "param", "conn", "responder_resources");
    private static final long EV_INIT_DEPTH = off(RDMA_CM_EVENT, "param", "conn", "initiator_depth");
    private static final long EV_RETRY = off(RDMA_CM_EVENT, "param", "conn", "retry_count");
    private static final long EV_RNR_RETRY = off(RDMA_CM_EVENT, "param", "conn", "rnr_retry_count");
    private static final CmEventType[] TYPES = {
        CmEventType.ADDR_RESOLVED, CmEventType.ADDR_ERROR, CmEventType.ROUTE_RESOLVED, CmEventType.ROUTE_ERROR,
        CmEventType.CONNECT_REQUEST, CmEventType.CONNECT_RESPONSE, CmEventType.CONNECT_ERROR,
        CmEventType.UNREACHABLE, CmEventType.REJECTED, CmEventType.ESTABLISHED, CmEventType.DISCONNECTED,
        CmEventType.DEVICE_REMOVAL, null /* MULTICAST_JOIN */, null /* MULTICAST_ERROR */, null /* ADDR_CHANGE */,
        CmEventType.TIMEWAIT_EXIT};

    /**
     * A copied CM event.
     *
     * @param type        null for event types this API does not surface (multicast, ADDR_CHANGE)
     * @param nativeType  {@code enum rdma_cm_event_type} value
     * @param status      event status (negative errno, or the reject reason for REJECTED)
     * @param id          the {@code rdma_cm_id} the event is for (the new id for CONNECT_REQUEST)
     * @param privateData connect/accept/reject private data (empty when none)
     * @param responderResources CONNECT_REQUEST: the peer's responder_resources
     * @param initiatorDepth     CONNECT_REQUEST: the peer's initiator_depth
     * @param retryCount         CONNECT_REQUEST: the peer's retry_count
     * @param rnrRetryCount      CONNECT_REQUEST: the peer's rnr_retry_count
     */
    record Event(CmEventType type, int nativeType, int status, MemorySegment id, byte[] privateData,
                 int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount) {
    }

    private final Arena arena = Arena.ofShared();
    final MemorySegment channel;
    final int fd;
    private final int wakeFd;
    private final MemorySegment pollFds;
    private final MemorySegment eventOut;
    private final MemorySegment wakeBuf;
    private boolean closed;

    private CmEventChannel(MemorySegment channel, int wakeFd) {
        this.channel = channel;
        this.fd = channel.reinterpret(4).get(JAVA_INT, 0);
        this.wakeFd = wakeFd;
        this.pollFds = arena.allocate(POLLFD, 2);
        this.eventOut = arena.allocate(ADDRESS);
        this.wakeBuf = arena.allocate(JAVA_LONG);
        pollFds.set(JAVA_INT, 0, fd);
        pollFds.set(JAVA_SHORT, 4, (short) Native.POLLIN);
        pollFds.set(JAVA_INT, 8, wakeFd);
        pollFds.set(JAVA_SHORT, 12, (short) Native.POLLIN);
    }

    /**
     * {@code rdma_create_event_channel(3)}.
     *
     * @throws VerbsException naming errno; ENODEV means no RDMA device (librdmacm found none)
     */
    static CmEventChannel create() {
        MemorySegment ch;
        try {
            ch = (MemorySegment) Native.RDMA_CREATE_EVENT_CHANNEL.invokeExact(Native.errnoSegment());
        } catch (Throwable t) {
            throw new VerbsException("rdma_create_event_channel failed: " + t, 0, t);
        }
        if (ch.address() == 0) {
            int errno = Native.errno();
            throw Native.fail("rdma_create_event_channel", errno, errno == Errno.ENODEV || errno == Errno.ENOSYS
                    ? "no RDMA device (create one with `rdma link add rxe0 type rxe netdev <if>`)" : "");
        }
        int wake;
        try {
            wake = (int) Native.EVENTFD.invokeExact(0, Native.EFD_NONBLOCK | Native.EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new VerbsException("eventfd failed: " + t, 0, t);
        }
        CmEventChannel c = new CmEventChannel(ch, wake);
        if (wake < 0) {
            c.close();
            throw new VerbsException("eventfd failed for the rdma_cm event channel");
        }
        Native.setNonBlocking(c.fd, "rdma_event_channel");
        return c;
    }

    /**
     * Waits up to {@code timeoutNs} for the next event; null on timeout or {@link #wakeup()}.
     *
     * @throws VerbsException if {@code rdma_get_cm_event} fails with anything but EAGAIN
     */
    Event next(long timeoutNs) {
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        while (true) {
            Event e = tryGet();
            if (e != null) {
                return e;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0 || closed) {
                return null;
            }
            int ready = FdPoll.poll(pollFds, 2, remaining);
            if (ready > 0 && (pollFds.get(JAVA_SHORT, 14) & Native.POLLIN) != 0) {
                FdPoll.drainEventFd(wakeFd, wakeBuf);
                return tryGet();
            }
        }
    }

    private Event tryGet() {
        int rc;
        try {
            rc = (int) Native.RDMA_GET_CM_EVENT.invokeExact(Native.errnoSegment(), channel, eventOut);
        } catch (Throwable t) {
            throw new VerbsException("rdma_get_cm_event failed: " + t, 0, t);
        }
        if (rc != 0) {
            int errno = Native.errno();
            if (errno == Errno.EAGAIN || errno == Errno.EINTR) {
                return null;
            }
            throw Native.fail("rdma_get_cm_event", errno, "fd=" + fd);
        }
        MemorySegment ev = eventOut.get(ADDRESS, 0).reinterpret(RDMA_CM_EVENT.byteSize());
        int nativeType = ev.get(JAVA_INT, EV_EVENT);
        int status = ev.get(JAVA_INT, EV_STATUS);
        MemorySegment id = ev.get(ADDRESS, EV_ID);
        byte[] pdata = new byte[0];
        MemorySegment p = ev.get(ADDRESS, EV_PDATA);
        int len = Byte.toUnsignedInt(ev.get(JAVA_BYTE, EV_PDATA_LEN));
        // param.conn is defined for CONNECT_REQUEST .. ESTABLISHED only (4..9); elsewhere it may be garbage
        boolean conn = nativeType >= 4 && nativeType <= 9;
        if (conn && p.address() != 0 && len > 0) {
            pdata = p.reinterpret(len).toArray(JAVA_BYTE);
        }
        int respRes = conn ? Byte.toUnsignedInt(ev.get(JAVA_BYTE, EV_RESP_RES)) : 0;
        int initDepth = conn ? Byte.toUnsignedInt(ev.get(JAVA_BYTE, EV_INIT_DEPTH)) : 0;
        int retry = conn ? Byte.toUnsignedInt(ev.get(JAVA_BYTE, EV_RETRY)) : 0;
        int rnrRetry = conn ? Byte.toUnsignedInt(ev.get(JAVA_BYTE, EV_RNR_RETRY)) : 0;
        try {
            int ignored = (int) Native.RDMA_ACK_CM_EVENT.invokeExact(Native.errnoSegment(), ev);
        } catch (Throwable t) {
            throw new VerbsException("rdma_ack_cm_event failed: " + t, 0, t);
        }
        CmEventType type = nativeType >= 0 && nativeType < TYPES.length ? TYPES[nativeType] : null;
        return new Event(type, nativeType, status, id, pdata, respRes, initDepth, retry, rnrRetry);
    }

    /** Makes a thread blocked in {@link #next} return null. Safe from any thread. */
    void wakeup() {
        FdPoll.signalEventFd(wakeFd);
    }

    /** Destroys the channel ({@code rdma_destroy_event_channel}); every id on it must be destroyed first. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Native.RDMA_DESTROY_EVENT_CHANNEL.invokeExact(channel);
        } catch (Throwable t) {
            throw new VerbsException("rdma_destroy_event_channel failed: " + t, 0, t);
        } finally {
            Native.closeFd(wakeFd);
            arena.close();
        }
    }
}
