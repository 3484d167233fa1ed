package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;

/**
 * One NVMe/RDMA I/O queue (qid &gt;= 1) driven by its caller's thread, with no thread of its own: a storage node's
 * poller forwards commands to a peer through it. Built on an established {@link QueueConnection} (see
 * {@link PeerAssociation}); uses the same {@link CidAllocator} and {@link CapsuleBuilder} as the initiator's queues.
 *
 * <p>Use, all on one thread (the owner): {@link #submit} puts one command on the wire; {@link #poll} reaps the
 * completion queue, reposts the response buffers, and calls the {@link CompletionHandler} once per command with the
 * caller's tag and the command's outcome; {@link #close()} releases everything. No lock, and no allocation per
 * command: slots, capsules, send and receive work requests and the work-completion array are preallocated.
 *
 * <p>Every submitted command is completed exactly once, from within {@link #poll} (or {@link #close()}), with
 * <ul>
 *   <li>its NVMe status (0 = success; otherwise the CQE status field, {@link io.rdmablock.rdma.fabric.NvmeStatus}),
 *   <li>{@link #STATUS_TIMEOUT} when no response arrived within {@code commandTimeoutNs} of its submission: the queue
 *   is then {@link State#BROKEN}: its queue pair is destroyed at once, so the target can no longer RDMA READ or WRITE
 *   the caller's memory (the caller may reuse it as soon as the handler returns, as Linux {@code nvme_rdma_timeout}
 *   tears down the queue first); every other outstanding command completes with {@link #STATUS_PATH_LOST}; the cids of
 *   timed-out commands stay reserved until {@link #close()}, so a response that still arrived would be dropped;
 *   <li>{@link #STATUS_PATH_LOST} when the connection failed (a failed work completion, a post failure, a CM
 *   DISCONNECTED or DEVICE_REMOVAL event) or the queue was closed with the command outstanding; the queue is then
 *   {@link State#LOST}.
 * </ul>
 * A queue that is not {@link State#LIVE} accepts no commands ({@link #submit} returns false); its owner closes it.
 *
 * <p>Capacity: at most {@code entries - 1} commands outstanding (NVMe Base 2.0 section 3.3.1.5: a full queue has
 * one free entry); timed-out commands count until close. Data: one keyed SGL per command, given by the caller
 * ({@link NvmCommand#keyedSgl}); in-capsule data is not used. Source: Linux {@code drivers/nvme/host/rdma.c}
 * ({@code nvme_rdma_queue_rq}, {@code nvme_rdma_recv_done}, {@code nvme_rdma_timeout}), NVMe-oF 1.1 section 7.
 */
public final class PeerQueue implements AutoCloseable {
    /** Status of a command that got no response within the command timeout (never a valid NVMe status). */
    public static final int STATUS_TIMEOUT = -1;
    /** Status of a command whose connection failed or was closed before its response arrived. */
    public static final int STATUS_PATH_LOST = -2;
    /** How often, at most, {@link #poll} asks the CM for a disconnect event. */
    static final long CM_CHECK_INTERVAL_NS = 10_000_000L;

    /** Receives each command's outcome, on the owner's thread from within {@link #poll} or {@link #close()}. */
    @FunctionalInterface
    public interface CompletionHandler {
        /**
         * @param tag    the caller's tag given to {@link #submit}
         * @param status the NVMe status (0 = success), {@link #STATUS_TIMEOUT} or {@link #STATUS_PATH_LOST}
         */
        void complete(int tag, int status);
    }

    /** Lifecycle of the queue. */
    public enum State {
        /** Accepts commands. */
        LIVE,
        /** A command timed out; the queue pair is destroyed; close it. */
        BROKEN,
        /** The connection failed or was disconnected; close it. */
        LOST,
        /** Closed; every resource released. */
        CLOSED
    }

    private static final byte FREE = 0;
    private static final byte OUTSTANDING = 1;
    private static final byte TIMED_OUT = 2;

    private final QueueConnection conn;
    private final CompletionHandler handler;
    private final long commandTimeoutNs;
    private final int slots;
    private final CidAllocator cids;
    private final CapsuleBuilder capsules;
    private final int[] slotTag;
    private final long[] slotDeadlineNs;
    private final byte[] slotState;
    private final QueueConnection.ResponseConsumer onResponse = this::onResponse;
    /** Completions delivered by the current reap. */
    private int reaped;
    private final WorkCompletion[] wcs = WorkCompletion.array(32);
    private State state = State.LIVE;
    private int outstanding;
    /** No outstanding command's deadline is before this. */
    private long nextDeadlineNs;
    private long nextCmCheckNs;
    /** Set by a failure seen outside poll (post send): poll completes everything with STATUS_PATH_LOST. */
    private boolean lostPending;
    private long staleResponses;
    private String failure;

