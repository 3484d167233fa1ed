package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.metrics.VolumeMetrics;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * One NVMe-oF queue on the target, whatever the transport: {@code entries} preallocated {@link Request}s and the
 * one request state machine ({@link #advance}) they go through, the command identifiers, the SQ head, the admission
 * at Connect ({@link QueueAdmission}), the controller, in-band authentication, the volume I/O ({@link QueueVolumeIo})
 * and the teardown ({@link QueueTeardown}). The transport is the subclass: {@link RdmaQueue} (NVMe/RDMA: capsules in
 * RECVs, host data by RDMA READ, data and response by RDMA WRITE + SEND) and {@link TcpQueue} (NVMe/TCP: capsules,
 * R2T/H2CData and C2HData/CapsuleResp PDUs on a socket). The split follows Linux nvmet (core.c: the request; rdma.c,
 * tcp.c: the transports) and SPDK ({@code lib/nvmf/transport.h}): the transport says how a capsule arrives
 * ({@link #startCommand}), how host data is fetched ({@link #transferFromHost}, then {@link Request.Event#DATA_RECEIVED}),
 * how data and response go back ({@link #sendResponse}, then {@link Request.Event#SENT} once sent) and where a
 * request goes when free ({@link #requestFreed}).
 *
 * <p>A queue is pending until a Fabrics Connect on it has been validated: it counts against the target's pending
 * limits and is torn down when no Connect succeeds within {@link TargetOptions.PendingLimits#connectTimeoutMs}; its
 * full buffers are made then ({@link QueueAdmission#grow}: {@link #growBuffers}, {@link #postRecvs}). The data path
 * takes no lock and allocates nothing.
 *
 * <p>Threading: built on an acceptor thread, then owned by one {@link Poller}; every other method runs there (but
 * {@link #evict}).
 */
abstract class FabricQueue {
    /** The queue's log category, its {@link QueueTeardown}'s and {@link QueueVolumeIo}'s too. */
    static final Logger LOG = LoggerFactory.getLogger(FabricQueue.class);
    static final int BATCH = 32;
    /**
     * Commands one queue starts per polling round at most (capsules of this round's RECV completions, or capsules
     * that waited): the rest wait, in arrival order, for the next round (RDMA: in {@link QueueBuffers}'s ring of capsules, no
     * allocation; TCP: in the socket). Every queue of a poller has its turn each round, so a deep queue delays a shallow one on the
     * same poller by at most this many command starts (plus its completions, at most {@link #BATCH} of each kind)
     * per round (docs/qos.md "Fairness without limits").
     */
    static final int START_BATCH = 16;
    /** Longest wait for store I/O in flight when a queue is torn down. */
    static final long DRAIN_TIMEOUT_NS = 30_000_000_000L;

    final Target target;
    final TargetOptions options;
    final NodeMetrics metrics;
    /** Queue id: from the RDMA CM private data; on TCP from the Fabrics Connect ({@link #bind}). */
    int qid;
    /** Queue entries (1-based) = RECVs posted = requests preallocated. */
    int entries;
    final String peer;
    /** Receives the volume I/O's completions (one object for the queue's life: nothing allocated per command). */
    private final VolumeIo.Completions completions = this::volumeIoCompleted;
    /** The clock of the current polling round, for requests advanced from a volume I/O completion. */
    private long roundNowNs;
    /** Bytes of each request's data buffer: the most a command moves (Identify size on the admin queue). */
    int dataBytesPerRequest;
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
    int startsLeft = START_BATCH;
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
    final InetAddress peerAddress;
    /** True while the queue counts among the target's pending queues ({@link Target#pendingDone}). */
    boolean pending;
    /** Set by {@link #evict} (any thread); its owner then tears the queue down, reason "evicted". */
    volatile boolean evicted;

    /**
     * @param peer the peer's address as logged
     * @param peerAddress the peer's IP address (the key of the per-address pending count), or null when unknown
     * @param dataBytesPerRequest bytes of each request's data buffer
     */
    FabricQueue(Target target, int qid, int entries, String peer, InetAddress peerAddress, int dataBytesPerRequest) {
        this.target = target;
        this.options = target.options();
        this.metrics = target.metrics();
        this.qid = qid;
        this.entries = entries;
        this.sqEntries = entries;
        this.peer = peer;
        this.connectDeadlineNs = System.nanoTime() + options.pending().connectTimeoutMs() * 1_000_000L;
        this.peerAddress = peerAddress;
        this.dataBytesPerRequest = dataBytesPerRequest;
    }

    /**
     * Sets the queue id, entries and request buffer size of a queue whose transport learns them from the Fabrics
     * Connect capsule (TCP), before the Connect runs; only while the queue has no controller and no full buffers.
     */
    final void bind(int qid, int entries, int dataBytesPerRequest) {
        if (controller != null || grown()) {
            throw new IllegalStateException("queue already connected: qid=" + this.qid);
        }
        this.qid = qid;
        this.entries = entries;
        this.sqEntries = entries;
        this.dataBytesPerRequest = dataBytesPerRequest;
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
     * One polling round: the transport's events ({@link #pollTransport}), volume I/O completions (batch), then timers. Returns the number
     * of events handled (0 = idle).
     */
    int poll(long nowNs) {
        int work = 0;
        startsLeft = START_BATCH;
        try {
            work += pollTransport(nowNs);
            roundNowNs = nowNs;
            work += volumeIo.poll(completions, BATCH, nowNs);
            Request a = authWaiting;
            if (a != null && auth.resume(this, nowNs)) {
                authWaiting = null;
                a.event(Request.Event.AUTH_DONE);
                advance(a, nowNs);
                work++;
            }
            work += afterRound(nowNs);
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
        pollConnectionEvents();
    }

    /**
     * A capsule bound to {@code r} ({@link Request#reset} done by the transport): counts it against the round's budget
     * and the outstanding commands, then runs the state machine.
     */
    final void startCommand(Request r, long nowNs) {
        r.event(Request.Event.CAPSULE);
        startsLeft--;
        outstanding++;
        metrics.started();
        advance(r, nowNs);
    }

    /** Back to the transport's free requests (state FREE, set by {@link #advance}). */
    private void release(Request r, long nowNs) {
        requestFreed(r, nowNs);
    }

    /**
     * The request state machine (after SPDK {@code lib/nvmf/rdma.c} {@code nvmf_rdma_request_process} and {@code lib/nvmf/tcp.c} {@code nvmf_tcp_req_process}: one machine, both transports): the only
     * writer of {@link Request#state}. Applies transitions until the request waits for an event that is not pending
     * (host data, store, fence, asynchronous event, response sent). Handlers ({@link Commands} and what it dispatches
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

    /** The state a handler's outcome leads to; starts the transport's transfer from the host ({@link #transferFromHost}) for {@link Outcome#TRANSFER_FROM_HOST}. */
    private Request.State stateAfter(Request r, Outcome o) {
        return switch (o) {
            case COMPLETE -> Request.State.READY_TO_COMPLETE;
            case EXECUTE -> Request.State.READY_TO_EXECUTE;
            case TRANSFER_FROM_HOST -> {
                try {
                    transferFromHost(r);
                } catch (RuntimeException e) {
                    fail("transport", "starting the transfer from the host failed: " + e);
                }
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

    /** READY_TO_COMPLETE -> COMPLETING: the CQE, then the transport sends data (if any) and response ({@link #sendResponse}). */
    private void complete(Request r) {
        CqeDescriptor.set(r.response, r.dw0, sqHead, qid, r.cid, r.status);
        CqeDescriptor.dw1(r.response, r.dw1);
        long moved = r.opcode == Opcodes.IO_READ || r.opcode == Opcodes.IO_WRITE ? r.transferBytes : 0;
        if (moved > 0 && r.status == 0) {
            // before the response: a host that reads the SMART log right after this answer must see it counted
            ioCounters.completed(r.opcode, moved);
        }
        try {
            sendResponse(r);
            cids.release(r); // the host may reuse the cid once it has this response; later capsules come after this
        } catch (RuntimeException e) {
            fail("transport", "sending the response failed: " + e);
            return;
        }
        outstanding--;
        // the clock now, not nowNs: a command answered within the poll cycle it arrived in would record 0
        metrics.complete(volumeMetrics, r.metricsOp, moved, System.nanoTime() - r.startNs, r.status);
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
     * Evicted by a newer queue ({@link PendingQueues#admit}, any thread): teardown asked of its owner; the
     * (thread-safe) {@link #disconnect} ends a handshake that still waits for the peer.
     */
    void evict() {
        evicted = true;
        TargetQueueMemory.closeQuietly(this::disconnect);
    }

    // ---- the transport (RdmaQueue, TcpQueue) ----

    /** The transport's part of a polling round (capsules, data transfers, sends completed); events handled. */
    abstract int pollTransport(long nowNs);

    /**
     * Waits up to {@code timeoutNs} for the transport's next event, then handles what came (idle path of a poller
     * serving this queue alone); events handled.
     */
    abstract int awaitAndPoll(long timeoutNs, long nowNs);

    /**
     * End of the queue's polling round, after the volume I/O completions: what the transport does with the round's
     * responses (TCP: writes them now rather than next round); events handled. Nothing by default (RDMA posted them).
     */
    int afterRound(long nowNs) {
        return 0;
    }

    /** Housekeeping: the connection's own events (RDMA CM disconnect; nothing on TCP, where reads see the end). */
    abstract void pollConnectionEvents();

    /**
     * Outcome {@link Outcome#TRANSFER_FROM_HOST}: starts fetching {@code r.transferBytes} of host data into
     * {@code r.data}; the transport records {@link Request.Event#DATA_RECEIVED} and calls {@link #advance} once in.
     *
     * @throws RuntimeException when the transfer cannot be started (the queue is then failed)
     */
    abstract void transferFromHost(Request r);

    /**
     * Sends the response (the CQE in {@code r.response} is set) after the data of a successful controller-to-host
     * command ({@code r.xfer}, {@code r.transferBytes}, from {@code r.dataBuffer}); records
     * {@link Request.Event#SENT} and calls {@link #advance} once sent (never from within this call).
     *
     * @throws RuntimeException when it cannot be posted (the queue is then failed)
     */
    abstract void sendResponse(Request r);

    /** {@code r} is free (state FREE): back to the transport's free requests; may start a capsule that waited. */
    abstract void requestFreed(Request r, long nowNs);

    /** SGL 1 of {@code r}'s SQE (16 bytes; a cached slice). */
    abstract MemorySegment sgl(Request r);

    /** True when data SGLs are keyed (RDMA); false for Transport SGL Data Blocks (TCP, identifier 5Ah). */
    abstract boolean keyedSgl();

    /** In-capsule data bytes this queue accepts at most (0: none). */
    abstract int inCapsuleDataBytes();

    /** The in-capsule data of {@code r} at {@code offset}, {@code lengthBytes} long (where it landed: no copy). */
    abstract MemorySegment inCapsuleData(Request r, long offset, int lengthBytes);

    /** Bytes {@link #growBuffers} allocates (counted against {@link ConnectLimits#maxRegisteredBytes()}). */
    abstract long growBytes();

    /** True once {@link #growBuffers} succeeded. */
    abstract boolean grown();

    /**
     * After a validated Connect: allocates (and registers) the queue's full buffers and frees its {@code entries}
     * requests. Nothing changed when it throws.
     */
    abstract void growBuffers();

    /** After {@link #growBuffers}: starts receiving capsules into them (RDMA: posts the RECVs; TCP: nothing). */
    abstract void postRecvs();

    /** The RDMA device of the connection (TCP: of its registered buffers), for the volume I/O; null: none. */
    abstract DeviceContext device();

    /** That device's protection domain ({@link Target#protectionDomain}); null without a device. */
    abstract ProtectionDomain protectionDomain();

    /** The request data buffers' region (registered on RDMA), for io_uring fixed buffers; null before grown. */
    abstract MemorySegment dataRegion();

    /** The in-capsule data region (the RECV slots on RDMA; the data region on TCP). */
    abstract MemorySegment recvRegion();

    /** The local address of the connection (discovery log entries), or null. */
    abstract InetSocketAddress localAddress();

    /** Ends the connection now (any thread; idempotent): the peer sees it closed, the poller a failure. */
    abstract void disconnect();

    /** Releases the transport's resources once the queue is drained (off the poller, {@link Target#reap}). */
    abstract void releaseTransport();

    /** The discovery log entry's transport type of this queue: {@link io.rdmablock.rdma.fabric.DiscoveryLogDescriptor#TRTYPE_RDMA} or TCP. */
    abstract int trtype();

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
