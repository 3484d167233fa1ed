package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.CapsuleBuilder;
import io.rdmablock.nvmf.host.CidAllocator;
import io.rdmablock.nvmf.host.QueueConnection;
import io.rdmablock.nvmf.host.QueueMemory;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;

/**
 * One I/O queue (qid >= 1) and the poller thread that owns it, run to completion: it takes requests that
 * application threads pushed on the lock-free {@link SubmissionStack}, puts them in free command slots (at most
 * {@code entries - 1} outstanding, the SQHD rule; the rest wait in a local FIFO, never fail), posts their capsules
 * as one chained post, polls the completion queue, matches responses by cid ({@link CidAllocator}, stale cids are
 * dropped) and completes the futures. Everything per slot is preallocated: capsule (SQE + in-capsule data) in the
 * queue's registered {@link QueueMemory}, its send work request, and — on first need — a registered bounce buffer.
 *
 * <p>Capsules and data placement: {@link CapsuleBuilder}.
 *
 * <p>Connection changes are driven by the {@link Controller}: {@link #requestDetach()} (the poller puts every
 * outstanding command back at the head of its FIFO for resubmission and lets go of the connection),
 * {@link #attach}, {@link #setLost} (fail everything) and {@link #close()}.
 */
final class IoQueue implements Runnable {
    /**
     * How long an idle poller keeps polling before it waits for a completion event (system property
     * {@code rdmablock.initiator.spinNs}). Default 0: on machines where host, node and disk share a few cores the
     * spin costs more than the wake-up (measured 2-4.5 us vs 5-11 us poller CPU per 4 KiB I/O at QD32, same IOPS).
     */
    private static final long SPIN_NS = Long.getLong("rdmablock.initiator.spinNs", 0);
    private static final long AWAIT_NS = 10_000_000;
    /**
     * Work completions a poller takes per poll of its completion queue (system property
     * {@code rdmablock.initiator.pollBatch}, 1..64, default 16). Between two polls it posts what the completions'
     * callbacks submitted, so a burst of responses turns into a stream of new capsules rather than one burst after
     * the last response has been handled. Measured (docs/bench.md "Initiator poll batch"): 4K QD32 through a node on
     * a disk, 16 vs 64, randread 50-52k vs 44-47k IOPS, randwrite 65-78k vs 59k.
     *
     * @throws IllegalArgumentException (at class initialization) when the property is outside 1..64
     */
    static final int POLL_BATCH = pollBatch(Integer.getInteger("rdmablock.initiator.pollBatch", 16));
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

    /** {@code n} when it is a valid {@link #POLL_BATCH}, else IllegalArgumentException naming the property and bounds. */
    static int pollBatch(int n) {
        if (n < 1 || n > 64) {
            throw new IllegalArgumentException("invalid rdmablock.initiator.pollBatch: " + n + " (must be 1..64)");
        }
        return n;
    }

    final int qid;
    private final NvmeBlockDevice dev;
    final QueueMemory mem;
    private final int slots;
    private final CidAllocator cids;
    private final IoRequest[] slotReq;
    private final long[] slotDeadlineNs;
    private final CapsuleBuilder capsules;
    private final SubmissionStack submissions = new SubmissionStack();
    private final ArrayDeque<IoRequest> pending = new ArrayDeque<>();
    private final WorkCompletion[] wcs = WorkCompletion.array(POLL_BATCH);
    private final QueueConnection.ResponseConsumer completer = this::complete;
    private final long commandTimeoutNs;
    private final Thread thread;
    /**
     * Multipath only (else null): I/O this path will not complete goes back there instead of waiting for a reconnect
     * or failing; the slot deadline is then the path timeout and an expired one fences the path.
     */
    private final PathEvents events;

    private volatile QueueConnection conn;
    /** The namespace of {@link IoRequest#DEVICE_NSID} requests (the controller's choice, set on attach). */
    private volatile int nsid = 1;
    private volatile boolean detachRequested;
    private volatile Throwable lostCause;
    private volatile boolean closed;
    private volatile boolean exited;
    private volatile boolean sleeping;
    private volatile long staleCompletions;
    private long lastScanNs;
    /**
     * Test hook: called by every poller after it read its connection (null when detached) and before it acts on it;
     * tests widen races with the controller with it. Null in production.
     */
    static volatile BiConsumer<IoQueue, QueueConnection> pollerHook;

