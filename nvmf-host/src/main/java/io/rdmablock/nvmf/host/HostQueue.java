package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;

/**
 * The host-queue engine: the mechanics of one NVMe/RDMA I/O queue (qid &gt;= 1), driven by one owner thread and
 * with no thread of its own. Both host-side queues of the project are this engine: a storage node's
 * {@link PeerQueue} (forwarding to a peer) and the initiator's {@code IoQueue} (a block device's poller, which adds
 * its thread, submission hand-off, futures and resubmission on top).
 *
 * <p>It owns the command slots: a {@link CidAllocator}, per slot the caller's tag, the deadline and the state
 * (free, outstanding, timed out); the slot's capsule is built in place by a {@link CapsuleBuilder} in the queue's
 * registered {@link QueueMemory}. The connection ({@link QueueConnection}) is attached and detached by the owner:
 * a peer queue keeps its one connection for life, a block device attaches a new one after each reconnect while its
 * slots, capsules and memory stay.
 *
 * <p>Use, all on the owner thread: {@link #claim()} a slot, fill it with exactly one of {@link #submit},
 * {@link #forward} or {@link #blockIo} (each chains the slot's send work request), {@link #flush()} posts the chain
 * as one {@code ibv_post_send}; {@link #poll} reaps the completion queue (at most {@code pollBatch} work
 * completions), reposts the response buffers, matches responses by cid (a stale or unknown cid is dropped and
 * counted, {@link #staleResponses()}), checks deadlines and, every {@code cmCheckIntervalNs}, the CM for a
 * disconnect; {@link #await} waits on the completion channel instead. The clock is the caller's: every call that
 * needs the time takes {@code nowNs} ({@link System#nanoTime()} scale). No lock, and no allocation per command.
 *
 * <p>Every command put in a slot is completed exactly once, through the {@link CompletionHandler} on the owner
 * thread from within {@link #poll}, {@link #await}, {@link #detach()} or {@link #close()}, with
 * <ul>
 *   <li>its NVMe status (0 = success; otherwise the CQE status field, {@link io.rdmablock.rdma.fabric.NvmeStatus});
 *   <li>{@link #STATUS_TIMEOUT} when no response arrived within {@code commandTimeoutNs} of its submission: the
 *   queue is then {@link State#BROKEN}: its queue pair is destroyed first, so the target can no longer RDMA READ or
 *   WRITE the caller's memory (the caller may reuse it as soon as the handler returns, as Linux
 *   {@code nvme_rdma_timeout} tears down the queue first); every other outstanding command completes with
 *   {@link #STATUS_PATH_LOST}; what becomes of the timed-out cids is the {@link OnTimeout} policy;
 *   <li>{@link #STATUS_PATH_LOST} when the connection failed (a failed work completion, a post or poll failure, a CM
 *   DISCONNECTED or DEVICE_REMOVAL event: the queue is then {@link State#LOST}), or the owner detached the
 *   connection or closed the queue with the command outstanding. The queue pair is destroyed before the first such
 *   completion is delivered, so a command completed this way may be resubmitted elsewhere at once.
 * </ul>
 * Path-lost completions are delivered in descending slot order, so an owner that puts each back at the head of a
 * FIFO gets them back in ascending slot order. A queue that is not {@link State#LIVE} accepts no commands.
 *
 * <p>Capacity: at most {@code entries - 1} commands outstanding (NVMe Base 2.0 section 3.3.1.5: a full queue has
 * one free entry), the {@link CapsuleBuilder}'s slots. Sources: Linux {@code drivers/nvme/host/rdma.c}
 * ({@code nvme_rdma_queue_rq}, {@code nvme_rdma_recv_done}, {@code nvme_rdma_timeout}), NVMe-oF 1.1 section 7.
 */
public final class HostQueue implements AutoCloseable {
    /** Status of a command that got no response within the command timeout (never a valid NVMe status). */
    public static final int STATUS_TIMEOUT = -1;
    /** Status of a command whose connection failed, was detached or closed before its response arrived. */
    public static final int STATUS_PATH_LOST = -2;

    /** Receives each command's outcome, on the owner's thread. */
    @FunctionalInterface
    public interface CompletionHandler {
        /**
         * @param tag    the caller's tag given with the command
         * @param status the NVMe status (0 = success), {@link #STATUS_TIMEOUT} or {@link #STATUS_PATH_LOST}
         */
        void complete(int tag, int status);
    }

