package io.rdmablock.nvmf.host;

import java.lang.foreign.MemorySegment;

/**
 * One NVMe/RDMA I/O queue (qid &gt;= 1) driven by its caller's thread, with no thread of its own: a storage node's
 * poller forwards commands to a peer through it. Built on an established {@link QueueConnection} (see
 * {@link PeerAssociation}) that it keeps for life; the mechanics are the {@link HostQueue} engine's, the same as the
 * initiator's queues, with the {@link HostQueue.OnTimeout#BREAK} policy and one command per post.
 *
 * <p>Use, all on one thread (the owner): {@link #submit} or {@link #forward} puts one command on the wire;
 * {@link #poll} reaps the completion queue, reposts the response buffers, and calls the {@link CompletionHandler}
 * once per command with the caller's tag and the command's outcome; {@link #close()} releases everything. No lock,
 * and no allocation per command.
 *
 * <p>Every submitted command is completed exactly once, from within {@link #poll}, {@link #await} or
 * {@link #close()}, with
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
 * <p>Capacity: at most {@code entries - 1} commands outstanding; timed-out commands count until close. Data: one
 * keyed SGL per command, given by the caller ({@link NvmCommand#keyedSgl}); in-capsule data is not used.
 */
public final class PeerQueue implements AutoCloseable {
    /** Status of a command that got no response within the command timeout (never a valid NVMe status). */
    public static final int STATUS_TIMEOUT = HostQueue.STATUS_TIMEOUT;
    /** Status of a command whose connection failed or was closed before its response arrived. */
    public static final int STATUS_PATH_LOST = HostQueue.STATUS_PATH_LOST;
    /** How often, at most, {@link #poll} asks the CM for a disconnect event. */
    static final long CM_CHECK_INTERVAL_NS = 10_000_000L;
    /** Work completions taken per poll of the completion queue. */
    private static final int POLL_BATCH = 32;

    /** Receives each command's outcome, on the owner's thread from within {@link #poll} or {@link #close()}. */
    @FunctionalInterface
    public interface CompletionHandler extends HostQueue.CompletionHandler {
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

    private final HostQueue engine;

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
        QueueMemory mem = conn.memory();
        int slots = Math.min(conn.entries() - 1, mem.capsuleCount());
        engine = new HostQueue(conn.qid(), mem, new CapsuleBuilder(null, null, mem, slots, 0, 0), POLL_BATCH,
                new HostQueue.Policy(commandTimeoutNs, HostQueue.OnTimeout.BREAK, CM_CHECK_INTERVAL_NS), handler);
        engine.attach(conn, true);
    }

    /**
     * The in-capsule data the controller takes behind an SQE on this queue ({@link TargetLimits#inCapsuleBytes()},
     * from its Identify Controller IOCCSZ): forwarded data of at most this many bytes goes in the capsule. 0 (the
     * default) sends every forward's data behind a keyed SGL.
     */
    public void inCapsuleBytes(int advertised) {
        engine.inCapsuleBytes(advertised);
    }

    /** The queue's qid. */
    public int qid() {
        return engine.qid();
    }

    /** Commands that may be outstanding at once: entries - 1. */
    public int capacity() {
        return engine.capacity();
    }

    /** Commands waiting for their response now (timed-out ones not included). */
    public int outstanding() {
        return engine.outstanding();
    }

    public State state() {
        return switch (engine.state()) {
            case LIVE -> State.LIVE;
            case BROKEN -> State.BROKEN;
            case CLOSED -> State.CLOSED;
            case LOST, DETACHED -> State.LOST; // never detached: the connection is this queue's for life
        };
    }

    /** Why the queue is not {@link State#LIVE} (names qid and cause), or null. */
    public String failure() {
        return engine.failure();
    }

    /** Responses dropped because their cid was stale or unknown (e.g. a timed-out command's). */
    public long staleResponses() {
        return engine.staleResponses();
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
        int slot = engine.claim();
        if (slot < 0) {
            return false;
        }
        engine.submit(slot, command, tag, nowNs);
        engine.flush(); // a failed post completes as path lost from the next poll
        return true;
    }

    /**
     * Puts another host's command on the wire as that host sent it, with a fresh cid, {@code epoch} in CDW2..CDW3
     * and its data ({@link CapsuleBuilder#prepareForward}): a primary forwarding a host's write to a secondary. Data
     * of at most {@link #inCapsuleBytes(int)} goes in the capsule, sent from {@code address} with {@code lkey} (a
     * second SGE, no copy); longer data goes behind a keyed SGL naming {@code address} / {@code length} /
     * {@code rkey}, which the secondary fetches with RDMA READ. The SQE is copied into the queue's capsule; the data
     * must stay valid until the completion. Same contract as {@link #submit}.
     *
     * @param hostSqe the host's 64-byte SQE
     * @return false when no slot is free or the queue is not {@link State#LIVE}
     */
    public boolean forward(MemorySegment hostSqe, long epoch, long address, int length, int rkey, int lkey, int tag,
                           long nowNs) {
        int slot = engine.claim();
        if (slot < 0) {
            return false;
        }
        engine.forward(slot, hostSqe, epoch, address, length, rkey, lkey, tag, nowNs);
        engine.flush();
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
        return engine.poll(nowNs);
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
        return engine.outstanding() == 0 ? 0 : engine.await(timeoutNs);
    }

    /**
     * Completes every outstanding command with {@link #STATUS_PATH_LOST}, then destroys the connection, the capsule
     * state and the queue memory. Idempotent; on the owner's thread. Keeps the first failure of the releases and
     * attaches the others as suppressed.
     */
    @Override
    public void close() {
        engine.close();
    }
}