    IoQueue(NvmeBlockDevice dev, ProtectionDomain pd, int qid, int entries, int inCapsuleBytes, int bounceBytes,
            long commandTimeoutNs) {
        this.dev = dev;
        this.qid = qid;
        this.slots = entries - 1;
        this.cids = new CidAllocator(slots);
        this.mem = new QueueMemory(pd, slots, inCapsuleBytes, entries);
        this.capsules = new CapsuleBuilder(dev.buffers(), pd, mem, slots, inCapsuleBytes, bounceBytes);
        this.commandTimeoutNs = commandTimeoutNs;
        this.events = dev.pathEvents();
        slotReq = new IoRequest[slots];
        slotDeadlineNs = new long[slots];
        thread = Thread.ofPlatform().daemon().name("rdmablock-ioq-" + qid).unstarted(this);
    }

    void start() {
        thread.start();
    }

    // ---- application side --------------------------------------------------------------------------------------

    /** READ/WRITE payloads this queue copied because their segment was not registered on its domain (tests). */
    long copiedTransfers() {
        return capsules.copiedTransfers();
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
        return staleCompletions;
    }

    // ---- controller side ---------------------------------------------------------------------------------------

    /**
     * Hands the poller a new connection; call only once {@link #isDetached()}. A detach request still pending was
     * for the previous connection: it is withdrawn, so the poller cannot drop the new one.
     */
    void attach(QueueConnection c, int inCapsuleBytes, int nsid) {
        capsules.inCapsuleBytes(inCapsuleBytes);
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
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        capsules.close();
        mem.close();
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
                try {
                    boolean progress = submitPending(c);
                    int n = c.cq().poll(wcs, wcs.length);
                    if (n > 0) {
                        progress = true;
                        process(c, n);
                    }
                    long now = System.nanoTime();
                    if (now - lastScanNs >= SCAN_INTERVAL_NS) {
                        lastScanNs = now;
                        scan(c, now);
                    }
                    if (progress) {
                        idleSinceNs = 0;
                    } else if (idleSinceNs == 0) {
                        idleSinceNs = now;
                    } else if (now - idleSinceNs > SPIN_NS) {
                        sleeping = true;
                        if (submissions.isEmpty() && !detachRequested && !closed && lostCause == null) {
                            n = c.cq().await(wcs, wcs.length, AWAIT_NS);
                            sleeping = false;
                            if (n > 0) {
                                process(c, n);
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
                c.destroyQueuePair(); // before the outstanding commands fail below (see scan)
                detach(c);
            }
            exited = true;
            DeviceLostException ex = new DeviceLostException("device closed");
            failPending(ex);
            failSubmissions(ex);
        }
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
     * Gives up connection {@code c}: outstanding commands go back to the head of the FIFO; their cids are retired.
     * A command already sent {@link #MAX_ATTEMPTS} times fails instead (each of its attempts ended in a lost
     * association: retried forever it would never complete while every reconnect succeeds). Only {@code c} is let
     * go of: a connection the controller attached meanwhile stays.
     *
     * @return true when {@code c} was still the queue's connection
     */
    private boolean detach(QueueConnection c) {
        if (events != null) {
            return detachPath(c);
        }
        java.util.List<IoRequest> exhausted = null;
        for (int s = slots - 1; s >= 0; s--) {
            if (cids.busy(s)) {
                IoRequest r = slotReq[s];
                slotReq[s] = null;
                cids.release(s);
                if (r == null) {
                    continue;
                }
                if (r.attempts >= MAX_ATTEMPTS) {
                    if (exhausted == null) {
                        exhausted = new java.util.ArrayList<>();
                    }
                    exhausted.add(r);
                } else {
                    pending.addFirst(r);
                }
            }
        }
        if (exhausted != null) {
            c.destroyQueuePair(); // no late data transfer for a request whose future fails (see scan)
            for (IoRequest r : exhausted) {
                r.fail(new BlockIoException(Opcodes.ioName(r.opcode) + " failed: qid=" + qid + ", slba=" + r.slba
                        + ", blockCount=" + r.blockCount + ": the association was lost during each of its "
                        + r.attempts + " attempts; not retried"));
            }
        }
        if (CONN.compareAndSet(this, c, null)) {
            detachRequested = false;
            return true;
        }
        return false;
    }

    /**
     * Multipath: fences {@code c} (its queue pair is destroyed first, so no late RDMA transfer of the old connection
     * can reach a buffer once its command is resubmitted elsewhere), then hands every outstanding and waiting request
     * back to the multipath.
     */
    private boolean detachPath(QueueConnection c) {
        c.destroyQueuePair();
        events.fenced(dev);
        for (int s = slots - 1; s >= 0; s--) {
            if (cids.busy(s)) {
                IoRequest r = slotReq[s];
                slotReq[s] = null;
                cids.release(s);
                if (r != null) {
                    pending.addFirst(r);
                }
            }
        }
        boolean mine = CONN.compareAndSet(this, c, null);
        if (mine) {
            detachRequested = false;
        }
        reroutePending();
        return mine;
    }

    private boolean submitPending(QueueConnection c) {
        SendWr head = null;
        SendWr tail = null;
        long now = 0;
        while (cids.hasFree()) {
            IoRequest r = pending.pollFirst();
            if (r == null) {
                break;
            }
            if (r.parent == null && r.isDone()) {
                continue; // cancelled by the caller
            }
            if (now == 0) {
                now = System.nanoTime();
            }
            int slot = cids.allocate();
            SendWr wr;
            try {
                wr = capsules.prepareBlockIo(slot, cids.cid(slot), r.opcode,
                        r.nsid == IoRequest.DEVICE_NSID ? nsid : r.nsid, r.slba, r.blockCount, r.cdw12Flags, r.data,
                        r.sglBytes);
            } catch (IllegalStateException | IndexOutOfBoundsException | WrongThreadException e) {
                // the caller's segment is not accessible from this thread (confined arena) or was closed
                cids.release(slot);
                r.fail(new IllegalArgumentException("invalid buffer: not accessible from the queue's poller thread "
                        + "(use a shared or global arena, or allocateBuffer): " + e.getMessage(), e));
                continue;
            } catch (RuntimeException e) {
                // e.g. registering a bounce buffer failed: this request fails, it is never dropped
                cids.release(slot);
                r.fail(new BlockIoException("qid " + qid + ": could not prepare the command: " + e, e));
                continue;
            }
            slotReq[slot] = r;
            slotDeadlineNs[slot] = now + commandTimeoutNs;
            r.attempts++;
            wr.next = null;
            if (head == null) {
                head = wr;
            } else {
                tail.next = wr;
            }
            tail = wr;
        }
        if (head == null) {
            return false;
        }
        try {
            c.qp().postSend(head);
        } catch (RuntimeException e) {
            throw new QueueFailure("qid " + qid + ": post send failed: " + e.getMessage());
        }
        return true;
    }

    private void process(QueueConnection c, int n) {
        String failed = c.processCompletions(wcs, n, completer);
        if (failed != null) {
            throw new QueueFailure("qid " + qid + ": " + failed);
        }
    }

    private void complete(MemorySegment cqe) {
        int slot = cids.lookup(CqeDescriptor.cid(cqe));
        if (slot < 0) {
            staleCompletions++;
            return;
        }
        int status = CqeDescriptor.status(cqe);
        IoRequest r = slotReq[slot];
        slotReq[slot] = null;
        cids.release(slot);
        if (status == NvmeStatus.SUCCESS) {
            if (r.opcode == Opcodes.IO_READ) {
                try {
                    capsules.copyOutBounce(slot, r.data);
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

    /** Command timeouts and CM events, every {@link #SCAN_INTERVAL_NS}. */
    private void scan(QueueConnection c, long now) {
        if (c.disconnectedEvent()) {
            throw new QueueFailure("qid " + qid + ": disconnected by the node");
        }
        if (commandTimeoutNs <= 0 || cids.inUse() == 0) {
            return;
        }
        java.util.List<IoRequest> timedOut = null;
        for (int s = 0; s < slots; s++) {
            if (cids.busy(s) && now - slotDeadlineNs[s] > 0) {
                IoRequest r = slotReq[s];
                slotReq[s] = null;
                cids.release(s);
                if (timedOut == null) {
                    timedOut = new java.util.ArrayList<>();
                }
                if (r != null) {
                    timedOut.add(r);
                }
            }
        }
        if (timedOut == null) {
            return;
        }
        // the node may still answer: destroy the queue pair first, so no late RDMA WRITE/READ touches the buffer of
        // a request whose future failed (its caller owns the buffer again) or that another path runs again
        c.destroyQueuePair();
        if (events != null) {
            events.fenced(dev);
            for (IoRequest r : timedOut) {
                events.reroute(dev, r, PathEvents.PATH_LOST);
            }
            throw new QueueFailure("qid " + qid + ": I/O outstanding past pathTimeoutMs=" + commandTimeoutNs / 1_000_000
                    + ", path fenced");
        }
        for (IoRequest r : timedOut) {
            r.fail(new TimeoutException(Opcodes.ioName(r.opcode) + " timed out: qid=" + qid + ", slba=" + r.slba
                    + ", blockCount=" + r.blockCount + ", commandTimeoutMs=" + commandTimeoutNs / 1_000_000));
        }
        throw new QueueFailure("qid " + qid + ": command timeout, resetting the association");
    }

    /** The queue's connection failed; the message says how. */
    static final class QueueFailure extends RuntimeException {
        QueueFailure(String message) {
            super(message, null, false, false);
        }
    }
}