    /** What a command timeout does to the timed-out commands' cids (both policies fence and break the queue). */
    public enum OnTimeout {
        /**
         * The queue stays {@link State#BROKEN} until closed; the cids of timed-out commands stay reserved until then,
         * so a response that still arrived would be dropped (a storage node's {@link PeerQueue}).
         */
        BREAK,
        /**
         * The cids of timed-out commands are freed at once: the owner resets the association, {@link #detach()}es
         * the broken connection and later attaches a new one (the initiator, as Linux {@code nvme_rdma_timeout}
         * followed by {@code nvme_rdma_error_recovery}).
         */
        RESET
    }

    /**
     * The engine's time policy.
     *
     * @param commandTimeoutNs  how long a command may wait for its response, ns; &lt;= 0: no deadline
     * @param onTimeout         what a timeout does to the timed-out cids
     * @param cmCheckIntervalNs how often, at most, {@link #poll} asks the CM for a disconnect event, ns
     */
    public record Policy(long commandTimeoutNs, OnTimeout onTimeout, long cmCheckIntervalNs) {
        public Policy {
            if (onTimeout == null) {
                throw new IllegalArgumentException("invalid onTimeout: null");
            }
        }
    }

    /** Lifecycle of the queue. */
    public enum State {
        /** No connection attached (a block device's queue between associations); accepts no commands. */
        DETACHED,
        /** Accepts commands. */
        LIVE,
        /** A command timed out; the queue pair is destroyed; detach or close. */
        BROKEN,
        /** The connection failed or was disconnected; detach or close. */
        LOST,
        /** Closed; every resource released. */
        CLOSED
    }

    private static final byte FREE = 0;
    private static final byte OUTSTANDING = 1;
    private static final byte TIMED_OUT = 2;

    private final int qid;
    private final QueueMemory mem;
    private final CapsuleBuilder capsules;
    private final CompletionHandler handler;
    private final Policy policy;
    private final int slots;
    private final CidAllocator cids;
    private final int[] slotTag;
    private final long[] slotDeadlineNs;
    private final byte[] slotState;
    private final WorkCompletion[] wcs;
    private final QueueConnection.ResponseConsumer onResponse = this::onResponse;
    private QueueConnection conn;
    /** True when {@link #close()} closes {@link #conn} too. */
    private boolean ownsConn;
    private State state = State.DETACHED;
    private int outstanding;
    /** Completions delivered by the current reap. */
    private int reaped;
    /** No outstanding command's deadline is before this. */
    private long nextDeadlineNs;
    private long nextCmCheckNs;
    /** Set by a failure seen outside poll (post send, CQ poll): poll completes everything with STATUS_PATH_LOST. */
    private boolean lostPending;
    /** Send work requests filled since the last {@link #flush()}, linked through {@code next}. */
    private SendWr chainHead;
    private SendWr chainTail;
    /** Written by the owner only; volatile so that other threads may read the count. */
    private volatile long staleResponses;
    private String failure;

    /**
     * Takes ownership of {@code mem} and {@code capsules}: {@link #close()} releases both. The queue starts
     * {@link State#DETACHED}.
     *
     * @param qid       the queue's id, &gt;= 1 (for messages)
     * @param mem       the queue's registered capsules and response buffers
     * @param capsules  the capsule builder over {@code mem}; its slots are the queue's command slots
     * @param pollBatch work completions taken per poll of the completion queue, &gt;= 1
     * @param policy    timeouts and CM checks
     * @param handler   receives every completion
     * @throws IllegalArgumentException when qid or pollBatch is out of range
     */
    public HostQueue(int qid, QueueMemory mem, CapsuleBuilder capsules, int pollBatch, Policy policy,
                     CompletionHandler handler) {
        if (qid < 1) {
            throw new IllegalArgumentException("invalid qid: qid=" + qid + ", min=1 (an I/O queue)");
        }
        if (pollBatch < 1) {
            throw new IllegalArgumentException("invalid pollBatch: pollBatch=" + pollBatch + ", min=1");
        }
        this.qid = qid;
        this.mem = mem;
        this.capsules = capsules;
        this.handler = handler;
        this.policy = policy;
        this.slots = capsules.slots();
        this.cids = new CidAllocator(slots);
        this.slotTag = new int[slots];
        this.slotDeadlineNs = new long[slots];
        this.slotState = new byte[slots];
        this.wcs = WorkCompletion.array(pollBatch);
    }

    public int qid() {
        return qid;
    }

    /** Commands that may be outstanding at once: entries - 1. */
    public int capacity() {
        return slots;
    }

    /** Commands waiting for their response now (timed-out ones not included). */
    public int outstanding() {
        return outstanding;
    }

    public State state() {
        return state;
    }

    /** The attached connection, or null. */
    public QueueConnection connection() {
        return conn;
    }

