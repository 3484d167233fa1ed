package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.QpInitAttr;
import io.rdmablock.rdma.verbs.QueuePair;
import io.rdmablock.rdma.verbs.RecvWr;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;

import java.lang.foreign.MemorySegment;

/**
 * The RDMA resources and buffer bookkeeping of one {@link RdmaQueue}, below its request state machine: the queue's
 * CQ ({@code 3 x entries + 8} entries), its RC QP ({@code 2 x entries} send WRs, {@code entries} RECV WRs), its
 * registered memory ({@link TargetQueueMemory}: RECV capsule slots, per-request data buffers of
 * {@link #dataBytesPerRequest} bytes and 16-byte response capsules), and on top of it:
 *
 * <ul>
 *   <li>the RECV slots: the Connect slot's RECV (posted at accept), the {@code entries} RECVs posted once the queue
 *   has grown at Connect ({@link #grow}, {@link #postRecvs}), and the repost of a slot when its command is answered
 *   ({@link #repostRecv});</li>
 *   <li>the free list of the {@code entries} (+1 Connect) preallocated {@link Request}s, and the ring of capsules
 *   (RECV slot index, byte length) that arrived while every request was busy ({@link #deferCapsule});</li>
 *   <li>the data work requests of a request: RDMA READ of the host's data, RDMA WRITE + SEND of the response, built
 *   on the request's preallocated {@link SendWr}s over its registered buffers;</li>
 *   <li>the slices of the RECV slots: SQE ({@link #recvSqe}), SGL 1 ({@link #recvSgl}), in-capsule data
 *   ({@link #recvData}, cached per slot).</li>
 * </ul>
 *
 * <p>Work request ids are {@code kind << 32 | index} ({@link #wrId}: kind {@link #WR_RECV}, {@link #WR_READ},
 * {@link #WR_SEND}, {@link #WR_WRITE}; index the RECV slot or request). Nothing here allocates after {@link #grow}.
 * Threading: built on the acceptor thread with its queue, then used by the queue's poller only.
 */
final class QueueBuffers {
    static final int WR_RECV = 1;
    static final int WR_READ = 2;
    static final int WR_SEND = 3;
    static final int WR_WRITE = 4;

    final CompletionQueue cq;
    final QueuePair qp;
    final TargetQueueMemory memory;
    /** Data buffer bytes of each request: MDTS on an I/O queue, the Identify data length on the admin queue. */
    final int dataBytesPerRequest;
    private final int entries;
    /** Send flags of the RDMA WRITE of read data: {@link SendWr#SIGNALED} on siw (see {@link #postResponse}), else 0. */
    private final int writeFlags;
    /** SQE slice of each RECV slot ({@code entries + 1}, the last the Connect slot). */
    final MemorySegment[] recvSqe;
    private final RecvWr[] recvWrs;
    /** The preallocated requests, by index ({@code entries + 1}, the last the Connect request). */
    final Request[] requests;
    private final int[] free;
    private int freeCount;
    private final int[] pendingRecv;
    private final int[] pendingLength;
    private int pendingHead;
    private int pendingCount;

    static long wrId(int kind, int index) {
        return ((long) kind << 32) | index;
    }

    /**
     * Creates the CQ, the Connect slot's registered memory and the QP of queue {@code qid} of {@code entries} on
     * {@code id}, and posts the Connect slot's RECV (before the accept, so the host can SEND its Connect capsule).
     * Acceptor thread. On failure everything created so far is released and the exception rethrown.
     */
    QueueBuffers(Target target, CmId id, int qid, int entries) {
        TargetOptions options = target.options();
        this.entries = entries;
        this.writeFlags = id.device().transmitsUnsignaledPayloadLate() ? SendWr.SIGNALED : 0;
        this.dataBytesPerRequest = qid == 0 ? Opcodes.IDENTIFY_DATA_LENGTH : options.mdtsBytes();
        CompletionQueue cqTmp = null;
        TargetQueueMemory memTmp = null;
        try {
            ProtectionDomain pdTmp = target.protectionDomain(id.device());
            cqTmp = id.device().createCq(3 * entries + 8);
            memTmp = new TargetQueueMemory(pdTmp, entries, options.inCapsuleDataBytes(), dataBytesPerRequest,
                    target.registeredBytesCounter());
            QpInitAttr attr = new QpInitAttr().pd(pdTmp).cq(cqTmp);
            attr.maxSendWr = 2 * entries;
            attr.maxRecvWr = entries;
            createQpRetryingTransientFailures(id, attr);
            this.free = new int[entries + 1];
            this.pendingRecv = new int[entries + 1];
            this.pendingLength = new int[entries + 1];
            free[freeCount++] = memTmp.connectIndex; // the rest come with the full buffers, at Connect (grow)
            this.qp = id.qp();
            // only the Connect slot's RECV: posted before the accept, so the host can SEND its Connect capsule
            qp.postRecv(memTmp.recvWrs[memTmp.connectIndex]);
        } catch (RuntimeException e) {
            QueuePair created = id.qp();
            if (created != null) {
                TargetQueueMemory.closeQuietly(created);
            }
            TargetQueueMemory.closeQuietly(memTmp);
            TargetQueueMemory.closeQuietly(cqTmp);
            throw e;
        }
        this.cq = cqTmp;
        this.memory = memTmp;
        this.recvSqe = memTmp.recvSqe;
        this.recvWrs = memTmp.recvWrs;
        this.requests = memTmp.requests;
    }