    /**
     * Takes ownership of {@code conn} and its {@link QueueConnection#memory()}: {@link #close()} releases both.
     *
     * @param conn             an established I/O queue connection (qid &gt;= 1) no other code polls
     * @param commandTimeoutNs how long a command may wait for its response, &gt; 0
     * @param handler          receives every completion
     * @throws IllegalArgumentException when conn is an admin queue or the timeout is not positive
     */
    public PeerQueue(QueueConnection conn, long commandTimeoutNs, CompletionHandler handler) {
        if (conn.qid() < 1) {
            throw new IllegalArgumentException("invalid qid: qid=" + conn.qid() + ", min=1 (an I/O queue)");
        }
        if (commandTimeoutNs <= 0) {
            throw new IllegalArgumentException("invalid commandTimeoutNs: commandTimeoutNs=" + commandTimeoutNs
                    + ", min=1");
        }
        this.conn = conn;
        this.handler = handler;
        this.commandTimeoutNs = commandTimeoutNs;
        QueueMemory mem = conn.memory();
        this.slots = Math.min(conn.entries() - 1, mem.capsuleCount());
        this.cids = new CidAllocator(slots);
        this.capsules = new CapsuleBuilder(null, null, mem, slots, 0, 0);
        this.slotTag = new int[slots];
        this.slotDeadlineNs = new long[slots];
        this.slotState = new byte[slots];
    }