    /** Why the queue is not {@link State#LIVE} (names qid and cause), or null; cleared by {@link #attach}. */
    public String failure() {
        return failure;
    }

    /** Responses dropped because their cid was stale or unknown (e.g. a timed-out command's); any thread. */
    public long staleResponses() {
        return staleResponses;
    }

    /** READ/WRITE payloads the capsule builder copied (see {@link CapsuleBuilder#copiedTransfers()}); any thread. */
    public long copiedTransfers() {
        return capsules.copiedTransfers();
    }

    /** The in-capsule data limit the controller advertised ({@link CapsuleBuilder#inCapsuleBytes(int)}). */
    public void inCapsuleBytes(int advertised) {
        capsules.inCapsuleBytes(advertised);
    }

    /**
     * Attaches an established connection (this queue's memory, qid &gt;= 1, polled by no other code); the queue
     * becomes {@link State#LIVE}.
     *
     * @param c   the connection
     * @param own true: {@link #close()} closes {@code c} too
     * @throws IllegalStateException when the queue is not {@link State#DETACHED}
     */
    public void attach(QueueConnection c, boolean own) {
        if (state != State.DETACHED) {
            throw new IllegalStateException("qid " + qid + ": attach while " + state);
        }
        conn = c;
        ownsConn = own;
        failure = null;
        state = State.LIVE;
    }

    /**
     * Lets go of the attached connection: destroys its queue pair (fence), completes every outstanding command with
     * {@link #STATUS_PATH_LOST}, frees the cids timed-out commands kept, and becomes {@link State#DETACHED}. The
     * connection is not closed. Nothing when detached or closed.
     *
     * @return the connection let go of, or null
     */
    public QueueConnection detach() {
        QueueConnection c = conn;
        if (c == null || state == State.CLOSED) {
            return null;
        }
        failAll(STATUS_PATH_LOST, State.DETACHED);
        for (int s = 0; s < slots; s++) {
            if (slotState[s] == TIMED_OUT) {
                slotState[s] = FREE;
                cids.release(s);
            }
        }
        conn = null;
        return c;
    }

    /** True when {@link #claim()} would give a slot. */
    public boolean hasFree() {
        return state == State.LIVE && !lostPending && cids.hasFree();
    }

    /**
     * A free slot with a fresh cid, or -1 (none free, or the queue is not {@link State#LIVE}). The caller fills it
     * with exactly one of {@link #submit}, {@link #forward} or {@link #blockIo} before anything else.
     */
    public int claim() {
        if (state != State.LIVE || lostPending) {
            return -1;
        }
        return cids.allocate();
    }

    /**
     * Fills claimed {@code slot} with a caller-composed command ({@link CapsuleBuilder#prepare}): keyed SGL as
     * given, nothing in-capsule; {@code command} may be reused at once. The memory its SGL names must stay valid
     * until the completion. Chained: {@link #flush()} posts it.
     *
     * @param tag   the caller's handle, given back to the handler
     * @param nowNs the caller's clock; the deadline is nowNs + commandTimeoutNs
     */
    public void submit(int slot, NvmCommand command, int tag, long nowNs) {
        chain(slot, capsules.prepare(slot, cids.cid(slot), command), tag, nowNs);
    }

    /**
     * Fills claimed {@code slot} with another host's command as that host sent it, with this queue's cid,
     * {@code epoch} in CDW2..CDW3 and its data in the capsule (from {@code address} with {@code lkey}) or behind a
     * keyed SGL naming {@code address} / {@code length} / {@code rkey} ({@link CapsuleBuilder#prepareForward}). Same
     * contract as {@link #submit}.
     *
     * @param hostSqe the host's 64-byte SQE
     */
    public void forward(int slot, MemorySegment hostSqe, long epoch, long address, int length, int rkey, int lkey,
                        int tag, long nowNs) {
        chain(slot, capsules.prepareForward(slot, cids.cid(slot), hostSqe, epoch, address, length, rkey, lkey), tag,
                nowNs);
    }

    /**
     * Fills claimed {@code slot} with one block I/O, its data placed by {@link CapsuleBuilder#prepareBlockIo}
     * (zero copy from registered buffers, in-capsule, or through the slot's bounce buffer; after a successful READ
     * the owner calls {@link #copyOutBounce}). Chained: {@link #flush()} posts it.
     *
     * @throws RuntimeException what the preparation threw (e.g. {@link IllegalStateException} or
     *                          {@link WrongThreadException} for a segment that cannot be read here, a failed bounce
     *                          buffer registration); the slot is then free again and nothing was chained
     */
    public void blockIo(int slot, int opcode, int nsid, long slba, int blockCount, int cdw12Flags,
                        MemorySegment data, int sglBytes, int tag, long nowNs) {
        blockIo(slot, opcode, nsid, slba, blockCount, cdw12Flags, data, sglBytes, 0, tag, nowNs);
    }

