package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

/**
 * One NVMe/RDMA queue on the target: an RC queue pair with its own CQ (in the device's protection domain, shared by
 * every queue on that device: {@link Target#protectionDomain}), {@code entries} RECV
 * capsule buffers, {@code entries} preallocated {@link Request}s (each with a registered data buffer and response
 * capsule), and for I/O queues the {@link VolumeIo} its subsystem gives it at Connect (by default the node's own copy's, {@code node.io.LocalVolumeIo}
 * on a store queue of the same depth). A queue is accepted with one Connect RECV slot and one request (a few KiB,
 * {@link TargetQueueMemory}); its {@code entries} RECV slots and requests are registered and posted once a Fabrics
 * Connect on it has been validated ({@link QueueAdmission#grow}). Until then it is pending: it counts against the
 * target's pending limits and is torn down when no Connect succeeds within
 * {@link TargetOptions.PendingLimits#connectTimeoutMs}. The data path takes no lock and allocates nothing (the buffer
 * slices handed to the store are cached per request and RECV slot; a new slice object is made only when a request's
 * transfer length changes).
 *
 * <p>The registered memory (RECV capsule slots, request data buffers, response capsules) and its layout are
 * {@link TargetQueueMemory}; the CQ, the QP, the RECV slots (post, repost), the free requests, the capsules waiting
 * for one and the data work requests are {@link QueueBuffers}; this class is the RDMA transport of a {@link FabricQueue}, which holds the request state machine. The
 * volume I/O handle, the role it was opened under and the ANA gate are {@link QueueVolumeIo}; the teardown
 * (disconnect, drain, release) is {@link QueueTeardown}.
 *
 * <p>Threading: built on the acceptor thread, accepted on a handshake thread ({@link QueueHandshakes}), then owned
 * by one {@link Poller}; every other method runs there.
 * The state machine is {@link FabricQueue#advance}; {@link #pollTransport} feeds it with work completions.
 */
final class RdmaQueue extends FabricQueue {
    final CmId id;
    final CompletionQueue cq;
    final TargetQueueMemory memory;
    /** RECV slots, free requests, capsules waiting for one, data work requests ({@link QueueBuffers}). */
    final QueueBuffers buffers;
    private final Request[] requests;
    private final WorkCompletion[] wcs = WorkCompletion.array(BATCH);

    RdmaQueue(Target target, CmId id, int qid, int entries) {
        this(target, id, qid, entries, new QueueBuffers(target, id, qid, entries));
    }

    private RdmaQueue(Target target, CmId id, int qid, int entries, QueueBuffers buffers) {
        super(target, qid, entries, String.valueOf(id.remoteAddress()),
                id.remoteAddress() == null ? null : id.remoteAddress().getAddress(), buffers.dataBytesPerRequest);
        this.id = id;
        this.buffers = buffers;
        this.cq = buffers.cq;
        this.memory = buffers.memory;
        this.requests = buffers.requests;
        metrics.queueUp();
    }

    /** Capsules that waited for a request first, then this round's work completions (batch). */
    @Override
    int pollTransport(long nowNs) {
        int work = startDeferred(nowNs);
        int n = cq.poll(wcs, BATCH);
        for (int i = 0; i < n; i++) {
            onWorkCompletion(wcs[i], nowNs);
        }
        return work + n;
    }

    /** Waits up to {@code timeoutNs} for a work completion, then handles what came (idle path of a poller). */
    @Override
    int awaitAndPoll(long timeoutNs, long nowNs) {
        startsLeft = START_BATCH;
        try {
            int n = cq.await(wcs, BATCH, timeoutNs);
            for (int i = 0; i < n; i++) {
                onWorkCompletion(wcs[i], nowNs);
            }
            return n;
        } catch (RuntimeException e) {
            fail("transport", "await failed: " + e);
            return 0;
        }
    }

    @Override
    void pollConnectionEvents() {
        CmEventType ev = id.pollEvent(0);
        if (ev == CmEventType.DISCONNECTED || ev == CmEventType.DEVICE_REMOVAL) {
            fail("disconnect", "connection manager event " + ev);
        }
    }