    /** The queue's qid. */
    public int qid() {
        return conn.qid();
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

    /** Why the queue is not {@link State#LIVE} (names qid and cause), or null. */
    public String failure() {
        return failure;
    }

    /** Responses dropped because their cid was stale or unknown (e.g. a timed-out command's). */
    public long staleResponses() {
        return staleResponses;
    }

    /**
     * Puts {@code command} on the wire with a fresh cid; its completion comes from a later {@link #poll}. The
     * command is copied into the queue's capsule: {@code command} may be reused at once. The memory its keyed SGL
     * names must stay valid until the completion (it is RDMA READ or WRITTEN by the target).
     *
     * @param tag   the caller's handle, given back to the handler
     * @param nowNs the caller's clock ({@link System#nanoTime()} scale); the deadline is nowNs + commandTimeoutNs
     * @return false when no slot is free (entries - 1 outstanding) or the queue is not {@link State#LIVE}
     */
    public boolean submit(NvmCommand command, int tag, long nowNs) {
        int slot = claim();
        if (slot < 0) {
            return false;
        }
        return post(slot, capsules.prepare(slot, cids.cid(slot), command), tag, nowNs);
    }

    /**
     * Puts another host's command on the wire as that host sent it, with a fresh cid, {@code epoch} in CDW2..CDW3
     * and a keyed SGL naming {@code address} / {@code length} / {@code rkey} ({@link CapsuleBuilder#prepareForward}):
     * a primary forwarding a host's write to a secondary, which fetches the payload from {@code address} with RDMA
     * READ. The SQE is copied into the queue's capsule; the memory the SGL names must stay valid until the
     * completion. Same contract as {@link #submit}.
     *
     * @param hostSqe the host's 64-byte SQE
     * @return false when no slot is free or the queue is not {@link State#LIVE}
     */
    public boolean forward(MemorySegment hostSqe, long epoch, long address, int length, int rkey, int tag,
                           long nowNs) {
        int slot = claim();
        if (slot < 0) {
            return false;
        }
        return post(slot, capsules.prepareForward(slot, cids.cid(slot), hostSqe, epoch, address, length, rkey), tag,
                nowNs);
    }

    /** A free slot with a fresh cid, or -1 (none free, or the queue is not live). */
    private int claim() {
        if (state != State.LIVE || lostPending) {
            return -1;
        }
        return cids.allocate();
    }

    private boolean post(int slot, SendWr wr, int tag, long nowNs) {
        wr.next = null;
        slotTag[slot] = tag;
        long deadline = nowNs + commandTimeoutNs;
        slotDeadlineNs[slot] = deadline;
        slotState[slot] = OUTSTANDING;
        if (outstanding++ == 0 || deadline - nextDeadlineNs < 0) {
            nextDeadlineNs = deadline;
        }
        try {
            conn.qp().postSend(wr);
        } catch (RuntimeException e) {
            // completed as path lost by the next poll: completions come from poll only
            markLost("qid " + conn.qid() + ": post send failed: " + e.getMessage());
        }
        return true;
    }

    /**
     * Reaps completions and delivers them, checks deadlines and (every 10 ms) the CM for a disconnect. The handler may
     * call {@link #submit} from within; it must not call {@link #poll} or {@link #close()}.
     *
     * @param nowNs the caller's clock ({@link System#nanoTime()} scale)
     * @return the number of completions delivered
     */
    public int poll(long nowNs) {
        if (state == State.CLOSED) {
            return 0;
        }
        int delivered = 0;
        if (state == State.LIVE && !lostPending) {
            delivered += reap();
        }
        if (lostPending) {
            return delivered + failAll(STATUS_PATH_LOST, State.LOST);
        }
        if (state != State.LIVE) {
            return delivered;
        }
        if (outstanding > 0 && nowNs - nextDeadlineNs >= 0) {
            delivered += expire(nowNs);
        }
        if (state == State.LIVE && nowNs - nextCmCheckNs >= 0) {
            nextCmCheckNs = nowNs + CM_CHECK_INTERVAL_NS;
            if (conn.disconnectedEvent()) {
                markLost("qid " + conn.qid() + ": disconnected by the target");
                delivered += failAll(STATUS_PATH_LOST, State.LOST);
            }
        }
        return delivered;
    }

    /**
     * Waits up to {@code timeoutNs} for this queue's next completion on its CQ's completion channel
     * ({@code ibv_req_notify_cq(3)} + {@code ibv_get_cq_event(3)}; meanwhile a user-space provider serves the peer's
     * RDMA READ of the caller's buffers), then delivers what arrived as {@link #poll} does; deadlines and the CM are
     * checked by the next {@link #poll}. For an owner with nothing else to do than wait for this queue. Owner thread.
     *
     * @return the number of completions delivered (0: none within the timeout, or nothing outstanding, or the queue
     *     is not {@link State#LIVE})
     */
    public int await(long timeoutNs) {
        if (state != State.LIVE || lostPending || outstanding == 0) {
            return 0;
        }
        return reap(timeoutNs);
    }

    private int reap() {
        return reap(0);
    }

    /** Reaps the CQ: polls it ({@code timeoutNs} 0), or waits up to {@code timeoutNs} for a completion. */
    private int reap(long timeoutNs) {
        int n;
        try {
            n = timeoutNs > 0 ? conn.cq().await(wcs, wcs.length, timeoutNs) : conn.cq().poll(wcs, wcs.length);
        } catch (RuntimeException e) { // e.g. CQ overrun: every queue pair on it is in ERROR
            markLost("qid " + conn.qid() + ": poll failed: " + e.getMessage());
            return 0;
        }
        if (n == 0) {
            return 0;
        }
        reaped = 0;
        String failed = conn.processCompletions(wcs, n, onResponse);
        if (failed != null && !lostPending) {
            markLost("qid " + conn.qid() + ": " + failed);
        }
        return reaped;
    }

    private void onResponse(MemorySegment cqe) {
        int slot = cids.lookup(CqeDescriptor.cid(cqe));
        if (slot < 0 || slotState[slot] != OUTSTANDING) {
            staleResponses++; // a timed-out command's cid stays reserved: its late response lands here
            return;
        }
        reaped++;
        completeSlot(slot, CqeDescriptor.status(cqe));
    }

    /** Times out every command past its deadline; then the queue is broken and fenced (see the class comment). */
    private int expire(long nowNs) {
        long next = Long.MAX_VALUE;
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
                slotState[s] = TIMED_OUT; // cid stays allocated until close: a late response is dropped
                outstanding--;
                delivered++;
                if (failure == null) {
                    failure = "qid " + conn.qid() + ": command timed out (cid=" + cids.cid(s) + ", commandTimeoutMs="
                            + commandTimeoutNs / 1_000_000 + ")";
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

    /** Completes every outstanding command with {@code status} and enters {@code next}. */
    private int failAll(int status, State next) {
        lostPending = false;
        state = next;
        if (next != State.CLOSED) {
            conn.destroyQueuePair(); // fence before any handler sees the loss (idempotent)
        }
        int delivered = 0;
        for (int s = 0; s < slots; s++) {
            if (slotState[s] == OUTSTANDING) {
                completeSlot(s, status);
                delivered++;
            }
        }
        return delivered;
    }

    /** Frees an outstanding slot (its cid too), then tells the handler: the handler may submit into it at once. */
    private void completeSlot(int slot, int status) {
        int tag = slotTag[slot];
        slotState[slot] = FREE;
        cids.release(slot);
        outstanding--;
        handler.complete(tag, status);
    }

    /**
     * Completes every outstanding command with {@link #STATUS_PATH_LOST}, then destroys the connection, the capsule
     * state and the queue memory. Idempotent; on the owner's thread. Keeps the first failure of the releases and
     * attaches the others as suppressed.
     */
    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        if (failure == null) {
            failure = "qid " + conn.qid() + ": closed";
        }
        conn.destroyQueuePair(); // first: nothing may touch the callers' memory once their commands completed
        failAll(STATUS_PATH_LOST, State.CLOSED);
        RuntimeException first = null;
        for (AutoCloseable c : new AutoCloseable[]{conn, capsules, conn.memory()}) {
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
