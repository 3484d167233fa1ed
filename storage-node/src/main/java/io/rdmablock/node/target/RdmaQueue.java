package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.metrics.VolumeMetrics;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CompletionQueue;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * for one and the data work requests are {@link QueueBuffers}; this class is the queue logic on top of them. The
 * volume I/O handle, the role it was opened under and the ANA gate are {@link QueueVolumeIo}; the teardown
 * (disconnect, drain, release) is {@link QueueTeardown}.
 *
 * <p>Threading: built on the acceptor thread, accepted on a handshake thread ({@link QueueHandshakes}), then owned
 * by one {@link Poller}; every other method runs there.
 * The state machine is {@link #advance}; {@link #poll} feeds it with work completions and store completions.
 */
final class RdmaQueue {
    /** The queue's log category, its {@link QueueTeardown}'s and {@link QueueVolumeIo}'s too. */
    static final Logger LOG = LoggerFactory.getLogger(RdmaQueue.class);
    static final int BATCH = 32;
    /**
     * Commands one queue starts per polling round at most (capsules of this round's RECV completions, or capsules
     * that waited): the rest wait, in arrival order, for the next round (in {@link QueueBuffers}'s ring of capsules,
     * no allocation). Every queue of a poller has its turn each round, so a deep queue delays a shallow one on the
     * same poller by at most this many command starts (plus its completions, at most {@link #BATCH} of each kind)
     * per round (docs/qos.md "Fairness without limits").
     */
    static final int START_BATCH = 16;
    /** Longest wait for store I/O in flight when a queue is torn down. */
    static final long DRAIN_TIMEOUT_NS = 30_000_000_000L;

    final Target target;
    final TargetOptions options;
    final NodeMetrics metrics;
    final CmId id;
    final int qid;
    /** Queue entries (1-based) = RECVs posted = requests preallocated. */
    final int entries;
    final String peer;
    final CompletionQueue cq;
    final TargetQueueMemory memory;
    /** RECV slots, free requests, capsules waiting for one, data work requests ({@link QueueBuffers}). */
    final QueueBuffers buffers;
    private final Request[] requests;
    private final WorkCompletion[] wcs = WorkCompletion.array(BATCH);
    /** Receives the volume I/O's completions (one object for the queue's life: nothing allocated per command). */
    private final VolumeIo.Completions completions = this::volumeIoCompleted;
    /** The clock of the current polling round, for requests advanced from a volume I/O completion. */
    private long roundNowNs;
    final int dataBytesPerRequest;
    /** READ/WRITE commands and bytes completed on this queue (SMART log). */
    final IoCounters ioCounters = new IoCounters();

    TargetController controller;
    /** In-band authentication of this queue (set at Connect when the host must authenticate), or null. */
    QueueAuthentication auth;
    /** The poller serving this queue; set by it before the queue's first poll. */
    Poller poller;
    /** The store behind this I/O queue (opened at Connect; none on the admin queue) and its ANA gate. */
    final QueueVolumeIo volumeIo = new QueueVolumeIo(this);
    private final QueueTeardown teardown = new QueueTeardown(this);
    /** Its admission at Connect: the host's count, its full buffers, the status of a refusal. */
    final QueueAdmission admission = new QueueAdmission(this);
    StoreVolume volume;
    VolumeMetrics volumeMetrics; // per-volume data points, resolved once at Connect
    /** SQ size of the host (1-based) once connected; SQHD wraps at it. */
    private int sqEntries;
    private int sqHead;
    /** Command identifiers of the requests outstanding on this queue. */
    private final QueueCids cids = new QueueCids();
    private int outstanding;
    /** Commands this queue may still start in the current round ({@link #START_BATCH} at each round's start). */
    private int startsLeft = START_BATCH;
    private String fatal;
    /** Admin Connect waiting for the host's previous association to drain (C8 fencing), or null. */
    private Request fenceWaiting;
    /** Authentication Receive waiting for its DH computation ({@link Request.State#AWAITING_AUTH}), or null. */
    private Request authWaiting;
    private long nextHousekeepingNs;
    /**
     * A queue still without a controller after this ({@link TargetOptions.PendingLimits#connectTimeoutMs} from its CM
     * request) is torn down: a peer that never sends (or never completes) a Fabrics Connect would otherwise hold the
     * queue's poller slot and its place among the pending queues forever, as no controller (and so no keep-alive
     * timer) bounds it.
     */
    private final long connectDeadlineNs;
    /** The peer's IP address, the key of the per-address pending count; null when unknown. */
    final java.net.InetAddress peerAddress;
    /** True while the queue counts among the target's pending queues ({@link Target#pendingDone}). */
    boolean pending;
    /** Set by {@link #evict} (any thread); its owner then tears the queue down, reason "evicted". */
    volatile boolean evicted;

    RdmaQueue(Target target, CmId id, int qid, int entries) {
        this.target = target;
        this.options = target.options();
        this.metrics = target.metrics();
        this.id = id;
        this.qid = qid;
        this.entries = entries;
        this.sqEntries = entries;
        this.peer = String.valueOf(id.remoteAddress());
        this.connectDeadlineNs = System.nanoTime() + options.pending().connectTimeoutMs() * 1_000_000L;
        java.net.InetSocketAddress remote = id.remoteAddress();
        this.peerAddress = remote == null ? null : remote.getAddress();
        this.buffers = new QueueBuffers(target, id, qid, entries);
        this.dataBytesPerRequest = buffers.dataBytesPerRequest;
        this.cq = buffers.cq;
        this.memory = buffers.memory;
        this.requests = buffers.requests;
        metrics.queueUp();
    }

    /** True when the queue must be torn down (transport error, malformed capsule, controller gone). */
    boolean isFatal() {
        return fatal != null;
    }

    /** Why the queue is torn down ({@link #fail}), or null. */
    String fatalReason() {
        return fatal;
    }

    /** Commands received and not answered yet (response not posted). */
    int outstanding() {
        return outstanding;
    }

    /** Commands in flight in the volume I/O (0 on the admin queue). */
    int storeInFlight() {
        return volumeIo.inFlight();
    }

    /** {@link VolumeIo#awaitStore}: false when the volume I/O cannot wait on its store (the poller parks instead). */
    boolean awaitStore(long timeoutNs) {
        return volumeIo.awaitStore(timeoutNs);
    }

    /**
     * One polling round: work completions (batch), volume I/O completions (batch), then timers. Returns the number
     * of events handled (0 = idle).
     */
    int poll(long nowNs) {
        int work = 0;
        startsLeft = START_BATCH;
        try {
            work += startDeferred(nowNs);
            int n = cq.poll(wcs, BATCH);
            for (int i = 0; i < n; i++) {
                onWorkCompletion(wcs[i], nowNs);
            }
            work += n;
            roundNowNs = nowNs;
            work += volumeIo.poll(completions, BATCH, nowNs);
            Request a = authWaiting;
            if (a != null && auth.resume(this, nowNs)) {
                authWaiting = null;
                a.event(Request.Event.AUTH_DONE);
                advance(a, nowNs);
                work++;
            }
        } catch (RuntimeException e) {
            fail("transport", "poll failed: " + e);
        }
        if (nowNs - nextHousekeepingNs >= 0) {
            nextHousekeepingNs = nowNs + 10_000_000L;
            try {
                housekeeping(nowNs);
            } catch (RuntimeException e) {
                // e.g. a fenced Connect that ran again: this queue goes, its poller and the other queues stay
                LOG.warn("queue housekeeping failed: qid={}, peer={}", qid, peer, e);
                fail("internal", "housekeeping failed: " + e);
            }
        }
        return work;
    }

    /** A command handed back by the volume I/O: its status, then the state machine. */
    private void volumeIoCompleted(Request r, int nvmeStatus) {
        if (nvmeStatus != 0) {
            r.fail(nvmeStatus);
        }
        r.event(Request.Event.VOLUME_IO_DONE);
        advance(r, roundNowNs);
    }

    /** Waits up to {@code timeoutNs} for a work completion, then handles what came (idle path of a poller). */
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

    private void housekeeping(long nowNs) {
        Request fenced = fenceWaiting;
        if (fenced != null && AssociationFence.done(fenced, nowNs)) {
            fenceWaiting = null;
            fenced.event(Request.Event.FENCE_DONE);
            advance(fenced, nowNs);
        }
        TargetController c = controller;
        if (c == null && (evicted || fenced == null && nowNs - connectDeadlineNs >= 0)) {
            fail(evicted ? "evicted" : "connect timeout", evicted ? "pending limit" : "no Fabrics Connect within "
                    + options.pending().connectTimeoutMs() + " ms of the connection request");
            return;
        }
        if (c != null) {
            if (c.isDestroyed() || auth != null && auth.due(nowNs, c)) {
                fail(c.isDestroyed() ? "controller" : "authentication", c.isDestroyed() ? "controller "
                        + c.cntlid + " destroyed" : "not authenticated within the pending-connect timeout");
                return;
            }
            if (qid == 0) {
                c.checkKeepAlive(nowNs);
                Request aen = c.pollAsyncEvent(nowNs);
                if (aen != null) {
                    advance(aen, nowNs);
                }
                Request snap = c.pollCopySnapshot();
                if (snap != null) {
                    advance(snap, nowNs);
                }
            }
        }
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
        if (fatal != null) {
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
        while (buffers.deferredCount() > 0 && startsLeft > 0 && fatal == null) { // at most START_BATCH
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
        r.event(Request.Event.CAPSULE);
        startsLeft--;
        outstanding++;
        metrics.started();
        advance(r, nowNs);
    }

    /** Back to the free list (state FREE, set by {@link #advance}); starts a capsule that waited for a request. */
    private void release(Request r, long nowNs) {
        if (!buffers.free(r)) {
            return; // the Connect request retires with its slot once the queue has its full buffers
        }
        startDeferred(nowNs); // one at most: while capsules wait in a round with budget left, no request is free
    }

    /**
     * The request state machine (after SPDK {@code lib/nvmf/rdma.c} {@code nvmf_rdma_request_process}): the only
     * writer of {@link Request#state}. Applies transitions until the request waits for an event that is not pending
     * (RDMA READ, store, fence, asynchronous event, SEND completion). Handlers ({@link Commands} and what it dispatches
     * to) return an {@link Outcome}; {@link #stateAfter} maps it to the next state. Outside events are recorded with
     * {@link Request#event} before this is called.
     */
    void advance(Request r, long nowNs) {
        Request.State prev;
        do {
            prev = r.state;
            if (fatal != null) {
                return;
            }
            switch (r.state) {
                case FREE -> {
                    if (r.take(Request.Event.CAPSULE)) {
                        r.state = Request.State.NEW;
                    }
                }
                case NEW -> r.state = stateAfter(r, Commands.prepare(r, this, nowNs));
                case TRANSFERRING_HOST_TO_CONTROLLER -> {
                    if (r.take(Request.Event.DATA_RECEIVED)) {
                        r.state = Request.State.READY_TO_EXECUTE;
                    }
                }
                case READY_TO_EXECUTE -> r.state = stateAfter(r, Commands.execute(r, this, nowNs));
                case EXECUTING -> {
                    if (r.take(Request.Event.VOLUME_IO_DONE)) {
                        r.state = Request.State.READY_TO_COMPLETE;
                    }
                }
                case HELD -> {
                    if (r.take(Request.Event.ASYNC_EVENT)) {
                        r.state = Request.State.READY_TO_COMPLETE;
                    }
                }
                case AWAITING_FENCE -> {
                    if (r.take(Request.Event.FENCE_DONE)) {
                        r.state = Request.State.READY_TO_EXECUTE; // Connect runs again and sees r.fence
                    }
                }
                case AWAITING_AUTH -> {
                    if (r.take(Request.Event.AUTH_DONE)) {
                        r.state = Request.State.READY_TO_EXECUTE; // the Receive runs again, its computation done
                    }
                }
                case READY_TO_COMPLETE -> {
                    r.state = Request.State.COMPLETING;
                    complete(r);
                }
                case COMPLETING -> {
                    if (r.take(Request.Event.SENT)) {
                        r.state = Request.State.FREE;
                        release(r, nowNs); // may bind r to a waiting capsule and advance it: nothing more here
                        return;
                    }
                }
            }
        } while (r.state != prev);
    }

    /** The state a handler's outcome leads to; posts the RDMA READ for {@link Outcome#TRANSFER_FROM_HOST}. */
    private Request.State stateAfter(Request r, Outcome o) {
        return switch (o) {
            case COMPLETE -> Request.State.READY_TO_COMPLETE;
            case EXECUTE -> Request.State.READY_TO_EXECUTE;
            case TRANSFER_FROM_HOST -> {
                readFromHost(r);
                yield Request.State.TRANSFERRING_HOST_TO_CONTROLLER;
            }
            case ASYNC -> Request.State.EXECUTING;
            case HOLD -> Request.State.HELD;
            case AWAIT_FENCE -> {
                fenceWaiting = r;
                yield Request.State.AWAITING_FENCE;
            }
            case AWAIT_AUTH -> {
                authWaiting = r;
                yield Request.State.AWAITING_AUTH;
            }
        };
    }

    /** READY_TO_COMPLETE -> COMPLETING: response capsule, RECV repost, (RDMA WRITE +) SEND. */
    private void complete(Request r) {
        CqeDescriptor.set(r.response, r.dw0, sqHead, qid, r.cid, r.status);
        CqeDescriptor.dw1(r.response, r.dw1);
        long moved = r.opcode == Opcodes.IO_READ || r.opcode == Opcodes.IO_WRITE ? r.transferBytes : 0;
        if (moved > 0 && r.status == 0) {
            // before the response: a host that reads the SMART log right after this answer must see it counted
            ioCounters.completed(r.opcode, moved);
        }
        try {
            buffers.repostRecv(r.recvIndex);
            r.recvIndex = -1;
            buffers.postResponse(r);
            cids.release(r); // the host may reuse the cid once it has this response; later capsules come after this
        } catch (RuntimeException e) {
            fail("transport", "post failed: " + e);
            return;
        }
        outstanding--;
        // the clock now, not nowNs: a command answered within the poll cycle it arrived in would record 0
        metrics.complete(volumeMetrics, r.metricsOp, moved, System.nanoTime() - r.startNs, r.status);
    }

    /** Posts the RDMA READ of the host's data into {@code r.dataBuffer} (keyed SGL set by the handler). */
    private void readFromHost(Request r) {
        try {
            buffers.postReadFromHost(r);
        } catch (RuntimeException e) {
            fail("transport", "post RDMA READ failed: " + e);
        }
    }

    /**
     * Called by {@link Commands#prepare}: claims {@code r.cid} for the request. False when a command with that cid is
     * still outstanding on this queue (NVMe base spec 2.0 section 3.3.3.1: the host must not reuse it before its
     * completion), which is answered Command ID Conflict; the outstanding command keeps the cid and is answered once.
     */
    boolean claimCid(Request r) {
        return cids.claim(r);
    }

    /** Called by {@link Commands#prepare} for every capsule: consumes one SQ entry. */
    void consumeSqEntry() {
        sqHead = (sqHead + 1) % sqEntries;
    }

    /** True while an admin Connect of this queue waits for the host's previous association to drain. */
    boolean connectAwaitingFence() {
        return fenceWaiting != null;
    }

    /**
     * After a successful Connect: the host's SQ size (sqsize + 1) and, on an I/O queue, its volume I/O (from
     * {@link QueueVolumeIo#open}; null on the admin queue). The queue owns and closes it from now on.
     */
    void connected(TargetController c, int hostSqEntries, VolumeIo volumeIo) {
        target.pendingDone(this);
        this.controller = c;
        this.volumeIo.attach(volumeIo);
        this.volume = c.subsystem.volume();
        this.volumeMetrics = volume == null ? null : metrics.volume(volume.name()); // null: no volume (discovery)
        this.sqEntries = hostSqEntries;
        this.sqHead = this.sqHead % hostSqEntries;
    }

    /**
     * Fails {@code r} with {@code status} and logs the field, its value and its bounds.
     *
     * @return {@link Outcome#COMPLETE}, for handlers to return
     */
    Outcome reject(Request r, int status, String field, long value, String bounds) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("command rejected: {}, field={}, value={}, {}, opcode=0x{}, cid={}, qid={}, peer={}",
                    NvmeStatus.name(status), field, value, bounds, Integer.toHexString(r.opcode), r.cid, qid, peer);
        }
        return r.fail(status);
    }

    /** Marks the queue for teardown (once); the poller closes it after this round. */
    void fail(String reason, String detail) {
        if (fatal == null) {
            fatal = evicted && controller == null ? "evicted" : reason; // logged by PendingQueues, rate-limited
            if (!teardown.closed() && !"evicted".equals(fatal)) {
                if (auth != null && !auth.authenticated() && controller != null) {
                    // a peer that claimed a host NQN it could not prove: say so (the Connect was logged with it)
                    LOG.warn("queue teardown before authentication: hostnqn={} unproven, qid={}, peer={}, cntlid={}, "
                            + "reason={}, {}", controller.hostnqn(), qid, peer, controller.cntlid, reason, detail);
                } else {
                    LOG.info("queue teardown: qid={}, peer={}, cntlid={}, reason={}, {}", qid, peer,
                            controller == null ? -1 : controller.cntlid, reason, detail);
                }
            }
        }
    }

    /**
     * Evicted by a newer queue ({@link PendingQueues#admit}, any thread): teardown asked of its owner; the id's
     * (thread-safe) disconnect ends a handshake that still waits for the peer.
     */
    void evict() {
        evicted = true;
        TargetQueueMemory.closeQuietly(id::disconnect);
    }

    /** Starts the teardown ({@link QueueTeardown#begin}); the poller then calls {@link #drainStep}. Idempotent. */
    void beginClose(long nowNs) {
        teardown.begin(nowNs);
    }

    /** One round of draining after {@link #beginClose} ({@link QueueTeardown#drainStep}); true once fully closed. */
    boolean drainStep(long nowNs) {
        return teardown.drainStep(nowNs);
    }

    /** Full teardown now: {@link #beginClose}, then waits (bounded) for store I/O and releases. Idempotent. */
    void close() {
        teardown.close();
    }

    /** Counts the commands still outstanding as dropped: a torn-down queue answers none of them. */
    void dropOutstanding() {
        for (int i = 0; i < outstanding; i++) {
            metrics.dropped();
        }
        outstanding = 0;
    }
}
