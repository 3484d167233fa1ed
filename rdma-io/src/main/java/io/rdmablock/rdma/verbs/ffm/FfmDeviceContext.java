package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_ASYNC_EVENT;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_CONTEXT;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_DEVICE;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.IBV_DEVICE_ATTR;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@code ibv_context} opened by librdmacm, with the limits from {@code ibv_query_device(3)} and the data-path
 * function pointers of its {@code ops} table ({@code poll_cq}, {@code req_notify_cq}, {@code post_send},
 * {@code post_recv}), read once.
 */
final class FfmDeviceContext implements DeviceContext {
    private static final Logger LOG = LoggerFactory.getLogger(FfmDeviceContext.class);
    private static final int IBV_TRANSPORT_IWARP = 1;
    private static final int IBV_EVENT_CQ_ERR = 0;
    private static final int IBV_EVENT_COMM_EST = 4;

    final MemorySegment ctx;
    final MemorySegment fnPollCq;
    final MemorySegment fnReqNotifyCq;
    final MemorySegment fnPostSend;
    final MemorySegment fnPostRecv;
    private final String name;
    private final Transport transport;
    final int maxQpWr;
    final int maxSge;
    final int maxCqe;
    final int maxQpRdAtom;
    final int maxQpInitRdAtom;
    /** IBV_DEVICE_MEM_MGT_EXTENSIONS: SEND_WITH_INV supported. */
    private final boolean sendWithInvalidate;
    /** {@code ibv_context.async_fd}, O_NONBLOCK; -1 for the stub context. */
    final int asyncFd;
    private final Set<AutoCloseable> pds = ConcurrentHashMap.newKeySet();
    private final Set<AutoCloseable> cqs = ConcurrentHashMap.newKeySet();
    private final Map<Long, FfmCompletionQueue> cqByAddress = new ConcurrentHashMap<>();
    private final Map<Integer, FfmQueuePair> qpByNum = new ConcurrentHashMap<>();
    private final MemorySegment asyncEvent = Arena.ofAuto().allocate(IBV_ASYNC_EVENT);

    FfmDeviceContext(MemorySegment context) {
        this(context, true);
    }

    /**
     * A context whose limits are not queried (the benchmark's and tests' stub context, on which only the ops table
     * may be used): 16384 WRs, 30 SGEs, 65536 CQEs, 16 RDMA READs, SEND_WITH_INV supported.
     */
    static FfmDeviceContext unqueried(MemorySegment context) {
        return new FfmDeviceContext(context, false);
    }

