package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.QpState;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WcStatus;
import io.rdmablock.rdma.verbs.WrOpcode;
import io.rdmablock.rdma.verbs.emu.EmuMr;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ScatteringByteChannel;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
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
 *   into registered memory (copied from the receive stage, or with scattering reads straight from the socket while
 *   more than 16 KiB are still to come) once rkey, bounds and access are checked,
 *   queues READ responses, answers RNR NAK when no receive is posted, NAK (and ERROR) on a violation.</li>
 * </ul>
 *
 * <p>Which thread runs it, one at a time: {@link QpDriver} (usually the application's polling thread).
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
final class QpEngine {
    private static final Logger LOG = LoggerFactory.getLogger(QpEngine.class);
    static final long RNR_DELAY_NS = 1_000_000L;
    static final long FINISH_BATCH_NS = 1_000_000_000L;
    static final long LINGER_NS = 1_000_000_000L;
    private static final long IDLE_SELECT_MS = 100;
    private static final Consumer<SelectionKey> IGNORE_KEY = k -> { };

    final SoftQp qp;
    final Selector selector;
    final Transmitter tx;
    final Receiver rx;
    final QpDriver driver;
    /** Torn down: nothing steps any more, the thread ends. */
    volatile boolean finished;
    private volatile SocketChannel pendingChannel;
    private volatile int pendingReadDepth = 1;
    volatile boolean stopRequested;

    SocketChannel ch;
    /** What {@link Receiver} reads: {@link #ch}, or the test hook's wrapper of it. */
    ScatteringByteChannel in;
    /**
     * Test hook: wraps the socket of every queue pair established while it is set, as its receive side's source (tests
     * cut the byte stream at chosen offsets with it). Null in production.
     */
    static volatile UnaryOperator<ScatteringByteChannel> readFilter;
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
        driver = new QpDriver(this, "soft-qp-" + qp.qpNum());
    }

    void start() {
        driver.start();
    }

    void establish(SocketChannel channel, int readDepth) {
        pendingReadDepth = Math.max(1, readDepth);
        pendingChannel = channel;
        wake();
    }

    void wake() {
        driver.wake();
    }

    /**
     * The transmit half of a step (the doorbell of a post): attach, send what is posted; no socket read. Holder only;
     * false when a full step is due instead (not connected yet, or ERROR).
     */
    boolean transmit() throws IOException {
        SocketChannel pc = pendingChannel;
        if (pc != null) {
            pendingChannel = null;
            attach(pc);
        }
        if (ch != null && !socketClosed && !inError && qp.state() != QpState.ERROR) {
            tx.write();
            return true;
        }
        return false;
    }

    long threadSteps() {
        return driver.threadSteps();
    }

    /** Stops the engine after it flushed and closed the socket; true when the thread ended within the timeout. */
    boolean shutdown(long timeoutNs) {
        stopRequested = true;
        driver.wake();
        return driver.join(timeoutNs);
    }

    /** The thread's last act: the socket and the selector are closed. */
    void close() {
        closeSocket();
        try {
            selector.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    /** The engine failed (a bug, or registered memory released under it): ERROR, flush, done. Holder only. */
    void failed(Throwable t) {
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

    /** One round of the engine: attach, read, write, teardown work. Holder only; true on progress. */
    boolean step() throws IOException {
        boolean progress = false;
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
            if (stopRequested && (ch == null || socketClosed) && sqCompleted == qp.sqTail && !qp.hasRecv()) {
                finished = true;
            }
        }
        return progress;
    }

    private void attach(SocketChannel c) throws IOException {
        ch = c;
        UnaryOperator<ScatteringByteChannel> f = readFilter;
        in = f == null ? c : f.apply(c);
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

    /**
     * Blocks in the selector up to {@code maxNs} (at least 1 ms; Long.MAX_VALUE: no bound of its own), after sending a
     * held-back ACK (nobody may step again before the peer needs it); returns at once when that write did something.
     */
    void select(long maxNs) throws IOException {
        if (ch != null && !socketClosed && !inError && tx.flushHeldAck()) {
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
    }

    /** True when a step would do something now (holder only). */
    boolean hasWork() {
        if (pendingChannel != null || (!inError && (qp.state() == QpState.ERROR || stopRequested))) {
            return true;
        }
        if (inError) {
            return (qp.sqTail != sqCompleted && (!tx.batchActive || socketClosed)) || qp.hasRecv();
        }
        if (ch == null || tx.batchActive) {
            return false;
        }
        if (tx.hasDueResponses()) {
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
                qp.completeSend(i, sqCompleted, WcStatus.SUCCESS);
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
            qp.completeSend(i, sqCompleted, status);
        }
        enterError();
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
    EmuMr remote(int rkey, long addr, long len, int access) {
        return qp.pd.remote(rkey, addr, len, access);
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
        long h = qp.flushSends(sqCompleted);
        if (h == sqCompleted) {
            return false;
        }
        sqCompleted = h;
        sqNext = h;
        return true;
    }

    boolean flushRq() {
        return qp.flushRecvs();
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
