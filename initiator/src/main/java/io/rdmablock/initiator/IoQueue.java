package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.CapsuleBuilder;
import io.rdmablock.nvmf.host.HostQueue;
import io.rdmablock.nvmf.host.QueueConnection;
import io.rdmablock.nvmf.host.QueueMemory;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * One I/O queue (qid >= 1) and the poller thread that owns it, run to completion: a thin layer on the
 * {@link HostQueue} engine of nvmf-host, which owns the command slots (cids, deadlines, capsules built in the queue's
 * registered {@link QueueMemory} with data placement and bounce buffers, {@link CapsuleBuilder}), the chained post,
 * the completion-queue reap with cid matching (stale responses dropped), the deadline scan and the fence. What is
 * this class's own: the thread and its idle strategy, the lock-free {@link SubmissionStack} application threads push
 * requests on, the FIFO of requests waiting for a slot (at most {@code entries - 1} outstanding, the SQHD rule; the
 * rest wait, never fail), the futures ({@link IoRequest}) and the mapping of NVMe status to exceptions, the
 * resubmission of outstanding requests after a lost association, and multipath's {@link PathEvents}. The engine's tag
 * of a command is its slot, which indexes the request table.
 *
 * <p>Timeouts ({@link HostQueue.OnTimeout#RESET}): a command outstanding past {@code commandTimeoutNs} fails with
 * {@link TimeoutException} (multipath: goes back to the multipath and the path is fenced) once the engine destroyed
 * the queue pair; the other outstanding commands go back to the head of the FIFO and the association is reset.
 *
 * <p>Connection changes are driven by the {@link Controller}: {@link #requestDetach()} (the poller puts every
 * outstanding command back at the head of its FIFO for resubmission and lets go of the connection),
 * {@link #attach}, {@link #setLost} (fail everything) and {@link #close()}.
 */
final class IoQueue implements Runnable {
    /** How long an idle poller keeps polling before it waits ({@link InitiatorConfiguration#SPIN_NS}). */
    private static final long SPIN_NS = InitiatorConfiguration.current().spinNs();
    private static final long AWAIT_NS = 10_000_000;
    /**
     * Work completions a poller takes per poll of its completion queue ({@link InitiatorConfiguration#POLL_BATCH}).
     * Between two polls it posts what the completions' callbacks submitted, so a burst of responses turns into a
     * stream of new capsules rather than one burst after the last response has been handled.
     */
    static final int POLL_BATCH = InitiatorConfiguration.current().pollBatch();
    /** How often, at most, the engine asks the CM for a disconnect event; also the idle park when detached. */
    private static final long SCAN_INTERVAL_NS = 50_000_000;
    /**
     * Times a command is put on the wire before a lost association fails it instead of resubmitting it (as the
     * Linux host's nvme_core.max_retries, default 5).
     */
    static final int MAX_ATTEMPTS = 5;
    /** Status code type 3h: path related status (NVMe Base 1.4 section 4.6.1.2.4). */
    static final int SCT_PATH = 3;
    private static final VarHandle CONN;

    static {
        try {
            CONN = MethodHandles.lookup().findVarHandle(IoQueue.class, "conn", QueueConnection.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final int qid;
    private final NvmeBlockDevice dev;
    final QueueMemory mem;
    /** The queue's mechanics; poller thread only (but for the counters). */
    private final HostQueue engine;
    /** The request in each engine slot (the engine's tag is the slot), else null. */
    private final IoRequest[] slotReq;
    private final SubmissionStack submissions = new SubmissionStack();
    private final ArrayDeque<IoRequest> pending = new ArrayDeque<>();
    private final long commandTimeoutNs;
    private final Thread thread;
    /**
     * Multipath only (else null): I/O this path will not complete goes back there instead of waiting for a reconnect
     * or failing; the slot deadline is then the path timeout and an expired one fences the path.
     */
    private final PathEvents events;

    /** The controller's hand-off of a connection; the engine's is the one the poller took. */
    private volatile QueueConnection conn;
    /** The namespace of {@link IoRequest#DEVICE_NSID} requests (the controller's choice, set on attach). */
    private volatile int nsid = 1;
    private volatile boolean detachRequested;
    private volatile Throwable lostCause;
    private volatile boolean closed;
    private volatile boolean exited;
    private volatile boolean sleeping;
    /** close() was called on the poller itself: the poller closes the engine once its loop ended. */
    private boolean closeOnExit;
    /**
     * Test hook: called by every poller after it read its connection (null when detached) and before it acts on it;
     * tests widen races with the controller with it. Null in production.
     */
    static volatile BiConsumer<IoQueue, QueueConnection> pollerHook;

    IoQueue(NvmeBlockDevice dev, ProtectionDomain pd, int qid, int entries, int inCapsuleBytes, int bounceBytes,
            long commandTimeoutNs) {
        this.dev = dev;
        this.qid = qid;
        int slots = entries - 1;
        this.mem = new QueueMemory(pd, slots, inCapsuleBytes, entries);
        this.engine = new HostQueue(qid, mem,
                new CapsuleBuilder(dev.buffers(), pd, mem, slots, inCapsuleBytes, bounceBytes), POLL_BATCH,
                new HostQueue.Policy(commandTimeoutNs, HostQueue.OnTimeout.RESET, SCAN_INTERVAL_NS), this::completed);
        this.commandTimeoutNs = commandTimeoutNs;
        this.events = dev.pathEvents();
        slotReq = new IoRequest[slots];
        thread = Thread.ofPlatform().daemon().name("rdmablock-ioq-" + qid).unstarted(this);
    }

    void start() {
        thread.start();
    }

    // ---- application side --------------------------------------------------------------------------------------

    /** READ/WRITE payloads this queue copied because their segment was not registered on its domain (tests). */
    long copiedTransfers() {
        return engine.copiedTransfers();
    }

    /** Hands {@code r} to the poller; never blocks. */
    void submit(IoRequest r) {
        submissions.push(r);
        if (exited) {
            failSubmissions(new DeviceLostException("device closed"));
        } else if (sleeping) {
            wake();
        }
    }

    /** True when the poller thread may access {@code segment} (not confined to another thread, still alive). */
    boolean canAccess(MemorySegment segment) {
        return segment.isAccessibleBy(thread) && segment.scope().isAlive();
    }

    long staleCompletions() {
        return engine.staleResponses();
    }

    // ---- controller side ---------------------------------------------------------------------------------------

    /**
     * Hands the poller a new connection; call only once {@link #isDetached()}. A detach request still pending was
     * for the previous connection: it is withdrawn, so the poller cannot drop the new one.
     */
    void attach(QueueConnection c, int inCapsuleBytes, int nsid) {
        engine.inCapsuleBytes(inCapsuleBytes);
        this.nsid = nsid;
        detachRequested = false;
        conn = c;
        wake();
    }

    void requestDetach() {
        detachRequested = true;
        wake();
    }

    /** The attached connection, null when detached (tests). */
    QueueConnection connection() {
        return conn;
    }

    /** True once the poller no longer uses a connection (it let go of it, or never had one). */
    boolean isDetached() {
        return conn == null;
    }

    void setLost(Throwable cause) {
        lostCause = cause;
        wake();
    }

    /** Stops the poller; outstanding and waiting I/O fail with {@link DeviceLostException}. Bounded wait. */
    void close() {
        closed = true;
        wake();
        if (Thread.currentThread() == thread) {
            closeOnExit = true; // from a completion callback, inside the engine: released on the poller's way out
            return;
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        engine.close(); // detached by the poller on its way out: releases the capsules and the queue memory
    }

    private void wake() {
        LockSupport.unpark(thread);
        QueueConnection c = conn;
        if (c != null) {
            c.cq().wakeup();
        }
    }

    // ---- poller ------------------------------------------------------------------------------------------------

    /** True on a device's poller or controller thread, where completion callbacks run. */
    static final ThreadLocal<Boolean> DEVICE_THREAD = ThreadLocal.withInitial(() -> Boolean.FALSE);

    @Override
    public void run() {
        DEVICE_THREAD.set(Boolean.TRUE);
        long idleSinceNs = 0;
        try {
            while (!closed) {
                takeSubmissions();
                Throwable lost = lostCause;
                if (lost != null) {
                    if (events != null) {
                        reroutePending();
                    } else {
                        failPending(lost);
                    }
                    LockSupport.parkNanos(SCAN_INTERVAL_NS);
                    continue;
                }
                QueueConnection c = conn;
                BiConsumer<IoQueue, QueueConnection> hook = pollerHook;
                if (hook != null) {
                    hook.accept(this, c);
                }
                if (c == null) {
                    if (events != null && !pending.isEmpty()) {
                        reroutePending(); // a multipath path does not hold I/O while it has no connection
                        continue;
                    }
                    // nothing to let go of: never write conn here, an attach may be landing right now
                    if (submissions.isEmpty() && conn == null && !closed && lostCause == null) {
                        LockSupport.parkNanos(SCAN_INTERVAL_NS);
                    }
                    continue;
                }
                if (detachRequested) {
                    detach(c);
                    continue;
                }
                QueueConnection held = engine.connection();
                if (held != c) {
                    if (held != null) {
                        detach(held); // the controller replaced it without waiting for this poller
                    }
                    engine.attach(c, false);
                }
                try {
                    long now = System.nanoTime();
                    boolean progress = submitPending(now);
                    int n = engine.poll(now);
                    if (engine.state() != HostQueue.State.LIVE) {
                        throw new QueueFailure(lossReason());
                    }
                    if (n > 0) {
                        progress = true;
                    }
                    if (progress) {
                        idleSinceNs = 0;
                    } else if (idleSinceNs == 0) {
                        idleSinceNs = now;
                    } else if (now - idleSinceNs > SPIN_NS) {
                        sleeping = true;
                        if (submissions.isEmpty() && !detachRequested && !closed && lostCause == null) {
                            n = engine.await(AWAIT_NS); // a failure seen here is delivered by the next poll
                            sleeping = false;
                            if (n > 0) {
                                idleSinceNs = 0;
                            }
                        }
                        sleeping = false;
                    } else {
                        Thread.onSpinWait();
                    }
                } catch (RuntimeException e) {
                    sleeping = false;
                    lose(c, e instanceof QueueFailure ? e.getMessage() : "qid " + qid + ": " + e);
                }
            }
        } finally {
            QueueConnection c = conn;
            if (c != null) {
                detach(c); // fences first (the engine destroys the queue pair), then hands back what was outstanding
            }
            exited = true;
            DeviceLostException ex = new DeviceLostException("device closed");
            failPending(ex);
            failSubmissions(ex);
            if (closeOnExit) {
                engine.close();
            }
        }
    }

    /** Why the engine left {@link HostQueue.State#LIVE}, as the controller is told. */
    private String lossReason() {
        if (engine.state() != HostQueue.State.BROKEN) {
            return engine.failure();
        }
        return events != null
                ? "qid " + qid + ": I/O outstanding past pathTimeoutMs=" + commandTimeoutNs / 1_000_000 + ", path fenced"
                : "qid " + qid + ": command timeout, resetting the association";
    }

    private void lose(QueueConnection c, String reason) {
        if (detach(c)) {
            dev.controller().reportLoss(reason);
        } // else the controller already replaced c (it gave up waiting for this poller): the new one is not at fault
    }

    private void takeSubmissions() {
        IoRequest r = submissions.drain();
        while (r != null) {
            IoRequest n = r.next;
            r.next = null;
            pending.addLast(r);
            r = n;
        }
    }

    private void failSubmissions(Throwable t) {
        IoRequest r = submissions.drain();
        while (r != null) {
            IoRequest n = r.next;
            r.next = null;
            r.fail(t);
            r = n;
        }
    }

    private void reroutePending() {
        IoRequest r;
        while ((r = pending.pollFirst()) != null) {
            events.reroute(dev, r, PathEvents.PATH_LOST);
        }
    }

    private void failPending(Throwable t) {
        IoRequest r;
        while ((r = pending.pollFirst()) != null) {
            r.fail(t);
        }
    }

    /**
     * Gives up the engine's connection: the engine destroys its queue pair and completes every outstanding command
     * as path lost, which puts it back at the head of the FIFO ({@link #completed}: a command already sent
     * {@link #MAX_ATTEMPTS} times fails instead, each of its attempts having ended in a lost association: retried
     * forever it would never complete while every reconnect succeeds). Multipath: the path is fenced and every
     * outstanding and waiting request goes back to the multipath. Only {@code c} is let go of as the queue's
     * connection: one the controller attached meanwhile stays.
     *
     * @return true when {@code c} was still the queue's connection
     */
    private boolean detach(QueueConnection c) {
        engine.detach();
        if (events != null) {
            events.fenced(dev);
        }
        boolean mine = c != null && CONN.compareAndSet(this, c, null);
        if (mine) {
            detachRequested = false;
        }
        if (events != null) {
            reroutePending();
        }
        return mine;
    }

    /**
     * Fills free engine slots from the FIFO and posts them as one chained post.
     *
     * @param now the poll round's clock: the commands' deadlines are now + commandTimeoutNs
     * @return true when something was posted
     * @throws QueueFailure when the post failed
     */
    private boolean submitPending(long now) {
        boolean any = false;
        while (engine.hasFree()) {
            IoRequest r = pending.pollFirst();
            if (r == null) {
                break;
            }
            if (r.parent == null && r.isDone()) {
                continue; // cancelled by the caller
            }
            int slot = engine.claim();
            try {
                engine.blockIo(slot, r.opcode, r.nsid == IoRequest.DEVICE_NSID ? nsid : r.nsid, r.slba,
                        r.blockCount, r.cdw12Flags, r.data, r.sglBytes, r.snapshotId, slot, now);
            } catch (IllegalStateException | IndexOutOfBoundsException | WrongThreadException e) {
                // the caller's segment is not accessible from this thread (confined arena) or was closed
                r.fail(new IllegalArgumentException("invalid buffer: not accessible from the queue's poller thread "
                        + "(use a shared or global arena, or allocateBuffer): " + e.getMessage(), e));
                continue;
            } catch (RuntimeException e) {
                // e.g. registering a bounce buffer failed: this request fails, it is never dropped
                r.fail(new BlockIoException("qid " + qid + ": could not prepare the command: " + e, e));
                continue;
            }
            slotReq[slot] = r;
            r.attempts++;
            any = true;
        }
        if (any && !engine.flush()) {
            throw new QueueFailure(engine.failure());
        }
        return any;
    }

    /** The engine's completion of the command in {@code slot}: maps its outcome onto the request. Poller only. */
    private void completed(int slot, int status) {
        IoRequest r = slotReq[slot];
        slotReq[slot] = null;
        if (r == null) {
            return;
        }
        if (status == NvmeStatus.SUCCESS) {
            if (r.opcode == Opcodes.IO_READ || r.opcode == Opcodes.IO_READ_SNAPSHOT) {
                try {
                    engine.copyOutBounce(slot, r.data);
                } catch (IllegalStateException | IndexOutOfBoundsException | WrongThreadException e) {
                    // the application released its buffer while the READ was outstanding: its error, not the link's
                    r.fail(new IllegalArgumentException("invalid buffer: released or made inaccessible while the "
                            + "READ was outstanding; data not delivered: " + e.getMessage(), e));
                    return;
                }
            }
            r.succeed();
            return;
        }
        if (status == HostQueue.STATUS_PATH_LOST) {
            if (events == null && r.attempts >= MAX_ATTEMPTS) {
                // the queue pair is destroyed already: no late data transfer for a request whose future fails
                r.fail(new BlockIoException(Opcodes.ioName(r.opcode) + " failed: qid=" + qid + ", slba=" + r.slba
                        + ", blockCount=" + r.blockCount + ": the association was lost during each of its "
                        + r.attempts + " attempts; not retried"));
            } else {
                pending.addFirst(r); // resubmitted on the next connection (multipath: handed back on detach)
            }
            return;
        }
        if (status == HostQueue.STATUS_TIMEOUT) {
            // the engine destroyed the queue pair first: no late RDMA WRITE/READ touches the buffer of a request whose
            // future fails (its caller owns the buffer again) or that another path runs again
            if (events != null) {
                events.fenced(dev);
                events.reroute(dev, r, PathEvents.PATH_LOST);
            } else {
                r.fail(new TimeoutException(Opcodes.ioName(r.opcode) + " timed out: qid=" + qid + ", slba=" + r.slba
                        + ", blockCount=" + r.blockCount + ", commandTimeoutMs=" + commandTimeoutNs / 1_000_000));
            }
            return;
        }
        if (events != null && NvmeStatus.sct(status) == SCT_PATH) {
            events.reroute(dev, r, status); // path related (ANA inaccessible, transition, persistent loss)
            return;
        }
        if (events != null && NotReadyRetries.retryable(status)) {
            events.notReady(dev, r, status); // not ready now, may be later (a replicated volume below minInSync)
            return;
        }
        if (NvmeStatus.sct(status) == NvmeStatus.SCT_GENERIC && NvmeStatus.sc(status) == NvmeStatus.SC_LBA_OUT_OF_RANGE) {
            dev.controller().refreshNamespace();
        }
        r.fail(new NvmeStatusException(Opcodes.ioName(r.opcode) + " failed: qid=" + qid + ", slba=" + r.slba
                + ", blockCount=" + r.blockCount + ": " + NvmeStatus.name(status),
                NvmeStatus.sct(status), NvmeStatus.sc(status), NvmeStatus.dnr(status)));
    }

    /** The queue's connection failed; the message says how. */
    static final class QueueFailure extends RuntimeException {
        QueueFailure(String message) {
            super(message, null, false, false);
        }
    }
}