    private FfmDeviceContext(MemorySegment context, boolean query) {
        this.ctx = context.reinterpret(IBV_CONTEXT.byteSize());
        this.fnPollCq = ctx.get(ADDRESS, NativeStructs.CTX_POLL_CQ);
        this.fnReqNotifyCq = ctx.get(ADDRESS, NativeStructs.CTX_REQ_NOTIFY_CQ);
        this.fnPostSend = ctx.get(ADDRESS, NativeStructs.CTX_POST_SEND);
        this.fnPostRecv = ctx.get(ADDRESS, NativeStructs.CTX_POST_RECV);
        MemorySegment dev = ctx.get(ADDRESS, NativeStructs.CTX_DEVICE).reinterpret(IBV_DEVICE.byteSize());
        this.name = dev.getString(off(IBV_DEVICE, "name"));
        int transportType = dev.get(JAVA_INT, off(IBV_DEVICE, "transport_type"));
        this.transport = transportType == IBV_TRANSPORT_IWARP ? Transport.IWARP : ibLinkLayer(name);
        if (!query) {
            asyncFd = -1;
            maxQpWr = 16384;
            maxSge = 30;
            maxCqe = 65536;
            maxQpRdAtom = 16;
            maxQpInitRdAtom = 16;
            sendWithInvalidate = true;
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IBV_DEVICE_ATTR);
            int rc = (int) Native.IBV_QUERY_DEVICE.invokeExact(Native.errnoSegment(), ctx, attr);
            if (rc != 0) {
                throw Native.fail("ibv_query_device", rc > 0 ? rc : Native.errno(), "device=" + name);
            }
            maxQpWr = attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "max_qp_wr"));
            maxSge = attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "max_sge"));
            maxCqe = attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "max_cqe"));
            maxQpRdAtom = attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "max_qp_rd_atom"));
            maxQpInitRdAtom = attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "max_qp_init_rd_atom"));
            sendWithInvalidate = (attr.get(JAVA_INT, off(IBV_DEVICE_ATTR, "device_cap_flags"))
                    & NativeStructs.IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0;
            asyncFd = ctx.get(JAVA_INT, off(IBV_CONTEXT, "async_fd"));
            Native.setNonBlocking(asyncFd, "ibv_context.async_fd");
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("ibv_query_device failed: " + t, 0, t);
        }
    }

    /** InfiniBand transport: RoCE when port 1's link layer is Ethernet (sysfs), else InfiniBand. */
    private static Transport ibLinkLayer(String name) {
        try {
            String ll = Files.readString(Path.of("/sys/class/infiniband", name, "ports/1/link_layer")).trim();
            return ll.equalsIgnoreCase("Ethernet") ? Transport.ROCE : Transport.INFINIBAND;
        } catch (IOException | RuntimeException e) {
            return Transport.INFINIBAND;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Transport transport() {
        return transport;
    }

    @Override
    public boolean supportsSendWithInvalidate() {
        return sendWithInvalidate;
    }

    @Override
    public boolean transmitsUnsignaledPayloadLate() {
        return iwarp();
    }

    boolean iwarp() {
        return transport == Transport.IWARP;
    }

    @Override
    public ProtectionDomain allocPd() {
        MemorySegment pd;
        try {
            pd = (MemorySegment) Native.IBV_ALLOC_PD.invokeExact(Native.errnoSegment(), ctx);
        } catch (Throwable t) {
            throw new VerbsException("ibv_alloc_pd failed: " + t, 0, t);
        }
        if (pd.address() == 0) {
            throw Native.fail("ibv_alloc_pd", Native.errno(), "device=" + name);
        }
        FfmProtectionDomain p = new FfmProtectionDomain(this, pd);
        pds.add(p);
        return p;
    }

    @Override
    public CompletionQueue createCq(int capacity) {
        int max = Math.min(65536, maxCqe);
        if (capacity < 1 || capacity > max) {
            throw new IllegalArgumentException("invalid capacity: capacity=" + capacity + ", min=1, max=" + max);
        }
        FfmCompletionQueue cq = FfmCompletionQueue.create(this, capacity);
        cqs.add(cq);
        cqByAddress.put(cq.cq.address(), cq);
        return cq;
    }

    void forget(AutoCloseable c) {
        pds.remove(c);
        cqs.remove(c);
        if (c instanceof FfmCompletionQueue q) {
            cqByAddress.remove(q.cq.address(), q);
        }
    }

    void registerQp(FfmQueuePair qp) {
        qpByNum.put(qp.qpNum(), qp);
    }

    void forgetQp(FfmQueuePair qp) {
        qpByNum.remove(qp.qpNum(), qp);
    }

    /** After a CQ overrun, every QP attached to it moves to ERROR (the API contract; rxe leaves them in RTS). */
    private void errorQpsUsing(FfmCompletionQueue cq) {
        for (FfmQueuePair qp : qpByNum.values()) {
            if (qp.attr().sendCq == cq || qp.attr().recvCq == cq) {
                try {
                    qp.moveToError();
                } catch (VerbsException e) {
                    LOG.warn("device {}: moving qpNum={} to ERROR after CQ overrun failed: {}", name, qp.qpNum(),
                            e.getMessage());
                }
            }
        }
    }

    /** An error completion for {@code qpNum} (iWARP state tracking; called only for failed completions). */
    void errorCompletion(int qpNum) {
        FfmQueuePair qp = qpByNum.get(qpNum);
        if (qp != null) {
            qp.errorCompletion();
        }
    }

    /**
     * Reads pending affiliated async events ({@code ibv_get_async_event(3)}, non-blocking) and acks each one.
     * {@code IBV_EVENT_CQ_ERR} (a CQ overran) marks that CQ, so its next poll/await throws CqOverrunException;
     * other events are logged. Called by a CQ waiting in {@code await} when the async fd is readable.
     */
    synchronized void drainAsyncEvents() {
        if (asyncFd < 0) {
            return;
        }
        try {
            while ((int) Native.IBV_GET_ASYNC_EVENT.invokeExact(Native.errnoSegment(), ctx, asyncEvent) == 0) {
                int type = asyncEvent.get(JAVA_INT, off(IBV_ASYNC_EVENT, "event_type"));
                if (type == IBV_EVENT_CQ_ERR) {
                    FfmCompletionQueue q = cqByAddress.get(asyncEvent.get(ADDRESS, 0).address());
                    if (q != null) {
                        q.markOverrun();
                        errorQpsUsing(q);
                    }
                } else if (type == IBV_EVENT_COMM_EST) {
                    LOG.debug("device {}: IBV_EVENT_COMM_EST", name);
                } else {
                    LOG.warn("device {}: async event {} (enum ibv_event_type)", name, type);
                }
                Native.IBV_ACK_ASYNC_EVENT.invokeExact(asyncEvent);
            }
        } catch (Throwable t) {
            throw new VerbsException("ibv_get_async_event failed: " + t, 0, t);
        }
    }

    /** Provider teardown: PDs (with their MRs), then CQs. */
    void closeAll() {
        RuntimeException first = null;
        for (AutoCloseable c : List.copyOf(pds)) {
            first = Closer.close(c, first);
        }
        for (AutoCloseable c : List.copyOf(cqs)) {
            first = Closer.close(c, first);
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "FfmDeviceContext{" + name + ", " + transport + "}";
    }
}