    /** As above; {@code snapshotId} is carried by {@link io.rdmablock.rdma.fabric.Opcodes#IO_READ_SNAPSHOT}. */
    public void blockIo(int slot, int opcode, int nsid, long slba, int blockCount, int cdw12Flags,
                        MemorySegment data, int sglBytes, long snapshotId, int tag, long nowNs) {
        SendWr wr;
        try {
            wr = capsules.prepareBlockIo(slot, cids.cid(slot), opcode, nsid, slba, blockCount, cdw12Flags, data,
                    sglBytes, snapshotId);
        } catch (RuntimeException e) {
            cids.release(slot);
            throw e;
        }
        chain(slot, wr, tag, nowNs);
    }

    /**
     * After a successful READ of {@code slot}: copies its bounce buffer, if it used one, to {@code data}. Only from
     * within the handler of that completion (before the slot is claimed again).
     */
    public void copyOutBounce(int slot, MemorySegment data) {
        capsules.copyOutBounce(slot, data);
    }

    private void chain(int slot, SendWr wr, int tag, long nowNs) {
        wr.next = null;
        slotTag[slot] = tag;
        slotState[slot] = OUTSTANDING;
        long timeout = policy.commandTimeoutNs();
        if (timeout > 0) {
            long deadline = nowNs + timeout;
            slotDeadlineNs[slot] = deadline;
            if (outstanding == 0 || deadline - nextDeadlineNs < 0) {
                nextDeadlineNs = deadline;
            }
        }
        outstanding++;
        if (chainHead == null) {
            chainHead = wr;
        } else {
            chainTail.next = wr;
        }
        chainTail = wr;
    }

    /**
     * Posts every command filled since the last flush as one chained {@code ibv_post_send}.
     *
     * @return false when the post failed: the commands are outstanding and complete with {@link #STATUS_PATH_LOST}
     *     from the next {@link #poll} (or {@link #detach()}); true otherwise (also when there was nothing to post)
     */
    public boolean flush() {
        SendWr head = chainHead;
        if (head == null) {
            return true;
        }
        chainHead = null;
        chainTail = null;
        try {
            conn.qp().postSend(head);
            return true;
        } catch (RuntimeException e) {
            markLost("qid " + qid + ": post send failed: " + e.getMessage());
            return false;
        }
    }

    /**
     * Reaps completions and delivers them, checks deadlines and (every {@code cmCheckIntervalNs}) the CM for a
     * disconnect. The handler may fill and flush slots from within; it must not call {@link #poll}, {@link #await},
     * {@link #detach()} or {@link #close()}.
     *
     * @param nowNs the caller's clock ({@link System#nanoTime()} scale)
     * @return the number of completions delivered
     */
    public int poll(long nowNs) {
        if (state == State.CLOSED || state == State.DETACHED) {
            return 0;
        }
        int delivered = 0;
        if (state == State.LIVE && !lostPending) {
            delivered += reap(0);
        }
        if (lostPending) {
            return delivered + failAll(STATUS_PATH_LOST, State.LOST);
        }
        if (state != State.LIVE) {
            return delivered;
        }
        if (policy.commandTimeoutNs() > 0 && outstanding > 0 && nowNs - nextDeadlineNs >= 0) {
            delivered += expire(nowNs);
        }
        if (state == State.LIVE && nowNs - nextCmCheckNs >= 0) {
            nextCmCheckNs = nowNs + policy.cmCheckIntervalNs();
            boolean gone;
            try {
                gone = conn.disconnectedEvent();
            } catch (RuntimeException e) {
                markLost("qid " + qid + ": " + e);
                gone = true;
            }
            if (gone) {
                markLost("qid " + qid + ": disconnected by the target");
                delivered += failAll(STATUS_PATH_LOST, State.LOST);
            }
        }
        return delivered;
    }

    /**
     * Waits up to {@code timeoutNs} for the next completion on the CQ's completion channel
     * ({@code ibv_req_notify_cq(3)} + {@code ibv_get_cq_event(3)}; {@code CompletionQueue.wakeup} from another thread
     * ends the wait early), then delivers what arrived as {@link #poll} does; deadlines and the CM are checked by the
     * next {@link #poll}, and a failure seen here is delivered by it. Waits also with nothing outstanding.
     *
     * @return the number of completions delivered (0: none within the timeout, or the queue is not
     *     {@link State#LIVE})
     */
    public int await(long timeoutNs) {
        if (state != State.LIVE || lostPending) {
            return 0;
        }
        return reap(timeoutNs);
    }

