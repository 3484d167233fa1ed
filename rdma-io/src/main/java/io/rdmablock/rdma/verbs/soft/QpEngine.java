package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcOpcode;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine of one soft queue pair: the queue pair's socket and every piece of state behind the rings. It plays both
 * RC roles on the connection:
 * <ul>
 *   <li>requester: transmits posted send WRs in order, several frames per gathering write straight from registered
 *   memory ({@link Transmitter}); completes them in posting order on ACK / READ response; honours NAKs; on RNR NAK
 *   waits {@link #RNR_DELAY_NS} and retransmits from the NAKed request (go-back-N), up to {@code rnrRetryCount}
 *   times (7 = forever);</li>
 *   <li>responder: executes the peer's requests in order ({@link Receiver}): places WRITE payloads and SEND payloads
 *   straight from the socket into registered memory (scattering reads) once rkey, bounds and access are checked,
 *   queues READ responses, answers RNR NAK when no receive is posted, NAK (and ERROR) on a violation.</li>
 * </ul>
 *
 * <h2>Who runs it</h2>
 * One thread at a time runs a {@link #step} (non-blocking socket reads and writes, then teardown work), holding the
 * engine ({@link #busy}). Usually that is the application's own polling thread, like a NIC the host drives: posting a
 * send WR steps the engine at once ({@link #kick}: the doorbell; the frames leave in the poster's system call), polling
 * a completion queue steps its queue pairs ({@link #pollInline}), and a wait on a completion queue with one queue pair
 * blocks in this engine's selector ({@link #awaitInline}), so a completion is visible to the poller without a wake-up
 * of another thread. The engine's own thread is the fallback that keeps the RC rules true when nobody polls (a
 * responder must serve the peer's RDMA READ and WRITE whether or not its application polls): it runs the engine once
 * no caller has stepped or waited for {@link #INLINE_GRACE_NS}, when a caller asks for work it cannot do itself, and
 * in ERROR (teardown, lingering), and otherwise sleeps. The thread that holds the engine is the only one in its
 * selector.
 *
 * <p>ERROR: the receive queue is flushed at once; the frame batch being written is finished (bounded by
 * {@link #FINISH_BATCH_NS}), queued responses up to a NAK are sent, the send queue is flushed, the socket is shut
 * down and the peer sees end of stream (its queue pair goes to ERROR and both ids get DISCONNECTED), as SoftiWARP
 * does with TERMINATE and connection teardown; the socket is closed when the peer's end of stream arrives or after
 * {@link #LINGER_NS}. Destroy ({@link #shutdown}) waits for none of this: the engine makes one last non-blocking
 * attempt to write and shut down output, then closes the socket at once (the kernel still delivers what it has
 * buffered, then FIN), so destroying a queue pair whose peer is stopped (never reads, never closes) takes
 * milliseconds, not the linger.
 */
final class QpEngine implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(QpEngine.class);
    static final long RNR_DELAY_NS = 1_000_000L;
    static final long FINISH_BATCH_NS = 1_000_000_000L;
    static final long LINGER_NS = 1_000_000_000L;
    /**
     * How long after a caller last stepped or waited on the engine its own thread stays asleep (ns; system property
     * {@code rdmablock.soft.inlineGraceNs}, default 1 ms): the longest a peer's request waits when the application
     * stops polling all at once. 0 turns caller-driven progress off (every step on the engine's thread).
     */
    static final long INLINE_GRACE_NS = Long.getLong("rdmablock.soft.inlineGraceNs", 1_000_000L);
    /**
     * After a poll's step found nothing, the next polls within this long skip the socket (ns; system property
     * {@code rdmablock.soft.repollNs}, default 5 us): a spinning poller then costs a system call per interval, not
     * per round, and a frame that arrives meanwhile waits at most this long.
     */
    static final long REPOLL_NS = Long.getLong("rdmablock.soft.repollNs", 5_000L);
    /** A post within this long of a caller's step or wait leaves the send to that caller's next poll (ns). */
    private static final long DEFER_NS = 50_000L;
    /** Steps one caller makes in a row when others asked for work meanwhile, before it leaves them to the thread. */
    private static final int INLINE_STEPS = 4;
    private static final long IDLE_SELECT_MS = 100;
    private static final Consumer<SelectionKey> IGNORE_KEY = k -> { };

    final SoftQp qp;
    private final Thread thread;
    final Selector selector;
    final Transmitter tx;
    final Receiver rx;
    /** Held by the one thread running a step (or blocked in the selector). */
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Someone had work for the engine while another thread held it: the holder (or the thread) steps again. */
    private volatile boolean stepWanted;
    /** The holder is blocked in the selector: {@link Selector#wakeup} ends it. */
    private volatile boolean selecting;
    /** Last time a caller stepped or waited on the engine ({@link System#nanoTime}). */
    private volatile long inlineAtNs;
    /** A caller waits in the selector until about then: the thread need not look before. */
    private volatile long inlineUntilNs;
    /** When a poll's step last found nothing (0: the last one did something); see {@link #REPOLL_NS}. */
    private long idlePollNs;
    /** Posted work waits for the next step to be sent ({@link #kick}). */
    private volatile boolean txPending;
    /** Steps the engine's own thread ran (tests: how much of the work callers did not do themselves). */
    private volatile long threadSteps;
    /** Torn down: nothing steps any more, the thread ends. */
    private volatile boolean finished;
    private volatile SocketChannel pendingChannel;
    private volatile int pendingReadDepth = 1;
    private volatile boolean stopRequested;

    SocketChannel ch;
    private SelectionKey key;
    private boolean writeInterest;
    private boolean established;
    boolean socketClosed;
    private boolean outputShut;
    private boolean peerEof;
    private boolean disconnectFired;
    boolean inError;
    private long errorAtNs;
    /** A NAK is queued: send queued responses up to it before shutting down. */
    boolean keepResponsesUntilNak;

    // requester state
    long sqNext;
    long sqCompleted;
    long sqAcked = -1;
    final boolean[] readDone;
    int readsOutstanding;
    int readDepth = 1;
    boolean txStalled;
    private long rnrSeq = -1;
    private int rnrLeft;
    boolean paused;
    long txPausedUntilNs;

    // responder state
    long rqHead;

    QpEngine(SoftQp qp) {
        this.qp = qp;
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new io.rdmablock.rdma.verbs.VerbsException("ibv_create_qp failed: cannot open selector: " + e, 24, e);
        }
        readDone = new boolean[qp.sqMask + 1];
        tx = new Transmitter(this);
        rx = new Receiver(this);
        thread = new Thread(this, "soft-qp-" + qp.qpNum());
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void establish(SocketChannel channel, int readDepth) {
        pendingReadDepth = Math.max(1, readDepth);
        pendingChannel = channel;
        wake();
    }

    /**
     * There is work for the engine (any thread, never steps itself): whoever holds it steps again; nobody does: the
     * engine's thread takes it up at once.
     */
    void wake() {
        stepWanted = true;
        if (selecting) {
            selector.wakeup();
        } else if (!busy.get()) {
            LockSupport.unpark(thread);
        } // else the holder sees stepWanted when it lets go (release)
    }

    /** Work was posted (the poster's thread): one step right here when the engine is free (the doorbell). */
    void kick() {
        if (INLINE_GRACE_NS <= 0 || inError) {
            wake();
            return;
        }
        long now = System.nanoTime();
        if (now - inlineAtNs < DEFER_NS && !selecting) {
            // the poster polled a moment ago and polls again next: that poll's step sends this together with what
            // else it posts meanwhile (one system call for the round, as a NIC batches doorbells); nobody polls
            // within the grace: the engine's thread sends it
            txPending = true;
            return;
        }
        inlineAtNs = now;
        if (!acquire()) {
            wake();
            return;
        }
        try {
            if (!finished) {
                stepWanted = false;
                transmit();
                if (stepWanted) {
                    stepInline();
                }
            }
        } catch (Throwable t) {
            failed(t);
        } finally {
            release();
        }
    }

    /** The transmit half of a step (the doorbell of a post): attach, send what is posted; no socket read. */
    private void transmit() throws IOException {
        txPending = false;
        SocketChannel pc = pendingChannel;
        if (pc != null) {
            pendingChannel = null;
            attach(pc);
        }
        if (ch != null && !socketClosed && !inError && qp.state() != QpState.ERROR) {
            tx.write();
        } else {
            stepWanted = true; // ERROR or not connected yet: a full step (teardown) follows
        }
    }

    /** A poll of one of the queue pair's completion queues (the poller's thread): one step when the engine is free. */
    void pollInline() {
        if (INLINE_GRACE_NS <= 0 || finished) {
            return;
        }
        long now = System.nanoTime();
        inlineAtNs = now;
        long idle = idlePollNs;
        if (idle != 0 && now - idle < REPOLL_NS && !stepWanted && !txPending) {
            return; // looked a moment ago and found nothing (a racy read: at worst one step more or less)
        }
        if (!acquire()) {
            if (selecting) {
                wake(); // the thread waits in the selector: hand the engine to this caller from its next poll on
            }
            return;
        }
        try {
            idlePollNs = stepInline() ? 0 : now;
        } finally {
            release();
        }
    }

    /**
     * A wait on {@code cq}, one of this queue pair's completion queues, up to {@code maxNs}: steps, and when that did
     * nothing blocks in the selector until the socket has something, work is posted, {@code cq} is woken or the time
     * is up (at least 1 ms: the selector's unit). False when the engine was not free (another thread runs it: the
     * caller waits for its completion push instead).
     */
    boolean awaitInline(SoftCq cq, long maxNs) {
        if (INLINE_GRACE_NS <= 0 || finished || inError || !acquire()) {
            return false;
        }
        try {
            long now = System.nanoTime();
            inlineAtNs = now;
            inlineUntilNs = now + maxNs;
            if (finished) {
                return true;
            }
            stepWanted = false;
            if (!step()) {
                cq.waitingEngine = this;
                try {
                    if (!cq.ready()) {
                        select(maxNs);
                    }
                } finally {
                    cq.waitingEngine = null;
                }
                stepInline();
            }
            return true;
        } catch (Throwable t) {
            failed(t);
            return true;
        } finally {
            inlineAtNs = System.nanoTime();
            release();
        }
    }

    private boolean acquire() {
        return !busy.get() && busy.compareAndSet(false, true);
    }

    /** Lets go of the engine; work asked for meanwhile, or teardown, goes to the thread. */
    private void release() {
        busy.set(false);
        if (stepWanted || stopRequested || finished) {
            LockSupport.unpark(thread);
        }
    }

    /** Steps (holder only), again while others asked for work meanwhile, a few times; true on progress. */
    private boolean stepInline() {
        if (finished) {
            return false;
        }
        boolean progress = false;
        try {
            int n = 0;
            do {
                stepWanted = false;
                progress |= step();
            } while (stepWanted && !finished && ++n < INLINE_STEPS);
        } catch (Throwable t) {
            failed(t);
            return true;
        }
        return progress;
    }

    long threadSteps() {
        return threadSteps;
    }

    /** Stops the engine after it flushed and closed the socket; true when the thread ended within the timeout. */
    boolean shutdown(long timeoutNs) {
        stopRequested = true;
        wake();
        if (Thread.currentThread() == thread) {
            return false;
        }
        try {
            thread.join(Math.max(1, timeoutNs / 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /** The engine's own thread: runs it when no caller does (see the class comment), until torn down. */
    @Override
    public void run() {
        try {
            while (!finished) {
                if (!stepWanted && !inError && !stopRequested && !(txPending && !callerSteppedWithin())
                        && callerDriven()) {
                    continue;
                }
                if (!acquire()) {
                    LockSupport.parkNanos(this, Math.max(INLINE_GRACE_NS, 50_000L));
                    continue;
                }
                try {
                    if (finished) {
                        break;
                    }
                    stepWanted = false;
                    threadSteps++; // only this thread writes it
                    if (!step() && !finished && !stepWanted) {
                        select(Long.MAX_VALUE);
                    }
                } catch (Throwable t) {
                    failed(t);
                } finally {
                    release();
                }
            }
        } finally {
            while (!busy.compareAndSet(false, true)) { // keep it for good: nobody steps a closed engine
                LockSupport.parkNanos(this, 100_000L);
            }
            closeSocket();
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
    }

    /**
     * True (after sleeping) while callers drive the engine: one stepped within {@link #INLINE_GRACE_NS}, or waits in
     * the selector, or holds the engine right now.
     */
    private boolean callerDriven() {
        if (INLINE_GRACE_NS <= 0) {
            return false;
        }
        long now = System.nanoTime();
        long until = Math.max(inlineAtNs + INLINE_GRACE_NS, selecting ? inlineUntilNs + INLINE_GRACE_NS : 0);
        if (until - now > 0) {
            LockSupport.parkNanos(this, until - now);
            return true;
        }
        if (busy.get()) {
            LockSupport.parkNanos(this, INLINE_GRACE_NS);
            return true;
        }
        return false;
    }

    /** The engine failed (a bug, or registered memory released under it): ERROR, flush, done. Holder only. */
    private void failed(Throwable t) {
        if (t instanceof IllegalStateException && String.valueOf(t.getMessage()).contains("Already closed")) {
            // the application released registered memory (closed its arena) while this QP still used it,
            // typically while tearing down after a failure: not a provider fault, no stack trace
            LOG.warn("soft qp {}: registered memory was released while the queue pair was active; moving to "
                    + "ERROR", qp.qpNum());
        } else {
            LOG.error("soft qp {} engine failed; moving to ERROR", qp.qpNum(), t);
        }
        qp.setState(QpState.ERROR);
        closeSocket();
        try {
            flushSq();
            flushRq();
        } catch (Throwable ignored) {
            // best effort
        }
        finished = true;
    }

    private boolean callerSteppedWithin() {
        return System.nanoTime() - inlineAtNs < INLINE_GRACE_NS;
    }

    /** One round of the engine: attach, read, write, teardown work. Holder only; true on progress. */
    private boolean step() throws IOException {
        boolean progress = false;
        txPending = false;
        SocketChannel pc = pendingChannel;
        if (pc != null) {
            pendingChannel = null;
            attach(pc);
            progress = true;
        }
        if (!inError && (qp.state() == QpState.ERROR || stopRequested)) {
            enterError();
        }
        if (ch != null && !socketClosed) {
            progress |= rx.read();
            if (!socketClosed) {
                progress |= tx.write();
            }
        }
        if (inError) {
            progress |= errorWork();
            if (stopRequested && (ch == null || socketClosed) && sqCompleted == qp.sqTail && rqHead == qp.rqTail) {
                finished = true;
            }
        }
        return progress;
    }

    private void attach(SocketChannel c) throws IOException {
        ch = c;
        readDepth = pendingReadDepth;
        established = true;
        key = c.register(selector, SelectionKey.OP_READ);
    }

    void setWriteInterest(boolean on) {
        if (on != writeInterest && key != null && key.isValid()) {
            writeInterest = on;
            key.interestOps(on ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }
    }

    /** Blocks in the selector up to {@code maxNs} (at least 1 ms) unless there is work. Holder only. */
    private void select(long maxNs) throws IOException {
        selecting = true;
        try {
            if (stepWanted || hasWork()) {
                return;
            }
            long timeoutMs = IDLE_SELECT_MS;
            if (paused) {
                timeoutMs = Math.max(1, (txPausedUntilNs - System.nanoTime() + 999_999) / 1_000_000);
            }
            if (inError && ch != null && !socketClosed) {
                timeoutMs = 10;
            }
            if (maxNs != Long.MAX_VALUE) {
                timeoutMs = Math.min(timeoutMs, Math.max(1, (maxNs + 999_999) / 1_000_000));
            }
            selector.select(IGNORE_KEY, timeoutMs);
        } finally {
            selecting = false;
        }
    }

    private boolean hasWork() {
        if (pendingChannel != null || (!inError && (qp.state() == QpState.ERROR || stopRequested))) {
            return true;
        }
        if (inError) {
            return (qp.sqTail != sqCompleted && (!tx.batchActive || socketClosed)) || qp.rqTail != rqHead;
        }
        if (ch == null || tx.batchActive) {
            return false;
        }
        if (tx.hasResponses()) {
            return true;
        }
        if (paused) {
            return System.nanoTime() >= txPausedUntilNs;
        }
        return qp.sqTail != sqNext && !txStalled;
    }

    // ---------------------------------------------------------------- requester completions

    /** Completes send WRs in posting order: a READ when its data is placed, others when acknowledged. */
    void advanceCompletions() {
        while (sqCompleted < sqNext) {
            int i = (int) sqCompleted & qp.sqMask;
            if (qp.sqOpcode[i] == WrOpcode.RDMA_READ.ordinal()) {
                if (!readDone[i]) {
                    break;
                }
            } else if (sqCompleted > sqAcked) {
                break;
            }
            sqCompleted++;
            if ((qp.sqFlags[i] & SendWr.SIGNALED) != 0) {
                completeSend(i, WcStatus.SUCCESS);
            }
        }
        if (!inError && sqCompleted == sqNext && sqNext < qp.sqTail) {
            int i = (int) sqNext & qp.sqMask;
            if (qp.sqPostStatus[i] != 0) {
                sqNext++;
                failSend(WcStatus.of(qp.sqPostStatus[i]));
            }
        }
    }

    /** Completes the send WR at {@code sqCompleted} with an error and moves to ERROR. */
    void failSend(WcStatus status) {
        if (sqCompleted < sqNext) {
            int i = (int) sqCompleted & qp.sqMask;
            sqCompleted++;
            completeSend(i, status);
        }
        enterError();
    }

    /**
     * Generates the completion of send slot {@code i} (already counted in {@code sqCompleted}). The slot is released
     * to the poster before the completion becomes visible, so a poster that saw the completion can reuse the slot.
     */
    private void completeSend(int i, WcStatus status) {
        long wrId = qp.sqWrId[i];
        int total = qp.sqTotal[i];
        WcOpcode op = switch (SoftQp.WR_OPCODES[qp.sqOpcode[i]]) {
            case SEND, SEND_WITH_IMM, SEND_WITH_INV -> WcOpcode.SEND; // SEND_WITH_INV is refused at post
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
        };
        qp.sqRetired = sqCompleted;
        if (status != WcStatus.SUCCESS) {
            qp.setState(QpState.ERROR); // visible no later than the error completion
        }
        qp.sendCq.push(wrId, status, op, total, false, 0, qp.qpNum());
    }

    void completeRecv(WcStatus status, WcOpcode op, int len, boolean withImm, int imm) {
        int slot = (int) rqHead & qp.rqMask;
        long wrId = qp.rqWrId[slot];
        rqHead++;
        qp.rqHead = rqHead;
        if (status != WcStatus.SUCCESS) {
            qp.setState(QpState.ERROR);
        }
        qp.recvCq.push(wrId, status, op, len, withImm, imm, qp.qpNum());
    }

    /** RNR NAK for request {@code s}: retransmit from it after a delay, or fail it when retries are exhausted. */
    void onRnrNak(long s) {
        int limit = qp.attr().rnrRetryCount;
        if (rnrSeq != s) {
            rnrSeq = s;
            rnrLeft = limit;
        }
        if (limit != 7 && rnrLeft == 0) {
            failSend(WcStatus.RNR_RETRY_EXC_ERR);
            return;
        }
        if (limit != 7) {
            rnrLeft--;
        }
        for (long k = s; k < sqNext; k++) {
            int i = (int) k & qp.sqMask;
            if (qp.sqOpcode[i] == WrOpcode.RDMA_READ.ordinal() && !readDone[i]) {
                readsOutstanding--;
            }
        }
        sqNext = s;
        txStalled = false;
        paused = true;
        txPausedUntilNs = System.nanoTime() + RNR_DELAY_NS;
    }

    // ---------------------------------------------------------------- responder checks

    /** The region behind a remote key with the access asked for, in this QP's PD and covering the range; or null. */
    SoftMr remote(int rkey, long addr, long len, int access) {
        SoftMr mr = qp.device.byRkey(rkey);
        if (mr == null || mr.isClosed() || mr.pd() != qp.pd || (mr.access() & access) != access
                || !mr.covers(addr, len)) {
            return null;
        }
        return mr;
    }

    static int remoteAccess(boolean write) {
        return write ? Access.REMOTE_WRITE : Access.REMOTE_READ;
    }

    // ---------------------------------------------------------------- errors and teardown

    void enterError() {
        if (inError) {
            return;
        }
        inError = true;
        qp.setState(QpState.ERROR);
        errorAtNs = System.nanoTime();
        paused = false;
        tx.onError(keepResponsesUntilNak);
        flushRq();
    }

    /** Protocol violation by the peer: tear the connection down at once. */
    void protocolError(String what) {
        LOG.warn("soft qp {}: protocol error: {}; moving to ERROR", qp.qpNum(), what);
        closeSocket();
        enterError();
    }

    void onIoError(IOException e) {
        if (!inError) {
            LOG.debug("soft qp {}: connection lost: {}", qp.qpNum(), e.toString());
        }
        closeSocket();
        enterError();
    }

    void onEof() {
        peerEof = true;
        enterError();
        if (outputShut) {
            closeSocket();
        }
    }

    private boolean errorWork() {
        boolean p = false;
        if (ch != null && !socketClosed) {
            long now = System.nanoTime();
            if (!outputShut && !tx.batchActive && !tx.hasResponses()) {
                try {
                    ch.shutdownOutput();
                } catch (IOException e) {
                    closeSocket();
                }
                outputShut = true;
                p = true;
                if (peerEof) {
                    closeSocket();
                }
            } else if (tx.batchActive && now - errorAtNs > FINISH_BATCH_NS) {
                closeSocket();
            }
            if (!socketClosed && (stopRequested || now - errorAtNs > LINGER_NS)) {
                // destroyed (ibv_destroy_qp): nothing waits for the peer. What the kernel has buffered is still
                // delivered before end of stream (a plain close, no RST); a half-written batch is cut short
                closeSocket();
            }
        }
        if (!tx.batchActive || socketClosed) {
            p |= flushSq();
        }
        p |= flushRq();
        return p;
    }

    boolean flushSq() {
        long tail = qp.sqTail;
        if (sqCompleted >= tail) {
            return false;
        }
        while (sqCompleted < tail) {
            int i = (int) sqCompleted & qp.sqMask;
            sqCompleted++;
            completeSend(i, WcStatus.WR_FLUSH_ERR);
        }
        sqNext = sqCompleted;
        return true;
    }

    boolean flushRq() {
        long tail = qp.rqTail;
        if (rqHead >= tail) {
            return false;
        }
        while (rqHead < tail) {
            completeRecv(WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
        }
        return true;
    }

    void closeSocket() {
        if (ch != null && !socketClosed) {
            socketClosed = true;
            tx.batchActive = false;
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        if (established && !disconnectFired) {
            disconnectFired = true;
            qp.fireDisconnected();
        }
    }
}