    private void onWorkCompletion(WorkCompletion wc, long nowNs) {
        int kind = (int) (wc.wrId >>> 32);
        int index = (int) wc.wrId;
        if (!wc.ok()) {
            // WR_FLUSH_ERR: the QP went to ERROR (peer disconnected or an earlier error): not a fault of its own
            fail(wc.status == WcStatus.WR_FLUSH_ERR ? "disconnect" : "transport",
                    "work completion error: status=" + wc.status + ", kind=" + kind + ", index=" + index);
            return;
        }
        switch (kind) {
            case QueueBuffers.WR_RECV -> onCapsule(index, wc.byteLen, nowNs);
            case QueueBuffers.WR_READ -> {
                Request r = requests[index];
                r.event(Request.Event.DATA_RECEIVED);
                advance(r, nowNs);
            }
            case QueueBuffers.WR_SEND -> {
                Request r = requests[index];
                r.event(Request.Event.SENT);
                advance(r, nowNs);
            }
            default -> {
            }
        }
    }

    private void onCapsule(int recvIndex, int byteLen, long nowNs) {
        if (isFatal()) {
            return;
        }
        if (byteLen < SqeDescriptor.LENGTH) {
            fail("malformed", "malformed capsule: lengthBytes=" + byteLen + ", min=" + SqeDescriptor.LENGTH);
            return;
        }
        // behind capsules that wait, or over this round's budget: it waits too (arrival order)
        Request r = startsLeft > 0 && buffers.deferredCount() == 0 ? buffers.takeFree() : null;
        if (r == null) {
            buffers.deferCapsule(recvIndex, byteLen);
            return;
        }
        start(r, recvIndex, byteLen, nowNs);
    }

    /** Starts waiting capsules, oldest first, while a request is free and the round's budget lasts; how many. */
    private int startDeferred(long nowNs) {
        int started = 0;
        while (buffers.deferredCount() > 0 && startsLeft > 0 && !isFatal()) { // at most START_BATCH
            Request r = buffers.takeFree();
            if (r == null) {
                break;
            }
            int recvIndex = buffers.deferredRecvIndex();
            int len = buffers.deferredByteLen();
            buffers.popDeferred();
            start(r, recvIndex, len, nowNs);
            started++;
        }
        return started;
    }

    private void start(Request r, int recvIndex, int byteLen, long nowNs) {
        r.reset(recvIndex, buffers.recvSqe[recvIndex], byteLen, nowNs);
        startCommand(r, nowNs);
    }

    /** Back to the free list; starts a capsule that waited for a request. */
    @Override
    void requestFreed(Request r, long nowNs) {
        if (!buffers.free(r)) {
            return; // the Connect request retires with its slot once the queue has its full buffers
        }
        startDeferred(nowNs); // one at most: while capsules wait in a round with budget left, no request is free
    }

    /** Posts the RDMA READ of the host's data into {@code r.dataBuffer} (keyed SGL set by the handler). */
    @Override
    void transferFromHost(Request r) {
        buffers.postReadFromHost(r);
    }

    /** RECV repost, then (RDMA WRITE +) SEND of the response capsule; {@code SENT} at the SEND's completion. */
    @Override
    void sendResponse(Request r) {
        buffers.repostRecv(r.recvIndex);
        r.recvIndex = -1;
        buffers.postResponse(r);
    }

    @Override
    MemorySegment sgl(Request r) {
        return buffers.recvSgl(r);
    }

    @Override
    boolean keyedSgl() {
        return true;
    }

    @Override
    int inCapsuleDataBytes() {
        return options.inCapsuleDataBytes();
    }

    @Override
    MemorySegment inCapsuleData(Request r, long offset, int lengthBytes) {
        return buffers.recvData(r, offset, lengthBytes);
    }

    @Override
    long growBytes() {
        return memory.growBytes();
    }

    @Override
    boolean grown() {
        return buffers.grown();
    }

    @Override
    void growBuffers() {
        buffers.grow();
    }

    @Override
    void postRecvs() {
        buffers.postRecvs();
    }

    @Override
    DeviceContext device() {
        return id.device();
    }

    @Override
    ProtectionDomain protectionDomain() {
        return target.protectionDomain(id.device());
    }

    @Override
    MemorySegment dataRegion() {
        return memory.dataRegion;
    }

    @Override
    MemorySegment recvRegion() {
        return memory.recvRegion;
    }

    @Override
    InetSocketAddress localAddress() {
        return id.localAddress();
    }

    @Override
    void disconnect() {
        id.disconnect();
    }

    /** The QP is in ERROR (disconnected) and polled by no one; its memory is freed after it. */
    @Override
    void releaseTransport() {
        TargetQueueMemory.closeQuietly(id);
        TargetQueueMemory.closeQuietly(cq);
        TargetQueueMemory.closeQuietly(memory); // the protection domain is the device's: the target closes it
    }

    @Override
    int trtype() {
        return DiscoveryLogDescriptor.TRTYPE_RDMA;
    }
}