    /**
     * {@code rdma_create_qp} that retries EAGAIN / ENOMEM (a kernel verbs driver short of a resource for a moment,
     * e.g. siw while queue pairs of closed connections are still being released) up to 10 times, 100 ms apart,
     * before the failure becomes a "no resources" reject. Runs on the acceptor thread.
     */
    private static void createQpRetryingTransientFailures(CmId id, QpInitAttr attr) {
        for (int attempt = 1; ; attempt++) {
            try {
                id.createQp(attr);
                return;
            } catch (io.rdmablock.rdma.verbs.VerbsException e) {
                boolean transientErrno = e.errno() == 11 || e.errno() == 12; // EAGAIN, ENOMEM
                if (!transientErrno || attempt >= 10) {
                    throw e;
                }
                FabricQueue.LOG.debug("rdma_create_qp failed ({}), retrying: attempt={}", e.getMessage(), attempt);
                java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
            }
        }
    }

    /** True once {@link #grow} succeeded. */
    boolean grown() {
        return memory.grown();
    }

    /**
     * Registers the queue's full buffers ({@link TargetQueueMemory#grow}) and puts requests {@code 0 .. entries - 1}
     * on the free list; {@link #postRecvs} then posts their RECVs.
     *
     * @throws RuntimeException when the memory could not be allocated or registered (nothing changed)
     */
    void grow() {
        memory.grow();
        for (int i = entries - 1; i >= 0; i--) {
            free[freeCount++] = i;
        }
    }

    /**
     * Posts the {@code entries} RECVs of the grown queue (the Connect slot's RECV was consumed by the Connect
     * capsule, so no more than {@code entries} are ever posted).
     */
    void postRecvs() {
        for (int i = 0; i < entries; i++) {
            qp.postRecv(recvWrs[i]);
        }
    }

    /** Posts RECV slot {@code recvIndex} again, its command answered; the Connect slot only while not grown. */
    void repostRecv(int recvIndex) {
        if (recvIndex != memory.connectIndex || !memory.grown()) {
            // the Connect slot is reposted only while the queue is pending (a failed Connect may be retried);
            // once grown, the queue's own entries RECVs are posted
            qp.postRecv(recvWrs[recvIndex]);
        }
    }

    /** A free request off the free list, or null when every request is busy. */
    Request takeFree() {
        return freeCount == 0 ? null : requests[free[--freeCount]];
    }

    /**
     * Puts {@code r} back on the free list. False for the Connect request once the queue has its full buffers: it
     * retires with its slot.
     */
    boolean free(Request r) {
        if (r.index == memory.connectIndex && memory.grown()) {
            return false;
        }
        free[freeCount++] = r.index;
        return true;
    }

    /** Keeps a capsule that came while every request was busy, until {@link #free} gives one back. */
    void deferCapsule(int recvIndex, int byteLen) {
        int tail = (pendingHead + pendingCount) % entries;
        pendingRecv[tail] = recvIndex;
        pendingLength[tail] = byteLen;
        pendingCount++;
    }

    /** Capsules waiting for a request. */
    int deferredCount() {
        return pendingCount;
    }

    /** RECV slot of the oldest capsule waiting for a request ({@link #deferredCount} > 0). */
    int deferredRecvIndex() {
        return pendingRecv[pendingHead];
    }

    /** Byte length of the oldest capsule waiting for a request ({@link #deferredCount} > 0). */
    int deferredByteLen() {
        return pendingLength[pendingHead];
    }

    /** Forgets the oldest capsule waiting for a request (it was started). */
    void popDeferred() {
        pendingHead = (pendingHead + 1) % entries;
        pendingCount--;
    }

    /** Posts the RDMA READ of the host's data into {@code r.dataBuffer} (keyed SGL set by the handler). */
    void postReadFromHost(Request r) {
        qp.postSend(dataWr(r, WR_READ, WrOpcode.RDMA_READ, SendWr.SIGNALED, null));
    }

    /**
     * Posts the response capsule's SEND, after the RDMA WRITE of the data of a successful controller-to-host read.
     * The WRITE is unsignaled (the SEND's completion retires it) except on a device that transmits unsignaled payloads
     * after later completions ({@link io.rdmablock.rdma.verbs.DeviceContext#transmitsUnsignaledPayloadLate}: siw),
     * where the request's buffer is reused at the SEND's completion only if the WRITE was signaled (its completion,
     * kind {@link #WR_WRITE}, is otherwise ignored).
     */
    void postResponse(Request r) {
        SendWr first = r.responseWr;
        if (r.xfer == Request.XFER_CONTROLLER_TO_HOST && r.status == 0) {
            first = dataWr(r, WR_WRITE, WrOpcode.RDMA_WRITE, writeFlags, r.responseWr);
        }
        qp.postSend(first);
    }

    /** The request's data work request, set for {@code r.transferBytes} between its buffer and the host's keyed SGL. */
    private static SendWr dataWr(Request r, int kind, WrOpcode opcode, int sendFlags, SendWr next) {
        SendWr w = r.dataWr;
        w.wrId = wrId(kind, r.index);
        w.opcode = opcode;
        w.sendFlags = sendFlags;
        w.remoteAddr = r.remoteAddress;
        w.rkey = r.rkey;
        w.sgList[0].set(r.dataBuffer.address(), r.transferBytes, r.bufferLkey);
        w.next = next;
        return w;
    }

    /** SGL 1 of the request's RECV slot's SQE. */
    MemorySegment recvSgl(Request r) {
        return memory.recvSgl[r.recvIndex];
    }

    /** In-capsule data of the request's RECV slot at {@code offset}, {@code lengthBytes} long (slice cached per slot). */
    MemorySegment recvData(Request r, long offset, int lengthBytes) {
        return memory.recvData(r.recvIndex, offset, lengthBytes);
    }
}