    /** Reaps the CQ: polls it ({@code timeoutNs} 0), or waits up to {@code timeoutNs} for a completion. */
    private int reap(long timeoutNs) {
        int n;
        try {
            n = timeoutNs > 0 ? conn.cq().await(wcs, wcs.length, timeoutNs) : conn.cq().poll(wcs, wcs.length);
        } catch (RuntimeException e) { // e.g. CQ overrun: every queue pair on it is in ERROR
            markLost("qid " + qid + ": poll failed: " + e.getMessage());
            return 0;
        }
        if (n == 0) {
            return 0;
        }
        reaped = 0;
        String failed = conn.processCompletions(wcs, n, onResponse);
        if (failed != null && !lostPending) {
            markLost("qid " + qid + ": " + failed);
        }
        return reaped;
    }

    private void onResponse(MemorySegment cqe) {
        int slot = cids.lookup(CqeDescriptor.cid(cqe));
        if (slot < 0 || slotState[slot] != OUTSTANDING) {
            staleResponses++; // one writer: a late response of a timed-out (reserved or reused) cid lands here
            return;
        }
        reaped++;
        completeSlot(slot, CqeDescriptor.status(cqe));
    }

    /** Times out every command past its deadline; then the queue is broken and fenced (see the class comment). */
    private int expire(long nowNs) {
        long next = 0;
        boolean nextSet = false;
        boolean expired = false;
        for (int s = 0; s < slots; s++) {
            if (slotState[s] != OUTSTANDING) {
                continue;
            }
            if (nowNs - slotDeadlineNs[s] >= 0) {
                expired = true;
            } else if (!nextSet || slotDeadlineNs[s] - next < 0) {
                next = slotDeadlineNs[s];
                nextSet = true;
            }
        }
        if (!expired) {
            nextDeadlineNs = next;
            return 0;
        }
        // fence first: no late RDMA READ / WRITE of the caller's memory once any handler has seen a completion
        state = State.BROKEN;
        conn.destroyQueuePair();
        int delivered = 0;
        for (int s = 0; s < slots; s++) {
            if (slotState[s] == OUTSTANDING && nowNs - slotDeadlineNs[s] >= 0) {
                outstanding--;
                delivered++;
                if (failure == null) {
                    failure = "qid " + qid + ": command timed out (cid=" + cids.cid(s) + ", commandTimeoutMs="
                            + policy.commandTimeoutNs() / 1_000_000 + ")";
                }
                if (policy.onTimeout() == OnTimeout.BREAK) {
                    slotState[s] = TIMED_OUT; // cid stays allocated until close: a late response is dropped
                } else {
                    slotState[s] = FREE;
                    cids.release(s);
                }
                handler.complete(slotTag[s], STATUS_TIMEOUT);
            }
        }
        return delivered + failAll(STATUS_PATH_LOST, State.BROKEN);
    }

    private void markLost(String why) {
        lostPending = true;
        if (failure == null) {
            failure = why;
        }
    }

    /** Fences, completes every outstanding command with {@code status} (descending slots), enters {@code next}. */
    private int failAll(int status, State next) {
        lostPending = false;
        chainHead = null;
        chainTail = null;
        state = next;
        if (conn != null) {
            conn.destroyQueuePair(); // fence before any handler sees the loss (idempotent)
        }
        int delivered = 0;
        for (int s = slots - 1; s >= 0; s--) {
            if (slotState[s] == OUTSTANDING) {
                completeSlot(s, status);
                delivered++;
            }
        }
        return delivered;
    }

    /** Frees an outstanding slot (its cid too), then tells the handler: the handler may fill it again at once. */
    private void completeSlot(int slot, int status) {
        int tag = slotTag[slot];
        slotState[slot] = FREE;
        cids.release(slot);
        outstanding--;
        handler.complete(tag, status);
    }

    /**
     * Completes every outstanding command with {@link #STATUS_PATH_LOST} after destroying the queue pair, then
     * closes the connection (when owned, {@link #attach}), the capsule state and the queue memory. Idempotent; on the
     * owner's thread. Keeps the first failure of the releases and attaches the others as suppressed.
     */
    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        if (failure == null) {
            failure = "qid " + qid + ": closed";
        }
        failAll(STATUS_PATH_LOST, State.CLOSED);
        RuntimeException first = null;
        AutoCloseable owned = ownsConn ? conn : null;
        for (AutoCloseable c : new AutoCloseable[]{owned, capsules, mem}) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
