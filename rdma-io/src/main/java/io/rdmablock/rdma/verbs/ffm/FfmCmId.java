package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_QP_INIT_ATTR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RDMA_CM_ID;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RDMA_CONN_PARAM;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmException;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An {@code rdma_cm_id} with its own event channel ({@link CmEventChannel}; a passive id is moved onto its own
 * channel with {@code rdma_migrate_id(3)}). Every wait is bounded by the caller's timeout.
 *
 * <p>Private data is what rdma_cm delivers: on IB/RoCE the transport pads it with zeros to its fixed size (connect
 * request 56 bytes, accept 196, reject 148; rdma_cm(7)); on iWARP it has the exact length sent. Nothing is added
 * to it or removed from it: a peer sees exactly the caller's bytes.
 *
 * <p>iWARP (RFC 5044 MPA): the passive side must not send before it has received the active side's first message
 * (siw drops a connection whose MPA reply is followed by early data). This provider does nothing private for that:
 * the protocol on top meets it (NVMe-oF: the host's first capsule is the Connect command; the target only answers).
 * A caller whose passive side speaks first on iWARP must first have its peer send.
 *
 * <p>RNR and transport retries: each side's {@code rnrRetryCount}/{@code retryCount} govern its own QP (see
 * {@link DirectQp}); iWARP has no RNR (a SEND without a posted RECV terminates the connection).
 *
 * <p>Teardown ({@link #close}): disconnect if connected, destroy the QP (ERROR first, so outstanding WRs flush),
 * then {@code rdma_destroy_id} and the channel.
 */
final class FfmCmId implements CmId {
    private static final long ID_VERBS = off(RDMA_CM_ID, "verbs");
    private static final long ID_QP = off(RDMA_CM_ID, "qp");
    private static final long ID_SRC = off(RDMA_CM_ID, "route", "addr", "src_storage");
    private static final long ID_DST = off(RDMA_CM_ID, "route", "addr", "dst_storage");
    private static final int IBV_QPT_RC = 2;

    private final FfmVerbsProvider provider;
    private final CmEventChannel channel;
    final MemorySegment id;
    private final boolean passive;
    private final ReentrantLock waitLock = new ReentrantLock();
    private final int requestResponderResources;
    private final int requestInitiatorDepth;
    private final int requestRnrRetryCount;
    private byte[] privateData;
    private FfmQueuePair qp;
    private volatile boolean connected;
    /** rdma_disconnect was issued (by the caller, or in reply to the peer's DISCONNECTED). */
    private boolean disconnected;
    /** A DISCONNECTED was returned to the caller. */
    private boolean disconnectReported;
    private volatile boolean closed;

    private FfmCmId(FfmVerbsProvider provider, CmEventChannel channel, MemorySegment id, boolean passive,
                    byte[] privateData, int requestResponderResources, int requestInitiatorDepth,
                    int requestRnrRetryCount) {
        this.provider = provider;
        this.channel = channel;
        this.id = id.reinterpret(RDMA_CM_ID.byteSize());
        this.passive = passive;
        this.privateData = privateData;
        this.requestResponderResources = requestResponderResources;
        this.requestInitiatorDepth = requestInitiatorDepth;
        this.requestRnrRetryCount = requestRnrRetryCount;
    }

    /** {@code rdma_create_event_channel} + {@code rdma_create_id(RDMA_PS_TCP)}. */
    static FfmCmId createActive(FfmVerbsProvider provider) {
        CmEventChannel ch = CmEventChannel.create();
        try {
            return new FfmCmId(provider, ch, createIdOn(ch), false, new byte[0], 0, 0, -1);
        } catch (RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** The passive id of a CONNECT_REQUEST, already migrated onto {@code ch}. */
    static FfmCmId passive(FfmVerbsProvider provider, CmEventChannel ch, MemorySegment id, CmEventChannel.Event req) {
        return new FfmCmId(provider, ch, id, true, req.privateData(), req.responderResources(), req.initiatorDepth(),
                req.rnrRetryCount());
    }

    static MemorySegment createIdOn(CmEventChannel ch) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int rc = (int) Native.RDMA_CREATE_ID.invokeExact(Native.errnoSegment(), ch.channel, out,
                    MemorySegment.NULL, Native.RDMA_PS_TCP);
            if (rc != 0) {
                throw Native.fail("rdma_create_id", Native.errno(), "ps=RDMA_PS_TCP");
            }
            return out.get(ADDRESS, 0);
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_create_id failed: " + t, 0, t);
        }
    }

    @Override
    public void resolve(InetSocketAddress remote, long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        if (remote.isUnresolved()) {
            throw new CmException("rdma_resolve_addr remote=" + remote + ": host name does not resolve",
                    CmEventType.ADDR_ERROR, null);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment dst = SockAddr.of(remote, a);
            int rc = (int) Native.RDMA_RESOLVE_ADDR.invokeExact(Native.errnoSegment(), id, MemorySegment.NULL, dst,
                    timeoutMs(timeoutNs));
            if (rc != 0) {
                throw Native.fail("rdma_resolve_addr", Native.errno(), "remote=" + remote);
            }
            expect(CmEventType.ADDR_RESOLVED, deadline, "rdma_resolve_addr remote=" + remote);
            rc = (int) Native.RDMA_RESOLVE_ROUTE.invokeExact(Native.errnoSegment(), id,
                    timeoutMs(deadline - System.nanoTime()));
            if (rc != 0) {
                throw Native.fail("rdma_resolve_route", Native.errno(), "remote=" + remote);
            }
            expect(CmEventType.ROUTE_RESOLVED, deadline, "rdma_resolve_route remote=" + remote);
        } catch (VerbsException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_resolve_addr failed: " + t, 0, t);
        }
    }

    private static int timeoutMs(long ns) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (ns + 999_999) / 1_000_000));
    }

    /** Waits for {@code want}; any other connection event (or a timeout) ends the wait with a CmException. */
    private CmEventChannel.Event expect(CmEventType want, long deadline, String what) {
        waitLock.lock();
        try {
            while (true) {
                long remaining = deadline - System.nanoTime();
                CmEventChannel.Event e = remaining > 0 && !closed ? channel.next(remaining) : null;
                if (e == null) {
                    throw new CmException(what + ": " + (closed ? "id closed" : "timed out") + " waiting for " + want,
                            null, null);
                }
                if (e.type() == want) {
                    return e;
                }
                if (e.type() == null || e.type() == CmEventType.TIMEWAIT_EXIT) {
                    continue;
                }
                if (e.type() == CmEventType.DISCONNECTED) {
                    disconnectReported = true;
                    peerDisconnected();
                }
                byte[] pd = e.type() == CmEventType.REJECTED ? e.privateData() : null;
                throw new CmException(what + ": got " + e.type() + " (status=" + e.status() + ") instead of " + want,
                        e.type(), pd);
            }
        } finally {
            waitLock.unlock();
        }
    }

    @Override
    public DeviceContext device() {
        return provider.device(id.get(ADDRESS, ID_VERBS));
    }

    @Override
    public synchronized QueuePair createQp(QpInitAttr attr) {
        if (qp != null) {
            throw new IllegalStateException("this rdma_cm_id already has a queue pair (qpNum=" + qp.qpNum() + ")");
        }
        FfmDeviceContext dev = (FfmDeviceContext) device();
        if (!(attr.pd instanceof FfmProtectionDomain pd) || !(attr.sendCq instanceof FfmCompletionQueue scq)
                || !(attr.recvCq instanceof FfmCompletionQueue rcq)) {
            throw new IllegalArgumentException("invalid QpInitAttr: pd, sendCq and recvCq must be ffm objects, got pd="
                    + attr.pd + ", sendCq=" + attr.sendCq + ", recvCq=" + attr.recvCq);
        }
        if (pd.device != dev) {
            throw new IllegalArgumentException("invalid pd: allocated on " + pd.device.name() + ", id routes via "
                    + dev.name());
        }
        QpAttrs.validate(attr, dev);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ia = a.allocate(IBV_QP_INIT_ATTR);
            ia.set(ADDRESS, off(IBV_QP_INIT_ATTR, "send_cq"), scq.cq);
            ia.set(ADDRESS, off(IBV_QP_INIT_ATTR, "recv_cq"), rcq.cq);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_send_wr"), attr.maxSendWr);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_recv_wr"), attr.maxRecvWr);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_send_sge"), attr.maxSendSge);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_recv_sge"), attr.maxRecvSge);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_inline_data"), attr.maxInlineData);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "qp_type"), IBV_QPT_RC);
            ia.set(JAVA_INT, off(IBV_QP_INIT_ATTR, "sq_sig_all"), 0);
            String details = "maxSendWr=" + attr.maxSendWr + ", maxRecvWr=" + attr.maxRecvWr + ", maxSendSge="
                    + attr.maxSendSge + ", maxRecvSge=" + attr.maxRecvSge + ", maxInlineData=" + attr.maxInlineData
                    + ", device=" + dev.name();
            MemorySegment qpPtr;
            FfmQueuePair.Owner owner;
            if (passive && !dev.iwarp()) {
                // IB/RoCE passive side: the provider drives the QP to RTS itself (see DirectQp)
                qpPtr = DirectQp.create(id, pd, ia, details);
                owner = FfmQueuePair.Owner.DIRECT;
            } else {
                int rc = (int) Native.RDMA_CREATE_QP.invokeExact(Native.errnoSegment(), id, pd.pd, ia);
                if (rc != 0) {
                    throw Native.fail("rdma_create_qp", Native.errno(), details);
                }
                qpPtr = id.get(ADDRESS, ID_QP);
                owner = FfmQueuePair.Owner.RDMA_CM;
            }
            QpInitAttr actual = attr.copy();
            actual.maxSendWr = ia.get(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_send_wr"));
            actual.maxRecvWr = ia.get(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_recv_wr"));
            actual.maxSendSge = ia.get(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_send_sge"));
            actual.maxRecvSge = ia.get(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_recv_sge"));
            actual.maxInlineData = ia.get(JAVA_INT, off(IBV_QP_INIT_ATTR, "cap", "max_inline_data"));
            qp = new FfmQueuePair(dev, owner, id, qpPtr, actual);
            dev.registerQp(qp);
            return qp;
        } catch (VerbsException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_create_qp failed: " + t, 0, t);
        }
    }

    @Override
    public QueuePair qp() {
        return qp;
    }

    private MemorySegment connParam(Arena a, byte[] data, int responderResources, int initiatorDepth,
                                    int rnrRetryCount) {
        MemorySegment p = a.allocate(RDMA_CONN_PARAM);
        if (data.length > 0) {
            MemorySegment d = a.allocate(data.length);
            MemorySegment.copy(data, 0, d, JAVA_BYTE, 0, data.length);
            p.set(ADDRESS, off(RDMA_CONN_PARAM, "private_data"), d);
        }
        p.set(JAVA_BYTE, off(RDMA_CONN_PARAM, "private_data_len"), (byte) data.length);
        p.set(JAVA_BYTE, off(RDMA_CONN_PARAM, "responder_resources"), (byte) responderResources);
        p.set(JAVA_BYTE, off(RDMA_CONN_PARAM, "initiator_depth"), (byte) initiatorDepth);
        p.set(JAVA_BYTE, off(RDMA_CONN_PARAM, "retry_count"), (byte) qp.attr().retryCount);
        p.set(JAVA_BYTE, off(RDMA_CONN_PARAM, "rnr_retry_count"), (byte) rnrRetryCount);
        if (qp.owner() == FfmQueuePair.Owner.DIRECT) {
            p.set(JAVA_INT, off(RDMA_CONN_PARAM, "qp_num"), qp.qpNum()); // no QP on the id: say which one
        }
        return p;
    }

    private static byte[] checkPrivateData(byte[] data) {
        byte[] d = data == null ? new byte[0] : data;
        if (d.length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("invalid privateData: length=" + d.length + ", max=" + MAX_PRIVATE_DATA);
        }
        return d;
    }

    private void requireQp(String call) {
        if (qp == null) {
            throw new IllegalStateException(call + " before createQp");
        }
    }

    @Override
    public void connect(byte[] data, long timeoutNs) {
        byte[] d = checkPrivateData(data);
        requireQp("connect");
        long deadline = System.nanoTime() + timeoutNs;
        FfmDeviceContext dev = qp.device();
        try (Arena a = Arena.ofConfined()) {
            // REQ carries this side's own RNR retry wish; the passive ffm side echoes it back in the REP, which
            // librdmacm applies to this QP (see DirectQp)
            MemorySegment p = connParam(a, d, Math.min(qp.attr().responderResources, dev.maxQpRdAtom),
                    Math.min(qp.attr().initiatorDepth, dev.maxQpInitRdAtom), qp.attr().rnrRetryCount);
            int rc = (int) Native.RDMA_CONNECT.invokeExact(Native.errnoSegment(), id, p);
            if (rc != 0) {
                int errno = Native.errno();
                String msg = Native.fail("rdma_connect", errno, "remote=" + remoteAddress() + ", privateDataBytes="
                        + d.length).getMessage();
                if (errno == 111 || errno == 113 || errno == 101 || errno == 110) {
                    // iWARP (siw) connects TCP synchronously: ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT
                    throw new CmException(msg, CmEventType.UNREACHABLE, null);
                }
                throw new VerbsException(msg, errno);
            }
        } catch (VerbsException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_connect failed: " + t, 0, t);
        }
        CmEventChannel.Event e = expect(CmEventType.ESTABLISHED, deadline, "rdma_connect remote=" + remoteAddress());
        connected = true;
        qp.connected();
        privateData = e.privateData();
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public void accept(byte[] data, long timeoutNs) {
        byte[] d = checkPrivateData(data);
        requireQp("accept");
        long deadline = System.nanoTime() + timeoutNs;
        FfmDeviceContext dev = qp.device();
        // responder_resources <= the peer's initiator_depth and initiator_depth <= its responder_resources
        // (rdma_accept(3)); 0 from the peer means "not given".
        int rr = Math.min(qp.attr().responderResources, dev.maxQpRdAtom);
        int id0 = Math.min(qp.attr().initiatorDepth, dev.maxQpInitRdAtom);
        if (requestInitiatorDepth > 0) {
            rr = Math.min(rr, requestInitiatorDepth);
        }
        if (requestResponderResources > 0) {
            id0 = Math.min(id0, requestResponderResources);
        }
        int repRnrRetry = qp.attr().rnrRetryCount;
        if (qp.owner() == FfmQueuePair.Owner.DIRECT) {
            DirectQp.toRts(id, qp.qp, rr, id0, qp.attr().retryCount, qp.attr().rnrRetryCount);
            if (requestRnrRetryCount >= 0 && requestRnrRetryCount <= 7) {
                repRnrRetry = requestRnrRetryCount; // the active side's own wish, applied to its QP
            }
        }
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) Native.RDMA_ACCEPT.invokeExact(Native.errnoSegment(), id, connParam(a, d, rr, id0,
                    repRnrRetry));
            if (rc != 0) {
                throw Native.fail("rdma_accept", Native.errno(), "remote=" + remoteAddress() + ", responderResources="
                        + rr + ", initiatorDepth=" + id0);
            }
        } catch (VerbsException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_accept failed: " + t, 0, t);
        }
        expect(CmEventType.ESTABLISHED, deadline, "rdma_accept remote=" + remoteAddress());
        connected = true;
        qp.connected();
    }

    @Override
    public void reject(byte[] data) {
        byte[] d = checkPrivateData(data);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(Math.max(1, d.length));
            MemorySegment.copy(d, 0, p, JAVA_BYTE, 0, d.length);
            MemorySegment pdata = d.length == 0 ? MemorySegment.NULL : p; // typed local: invokeExact is exact
            int rc = (int) Native.RDMA_REJECT.invokeExact(Native.errnoSegment(), id, pdata, (byte) d.length);
            if (rc != 0) {
                throw Native.fail("rdma_reject", Native.errno(), "remote=" + remoteAddress());
            }
        } catch (VerbsException | IllegalArgumentException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_reject failed: " + t, 0, t);
        } finally {
            close();
        }
    }

    /**
     * Next CM event. DISCONNECTED is reported once per id: at once to the side that called {@link #disconnect()}
     * (rdma_cm would report it only after the peer's DREP, i.e. after the peer itself polled), and on the peer's
     * side when its DREQ arrives, in which case the provider replies with {@code rdma_disconnect} (the DREP) and
     * flushes the QP.
     */
    @Override
    public CmEventType pollEvent(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        waitLock.lock();
        try {
            synchronized (this) {
                if (disconnected && !disconnectReported) {
                    disconnectReported = true;
                    return CmEventType.DISCONNECTED;
                }
            }
            while (!closed) {
                // timeoutNs 0 still reads the channel once (non-blocking): a poller checking for DISCONNECTED
                // between rounds must see it
                long remaining = Math.max(0, deadline - System.nanoTime());
                CmEventChannel.Event e = channel.next(remaining);
                if (e == null) {
                    return null;
                }
                if (e.type() == null) {
                    continue;
                }
                if (e.type() == CmEventType.DISCONNECTED) {
                    synchronized (this) {
                        if (disconnectReported) {
                            continue; // the native event for our own disconnect, already reported
                        }
                        disconnectReported = true;
                    }
                    peerDisconnected();
                }
                return e.type();
            }
            return null;
        } finally {
            waitLock.unlock();
        }
    }

    /** The peer disconnected: flush our QP and reply (DREP) so its side completes. */
    private void peerDisconnected() {
        try {
            disconnect();
        } catch (VerbsException e) {
            flushQp();
        }
    }

    @Override
    public synchronized void disconnect() {
        if (!connected || disconnected) {
            return;
        }
        disconnected = true;
        flushQp();
        try {
            int rc = (int) Native.RDMA_DISCONNECT.invokeExact(Native.errnoSegment(), id);
            int errno = rc != 0 ? Native.errno() : 0;
            if (rc != 0 && errno != Errno.EINVAL && errno != 107 /* ENOTCONN */) {
                throw Native.fail("rdma_disconnect", errno, "remote=" + remoteAddress());
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_disconnect failed: " + t, 0, t);
        }
    }

    /** QP to ERROR so outstanding WRs flush (librdmacm does it only for QPs it created, and never on DISCONNECTED). */
    private void flushQp() {
        FfmQueuePair q = qp;
        if (q != null && !q.isClosed()) {
            try {
                q.moveToError();
            } catch (VerbsException ignored) {
                // already in ERROR or being destroyed
            }
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return SockAddr.read(id.asSlice(ID_SRC, 128));
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return SockAddr.read(id.asSlice(ID_DST, 128));
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        channel.wakeup();
        RuntimeException first = null;
        first = Closer.close(this::disconnect, first);
        first = Closer.close(qp, first);
        waitLock.lock(); // no thread is inside channel.next() past this point
        try {
            int rc = (int) Native.RDMA_DESTROY_ID.invokeExact(Native.errnoSegment(), id);
            if (rc != 0) {
                first = Closer.close(() -> {
                    throw Native.fail("rdma_destroy_id", Native.errno(), "");
                }, first);
            }
        } catch (Throwable t) {
            first = Closer.close(() -> {
                throw new VerbsException("rdma_destroy_id failed: " + t, 0, t);
            }, first);
        } finally {
            first = Closer.close(channel, first);
            waitLock.unlock();
        }
        provider.untrack(this);
        if (first != null) {
            throw first;
        }
    }
}
