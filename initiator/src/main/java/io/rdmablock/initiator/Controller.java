package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.AdminCommands;
import io.rdmablock.nvmf.host.AnaLog;
import io.rdmablock.nvmf.host.NvmfStatusException;
import io.rdmablock.nvmf.host.NvmfHostException;
import io.rdmablock.nvmf.host.QueueConnection;
import io.rdmablock.nvmf.host.TargetLimits;
import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.WorkCompletion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The host side of one controller association and its lifetime: owns the admin queue (qid 0) on its own thread,
 * sends Keep Alive every KATO/2, serves Identify refreshes, and recovers from a lost association: every I/O queue
 * is detached (its outstanding commands wait for resubmission), the old queues are torn down, and a new association
 * (admin Connect, enable, Identify, I/O queue Connects) is tried every {@code reconnectDelayMs} until one succeeds
 * or {@code ctrlLossTimeoutMs} has passed since the loss, or until an attempt is rejected in a way that cannot
 * succeed on retry ({@link ReconnectPolicy#isPermanent}: NVMe status with DNR=1, NVMe/RDMA CM reject; when an earlier attempt of
 * the same loss found the node unreachable, such rejects are retried for {@link #RESTART_GRACE_NS} first, as a
 * restarting node listens before its subsystems exist); then every queue fails its I/O with
 * {@link DeviceLostException}. A loss is reported by the admin queue (failed completion, CM DISCONNECTED, Keep Alive
 * failure) or by any I/O poller ({@link #reportLoss}).
 */
final class Controller implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Controller.class, "state", AssociationState.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final NvmeBlockDevice dev;
    private final DeviceOptions opts;
    private final long timeoutNs;
    /** Bound of each setup step: connectTimeoutMs, shortened during reconnect so ctrlLossTimeoutMs is kept. */
    private long stepTimeoutNs;
    private final ConcurrentLinkedQueue<CompletableFuture<Void>> refreshes = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CompletableFuture<Integer>> anaReads = new ConcurrentLinkedQueue<>();
    /** Multipath only: where connection and ANA changes are reported; null for a single-path device. */
    private final PathEvents events;
    /** ANA state of the namespace's group as last read ({@link AnaLog#OPTIMIZED} ..), -1 while not connected. */
    private volatile int anaState = -1;
    private final WorkCompletion[] wcs = WorkCompletion.array(16);
    private final Thread thread;
    private volatile AssociationState state = AssociationState.LIVE;
    private volatile String lossReason;
    private QueueConnection admin;
    private QueueConnection[] ioConns;
    private long lossStartNs;
    private String lastError;
    /** Namespace choice and the identity a reconnect must find again. */
    private final TargetIdentity identity;
    private long nextKeepAliveNs;
    private volatile int reconnects;
    private volatile String lostMessage;
    /** A reconnect attempt of this loss failed for a transient reason (node down or unreachable). */
    private boolean transientSeen;
    /** When the first permanent reject after a transient failure arrived (0: none yet). */
    private long firstPermanentNs;
    /**
     * After the node was unreachable, permanent rejects keep being retried this long: a restarting node listens
     * before it has re-created its subsystems (it answers an unknown subnqn with DNR=1 meanwhile).
     */
    static final long RESTART_GRACE_NS = TimeUnit.SECONDS.toNanos(10);

    Controller(NvmeBlockDevice dev, DeviceOptions opts) {
        this.dev = dev;
        this.opts = opts;
        this.timeoutNs = TimeUnit.MILLISECONDS.toNanos(opts.connectTimeoutMs());
        this.stepTimeoutNs = timeoutNs;
        this.identity = new TargetIdentity(opts.nsid());
        this.events = dev.pathEvents();
        this.thread = Thread.ofPlatform().daemon().name("rdmablock-ctrl").unstarted(this);
    }

    AssociationState state() {
        return state;
    }

    /**
     * The message of the {@link DeviceLostException} once the controller is {@link AssociationState#LOST}, else null.
     */
    String lossMessage() {
        return lostMessage;
    }

    int reconnects() {
        return reconnects;
    }

    /** Connects the first association on the caller's thread; throws what failed. */
    void connectInitial() {
        connectAll();
        thread.start();
    }

    /** Asks for a reset of the association; safe from any thread. */
    void reportLoss(String reason) {
        if (lossReason == null) {
            lossReason = reason;
        }
        wake();
    }

    /** Re-reads Identify Namespace (resize); completes at once when there is no live association. */
    CompletableFuture<Void> refreshNamespace() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        AssociationState s = state;
        if (s == AssociationState.LOST || s == AssociationState.CLOSED) {
            f.complete(null);
            return f;
        }
        refreshes.add(f);
        s = state;
        if (s == AssociationState.LOST || s == AssociationState.CLOSED) {
            completeRefreshes(); // lost or closed meanwhile: its final completeRefreshes may have run before the add
        } else {
            wake();
        }
        return f;
    }

    /** The ANA state as last read, -1 while the association is down (multipath paths only). */
    int anaState() {
        return anaState;
    }

    /**
     * Re-reads the ANA log page on the admin queue's thread and completes with the namespace group's state
     * ({@link AnaLog#OPTIMIZED} ..; a target without ANA reporting counts as Optimized); -1 at once when there is no
     * live association, or when the read failed.
     */
    CompletableFuture<Integer> readAna() {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        if (state != AssociationState.LIVE) {
            f.complete(-1);
            return f;
        }
        anaReads.add(f);
        if (state != AssociationState.LIVE) {
            completeRefreshes();
        } else {
            wake();
        }
        return f;
    }

    /** Stops the controller thread (bounded wait); the queues are closed next, then {@link #release()}. */
    void stop() {
        state = AssociationState.CLOSED;
        wake();
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(timeoutNs / 1_000_000 * 4 + 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        completeRefreshes();
    }

    /** Disconnects and destroys every queue connection; call after the pollers stopped. */
    void release() {
        closeConnections();
        completeRefreshes();
    }

    private void wake() {
        LockSupport.unpark(thread);
        QueueConnection a = admin;
        if (a != null) {
            try {
                a.cq().wakeup();
            } catch (RuntimeException ignored) {
                // the CQ may be closing
            }
        }
    }

    // ---- controller thread ---------------------------------------------------------------------------------------

    @Override
    public void run() {
        IoQueue.DEVICE_THREAD.set(Boolean.TRUE);
        nextKeepAliveNs = System.nanoTime() + keepAliveIntervalNs();
        while (true) {
            AssociationState s = state;
            if (s == AssociationState.CLOSED || s == AssociationState.LOST) {
                return;
            }
            try {
                if (s == AssociationState.LIVE) {
                    String reason = lossReason;
                    if (reason == null) {
                        reason = serviceAdmin();
                    }
                    if (reason != null && state == AssociationState.LIVE) {
                        startRecovery(reason);
                    }
                } else {
                    attemptReconnect();
                }
            } catch (RuntimeException e) {
                LOG.error("controller thread: unexpected failure", e);
                reportLoss("controller: " + e);
            }
        }
    }

    private long keepAliveIntervalNs() {
        return opts.keepAliveTimeoutMs() == 0 ? Long.MAX_VALUE / 4
                : TimeUnit.MILLISECONDS.toNanos(opts.keepAliveTimeoutMs()) / 2;
    }

    /** One round of admin-queue service; returns a loss reason or null. */
    private String serviceAdmin() {
        QueueConnection a = admin;
        long wait = Math.min(nextKeepAliveNs - System.nanoTime(), 100_000_000L);
        try {
            int n = wait > 0 ? a.cq().await(wcs, wcs.length, wait) : a.cq().poll(wcs, wcs.length);
            QueueConnection.Completion event = a.takeAsyncEvent(); // seen by an earlier execSync
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                if (!wc.ok()) {
                    return "admin queue failed: " + wc.status;
                }
                if ((wc.wrId & QueueConnection.TAG_MASK) == QueueConnection.RECV_TAG) {
                    int index = (int) (wc.wrId & 0xFFFFFFFFL);
                    MemorySegment cqe = a.memory().cqe(index);
                    if (CqeDescriptor.cid(cqe) == QueueConnection.AER_CID) {
                        event = new QueueConnection.Completion(CqeDescriptor.dw0(cqe), 0, CqeDescriptor.status(cqe));
                    }
                    a.qp().postRecv(a.recvWr(index)); // otherwise a late response: dropped
                }
            }
            if (event != null) {
                onAsyncEvent(a, event);
            }
            if (a.disconnectedEvent()) {
                return "admin queue disconnected by the node";
            }
            if (!refreshes.isEmpty()) {
                java.util.List<CompletableFuture<Void>> waiting = new java.util.ArrayList<>();
                CompletableFuture<Void> f;
                while ((f = refreshes.poll()) != null) {
                    waiting.add(f);
                }
                try {
                    identifyNamespace(a);
                } finally {
                    waiting.forEach(w -> w.complete(null)); // on failure the caller sees the old size
                }
            }
            if (!anaReads.isEmpty()) {
                java.util.List<CompletableFuture<Integer>> waiting = new java.util.ArrayList<>();
                CompletableFuture<Integer> f;
                while ((f = anaReads.poll()) != null) {
                    waiting.add(f);
                }
                int st = -1;
                try {
                    st = readAnaState(a);
                } finally {
                    int v = st;
                    waiting.forEach(w -> w.complete(v));
                }
            }
            if (System.nanoTime() - nextKeepAliveNs >= 0) {
                return keepAlive(a);
            }
            return null;
        } catch (RuntimeException e) {
            if (state == AssociationState.CLOSED) {
                return null;
            }
            return "admin queue: " + e.getMessage();
        }
    }

    /**
     * An Asynchronous Event completed: a notice (type 2) "namespace attribute changed" (info 0) re-reads Identify
     * Namespace (resize, C11); then a new request is posted. An error status (e.g. not supported) ends the AERs.
     */
    private void onAsyncEvent(QueueConnection a, QueueConnection.Completion event) {
        if (event.status() != NvmeStatus.SUCCESS) {
            LOG.debug("Asynchronous Event Request answered {}; not reposted", NvmeStatus.describe(event.status()));
            return;
        }
        int type = event.dw0() & 0x7;
        int info = (event.dw0() >>> 8) & 0xFF;
        if (type == 2 && info == 0) {
            int st = AdminCommands.readChangedNamespaceLog(a, stepTimeoutNs); // re-arms the notice (nvmet)
            if (st != NvmeStatus.SUCCESS) {
                LOG.debug("Get Log Page changed namespaces answered {}", NvmeStatus.describe(st));
            }
            identifyNamespace(a);
        } else if (events != null && type == AdminCommands.AEN_TYPE_NOTICE && info == AdminCommands.AEN_INFO_ANA_CHANGE) {
            int st = readAnaState(a); // also re-arms the notice
            LOG.info("{} ({}): ANA change notice, state now {}", dev.address(), dev.subnqn(), AnaLog.stateName(st));
            events.anaChanged(dev);
        }
        AdminCommands.postAsyncEventRequest(a);
    }

    /**
     * Get Log Page ANA: the state of the group holding this device's namespace; a target answering an error status
     * does not report ANA (a plain target) and counts as Optimized.
     */
    private int readAnaState(QueueConnection a) {
        int st;
        try {
            st = AdminCommands.readAnaLog(a, stepTimeoutNs).stateOf(identity.nsid());
        } catch (NvmfStatusException e) {
            st = AnaLog.OPTIMIZED;
        }
        anaState = st;
        return st;
    }


    /** Sends one Keep Alive on the admin queue and waits for it; returns a loss reason or null. */
    private String keepAlive(QueueConnection a) {
        QueueConnection.Completion r = AdminCommands.keepAlive(a, keepAliveWaitNs());
        if (r.status() != NvmeStatus.SUCCESS) {
            return "keep alive failed: " + NvmeStatus.describe(r.status());
        }
        nextKeepAliveNs = System.nanoTime() + keepAliveIntervalNs();
        return null;
    }

    private long keepAliveWaitNs() {
        return Math.max(timeoutNs, keepAliveIntervalNs());
    }

    private void startRecovery(String reason) {
        lossStartNs = System.nanoTime();
        if (!STATE.compareAndSet(this, AssociationState.LIVE, AssociationState.RECONNECTING)) {
            return; // closed meanwhile: never overwrite CLOSED
        }
        LOG.warn("association with {} ({}) lost: {}; reconnecting every {} ms, controller-loss timeout {} ms",
                dev.address(), dev.subnqn(), reason, opts.reconnectDelayMs(), opts.ctrlLossTimeoutMs());
        detachAll();
        closeConnections();
        anaState = -1;
        completeAnaReads();
        if (events != null) {
            events.connectionChanged(dev, false);
        }
        lossReason = null;
        lastError = reason;
        transientSeen = false;
        firstPermanentNs = 0;
    }

    private void detachAll() {
        for (IoQueue q : dev.queues()) {
            q.requestDetach();
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (IoQueue q : dev.queues()) {
            while (!q.isDetached() && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(1_000_000);
            }
            if (!q.isDetached()) {
                LOG.error("qid {} did not detach within 10 s", q.qid);
            }
        }
    }

    private void attemptReconnect() {
        long lossTimeoutNs = TimeUnit.MILLISECONDS.toNanos(opts.ctrlLossTimeoutMs());
        long deadline = lossStartNs + lossTimeoutNs;
        long wakeAt = Math.min(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(opts.reconnectDelayMs()), deadline);
        while (state == AssociationState.RECONNECTING && System.nanoTime() - wakeAt < 0) {
            LockSupport.parkNanos(wakeAt - System.nanoTime());
        }
        if (state != AssociationState.RECONNECTING) {
            return;
        }
        if (System.nanoTime() - deadline >= 0) {
            declareLost();
            return;
        }
        try {
            stepTimeoutNs = Math.max(100_000_000L, Math.min(timeoutNs, deadline - System.nanoTime()));
            connectAll();
            stepTimeoutNs = timeoutNs;
            reconnects++;
            LOG.info("association with {} ({}) restored after {} ms", dev.address(), dev.subnqn(),
                    (System.nanoTime() - lossStartNs) / 1_000_000);
        } catch (RuntimeException e) {
            lastError = e.getMessage();
            closeConnections();
            boolean permanent = ReconnectPolicy.isPermanent(e);
            if (!permanent) {
                transientSeen = true;
                firstPermanentNs = 0;
            } else if (transientSeen && !(e instanceof IdentityChangedException)) {
                long now = System.nanoTime();
                if (firstPermanentNs == 0) {
                    firstPermanentNs = now;
                }
                permanent = now - firstPermanentNs >= RESTART_GRACE_NS;
            }
            if (permanent) {
                LOG.warn("reconnect to {} rejected for good, not retrying: {}", dev.address(), e.getMessage());
                declareLost("controller lost: reconnect to " + dev.address() + " (" + dev.subnqn()
                        + ") rejected and cannot succeed on retry: " + e.getMessage());
                return;
            }
            LOG.warn("reconnect to {} failed: {}", dev.address(), e.getMessage());
        }
    }

    private void declareLost() {
        declareLost("controller lost: no association with " + dev.address() + " (" + dev.subnqn()
                + ") for ctrlLossTimeoutMs=" + opts.ctrlLossTimeoutMs() + "; last error: " + lastError);
    }

    private void declareLost(String message) {
        lostMessage = message;
        if (!STATE.compareAndSet(this, AssociationState.RECONNECTING, AssociationState.LOST)) {
            return; // closed meanwhile: close() fails the I/O
        }
        DeviceLostException ex = new DeviceLostException(message);
        LOG.error(ex.getMessage());
        for (IoQueue q : dev.queues()) {
            q.setLost(ex);
        }
        completeRefreshes();
        if (events != null) {
            events.connectionChanged(dev, false);
        }
    }

    private void completeRefreshes() {
        CompletableFuture<Void> f;
        while ((f = refreshes.poll()) != null) {
            f.complete(null);
        }
        completeAnaReads();
    }

    private void completeAnaReads() {
        CompletableFuture<Integer> f;
        while ((f = anaReads.poll()) != null) {
            f.complete(-1);
        }
    }

    // ---- association setup ---------------------------------------------------------------------------------------

    /**
     * Connects admin queue, reads CAP, enables the controller (CC, wait for CSTS.RDY within CAP.TO), identifies
     * controller and namespace, asks for the I/O queues (Set Features Number of Queues), connects and attaches every
     * I/O queue. Limits the target states (CAP.MQES, MAXCMD, MDTS, IOCCSZ/ICDOFF/SGLS) are applied on the first
     * association; a reconnect that grants less than the queues already built fails (transient).
     */
    private void connectAll() {
        try {
            connectAssociation();
        } catch (NvmfHostException e) {
            throw HostErrors.translate(e);
        }
    }

    private void connectAssociation() {
        QueueConnection.ConnectParams adminParams = new QueueConnection.ConnectParams(dev.subnqn(), dev.hostnqn(),
                dev.hostId(), (int) opts.keepAliveTimeoutMs())
                .withDhchap(opts.dhchapSecret(), opts.dhchapCtrlSecret());
        CmId id = dev.provider().createId();
        QueueConnection a;
        try {
            id.resolve(dev.address(), stepTimeoutNs);
            dev.ensureDeviceResources(id.device(), opts.adminQueueEntries());
            a = QueueConnection.establish(id, dev.pd(), dev.adminMemory(), 0, opts.adminQueueEntries(),
                    ConnectDataDescriptor.CNTLID_DYNAMIC, adminParams, stepTimeoutNs);
        } catch (RuntimeException e) {
            id.close();
            throw e;
        }
        admin = a;
        long cap = AdminCommands.readCapAndEnable(a, stepTimeoutNs, stepTimeoutNs);
        IdentifyControllerDescriptor.Info ctrl = identity.identifyController(a, dev.subnqn(), stepTimeoutNs);
        TargetLimits limits = TargetLimits.of(cap, a.memory().identify(), ctrl);
        dev.controllerIdentified(ctrl, limits);
        identity.chooseNamespace(a, stepTimeoutNs);
        identifyNamespace(a);
        int granted = AdminCommands.setNumberOfQueues(a, opts.ioQueues(), stepTimeoutNs);
        dev.ensureQueues(ctrl, limits, Math.min(granted, opts.ioQueues()));
        IoQueue[] queues = dev.queues();
        if (granted < queues.length || limits.maxQueueEntries() < queues[0].mem.entries()) {
            throw new BlockIoException("connect: the controller now grants " + granted + " I/O queues of at most "
                    + limits.maxQueueEntries() + " entries; this device has " + queues.length + " of "
                    + queues[0].mem.entries());
        }
        QueueConnection[] conns = new QueueConnection[queues.length];
        ioConns = conns;
        QueueConnection.ConnectParams ioParams = new QueueConnection.ConnectParams(dev.subnqn(), dev.hostnqn(),
                dev.hostId(), 0).withDhchap(opts.dhchapSecret(), opts.dhchapCtrlSecret());
        nextKeepAliveNs = System.nanoTime() + keepAliveIntervalNs();
        for (int i = 0; i < queues.length; i++) {
            // connecting many I/O queues over a slow fabric can take longer than KATO: keep the association alive
            if (System.nanoTime() - nextKeepAliveNs >= 0) {
                String failed = keepAlive(a);
                if (failed != null) {
                    throw new BlockIoException("connect: " + failed + " before I/O queue " + queues[i].qid);
                }
            }
            conns[i] = QueueConnection.connect(dev.provider(), dev.address(), dev.pd(), queues[i].mem, queues[i].qid,
                    queues[i].mem.entries(), a.cntlid(), ioParams, stepTimeoutNs);
        }
        lossReason = null;
        // LIVE only from RECONNECTING (the first connect starts LIVE): close() may have set CLOSED meanwhile, and a
        // late success must neither revive the controller nor hand the queues connections close() does not tear down
        if (!STATE.compareAndSet(this, AssociationState.RECONNECTING, AssociationState.LIVE) && state != AssociationState.LIVE) {
            throw new BlockIoException("connect: the device was closed meanwhile");
        }
        if (events != null) {
            readAnaState(a);
        }
        for (int i = 0; i < queues.length; i++) {
            queues[i].attach(conns[i], limits.inCapsuleBytes(), identity.nsid());
        }
        AdminCommands.postAsyncEventRequest(a);
        nextKeepAliveNs = System.nanoTime() + keepAliveIntervalNs();
        if (events != null) {
            events.connectionChanged(dev, true);
        }
    }

    private void identifyNamespace(QueueConnection a) {
        dev.namespaceIdentified(identity.identifyNamespace(a, dev.capacityBytes() == 0 ? 0 : dev.lbaSize(),
                stepTimeoutNs));
    }

    private void closeConnections() {
        QueueConnection a = admin;
        admin = null;
        if (a != null) {
            closeQuietly(a);
        }
        QueueConnection[] conns = ioConns;
        ioConns = null;
        if (conns != null) {
            for (QueueConnection c : conns) {
                if (c != null) {
                    closeQuietly(c);
                }
            }
        }
    }

    private static void closeQuietly(QueueConnection c) {
        try {
            c.close();
        } catch (RuntimeException e) {
            LOG.debug("closing qid {}: {}", c.qid(), e.toString());
        }
    }
}
