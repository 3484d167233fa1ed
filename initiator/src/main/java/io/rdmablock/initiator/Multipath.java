package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.AnaLog;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * The paths of a replicated volume and the choice among them (docs/failover.md, "Initiator multipath"). Every I/O
 * goes to the active path, the one whose ANA state is Optimized: {@link #submit} reads one volatile field and puts the
 * request on that path's queue, without a lock or a new object. Everything else runs on the failover thread, which
 * may take the lock:
 *
 * <ul>
 *   <li>Triggers: a path's queue hands back I/O ({@link #reroute}: the path was fenced after an I/O outstanding past
 *   {@code pathTimeoutMs}, its association was lost, or a command was answered SCT 3h), its association went down,
 *   or an ANA Change notice arrived.</li>
 *   <li>Failover: the ANA log is re-read on every live path (each bounded by {@link #ANA_WAIT_NS}); the active path
 *   stays when still Optimized, else the first Optimized path in record order (primary first) takes over. With none,
 *   new I/O is held, the primary is reported unreachable to the management plane (errors are logged once, never
 *   fatal), the volume record is re-read (new copies are connected) and the check repeats every 100 ms until
 *   {@code failoverTimeoutMs}; then every held and later I/O fails with {@link DeviceLostException}.</li>
 *   <li>Resubmission: held I/O goes to the new path in submission order ({@link IoRequest#seq}). A request comes
 *   back only after its old path can no longer move its data (queue pair destroyed, or the command completed), so
 *   a late RDMA transfer of a paused old primary cannot reach a buffer reused by the new attempt. An I/O that
 *   failed over {@link #MAX_ATTEMPTS} times fails. SCT 3h/03h (ANA transition) on a path the log still calls
 *   Optimized is retried on it after {@link #TRANSITION_DELAY_MS}.</li>
 *   <li>Namespace Not Ready with DNR clear (the volume below {@code minInSync}): sent again every
 *   {@link NotReadyRetries#DELAY_MS} on the active path until it has been answered so for {@code failoverTimeoutMs}
 *   ({@link NotReadyRetries}).</li>
 * </ul>
 */
final class Multipath implements PathEvents, NvmeBlockDevice.Router {
    private static final Logger LOG = LoggerFactory.getLogger(Multipath.class);
    static final long RETRY_NS = TimeUnit.MILLISECONDS.toNanos(100);
    static final long ANA_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(500);
    static final long TRANSITION_DELAY_MS = 100;
    static final long REPORT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);
    /** Times one request is put on a path's wire before a path failure fails it instead of moving it. */
    static final int MAX_ATTEMPTS = 16;

    private final String name;
    private final String subnqn;
    private final String hostnqn;
    private final DeviceOptions opts;
    private final CopySource source;
    private final CopyOnWriteArrayList<Path> paths = new CopyOnWriteArrayList<>();
    private volatile Path active;
    private final Object lock = new Object();
    private ArrayList<IoRequest> held = new ArrayList<>();
    private volatile DeviceLostException lost;
    private volatile boolean closed;
    private final AtomicBoolean triggered = new AtomicBoolean();
    private volatile boolean transitionSeen;
    private final Thread thread;
    private volatile long epoch;
    private volatile String primaryNodeId;
    private boolean reportErrorLogged;
    private boolean readErrorLogged;
    private volatile int failovers;
    private final PathBuffers buffers;
    private final NotReadyRetries notReady;

    Multipath(String name, String subnqn, String hostnqn, DeviceOptions opts, CopySource source,
              CopySource.Copies copies) {
        this.name = name;
        this.subnqn = subnqn;
        this.hostnqn = hostnqn;
        this.opts = opts;
        this.source = source;
        this.buffers = new PathBuffers(opts.maxBufferBytes());
        this.notReady = new NotReadyRetries(opts.failoverTimeoutMs());
        this.epoch = copies.epoch();
        this.primaryNodeId = copies.primaryNodeId();
        for (CopySource.Copy c : copies.copies()) {
            if (pathAt(c.fabricAddress()) == null) {
                paths.add(new Path(c.fabricAddress(), c.nodeId()));
            }
        }
        this.thread = Thread.ofPlatform().daemon().name("rdmablock-multipath").unstarted(this::run);
    }

    /**
     * Connects every path on the caller's thread (one that fails is retried in the background), chooses the active
     * path and starts the failover thread.
     *
     * @throws RuntimeException what the first path failed with, when none connected
     */
    void start() {
        RuntimeException first = null;
        for (Path p : paths) {
            try {
                p.open(this::openDevice);
            } catch (RuntimeException e) {
                LOG.warn("{}: path to {} not connected now, retrying in the background: {}", name, p, e.getMessage());
                if (first == null) {
                    first = e;
                }
                p.connectInBackground(this::openDevice, opts.reconnectDelayMs());
            }
        }
        if (paths.stream().noneMatch(p -> p.device() != null)) {
            close();
            throw first;
        }
        Path best = choose();
        if (best != null) {
            switchTo(best);
        } else {
            triggered.set(true);
        }
        thread.start();
    }

    private NvmeBlockDevice openDevice(Path p) {
        NvmeBlockDevice d = NvmeBlockDevice.openPath(p.address, subnqn, hostnqn, opts, this, this);
        buffers.adoptAll(d);
        return d;
    }

    /** A buffer registered on every path's device (zero copy whichever path serves it); see {@link PathBuffers}. */
    MemorySegment allocateBuffer(long lengthBytes) {
        return buffers.allocate(lengthBytes, devices());
    }

    /**
     * Frees a buffer from {@link #allocateBuffer}.
     *
     * @throws IllegalArgumentException when it is not one
     */
    void freeBuffer(MemorySegment buffer) {
        buffers.free(buffer, devices());
    }

    // ---- fast path -----------------------------------------------------------------------------------------------

    @Override
    public void submit(IoRequest r) {
        Path p = active;
        if (p != null) {
            NvmeBlockDevice d = p.device();
            if (d != null) {
                d.submitHere(r);
                return;
            }
        }
        hold(r);
    }

    // ---- path events (poller and controller threads) -----------------------------------------------------------

    @Override
    public void reroute(NvmeBlockDevice from, IoRequest r, int status) {
        Path p = pathOf(from);
        if (r.attempts >= MAX_ATTEMPTS) {
            r.fail(status == PATH_LOST
                    ? new BlockIoException(Opcodes.ioName(r.opcode) + " failed: slba=" + r.slba + ", blockCount="
                    + r.blockCount + ": its path failed during each of its " + r.attempts + " attempts; not retried")
                    : new NvmeStatusException(Opcodes.ioName(r.opcode) + " failed: slba=" + r.slba + ", blockCount="
                    + r.blockCount + ": " + NvmeStatus.name(status) + " on each of " + r.attempts + " attempts",
                    NvmeStatus.sct(status), NvmeStatus.sc(status), NvmeStatus.dnr(status)));
            return;
        }
        if (p != null && p == active) {
            if (status != PATH_LOST && NvmeStatus.sc(status) == 0x03) {
                transitionSeen = true;
            }
            park(r);
            trigger();
        } else {
            hold(r); // a straggler of a path no longer active: straight to the active one
        }
    }

    @Override
    public void notReady(NvmeBlockDevice from, IoRequest r, int status) {
        boolean first;
        synchronized (lock) { // with close and declareLost, which take every waiting request
            if (failIfEnded(r)) {
                return;
            }
            first = notReady.add(r, status, System.nanoTime());
        }
        if (first) {
            LOG.warn("{}: I/O answered {} by {} (a replicated volume below its minInSync copies); sent again every "
                    + "{} ms up to failoverTimeoutMs={}", name, NvmeStatus.name(status), pathOf(from),
                    NotReadyRetries.DELAY_MS, opts.failoverTimeoutMs());
        }
    }

    @Override
    public void fenced(NvmeBlockDevice dev) {
        Path p = pathOf(dev);
        if (p != null) {
            p.suspect = true;
        }
    }

    @Override
    public void connectionChanged(NvmeBlockDevice dev, boolean up) {
        Path p = pathOf(dev);
        if (p == null) {
            return; // the first connect of a path, before it is listed
        }
        if (up) {
            p.suspect = false;
            if (active == null) {
                trigger();
            }
        } else {
            p.suspect = true;
            if (p == active || dev.state() == AssociationState.LOST) {
                trigger();
            }
        }
    }

    @Override
    public void anaChanged(NvmeBlockDevice dev) {
        trigger();
    }

    // ---- holding -------------------------------------------------------------------------------------------------

    /** To the active path, or held until there is one. */
    private void hold(IoRequest r) {
        synchronized (lock) {
            if (failIfEnded(r)) {
                return;
            }
            Path p = active;
            NvmeBlockDevice d = p == null || p.suspect ? null : p.device();
            if (d != null) {
                d.submitHere(r);
                return;
            }
            held.add(r);
        }
        trigger();
    }

    /** Held for the failover thread, whatever the active path. */
    private void park(IoRequest r) {
        synchronized (lock) {
            if (!failIfEnded(r)) {
                held.add(r);
            }
        }
    }

    private boolean failIfEnded(IoRequest r) {
        if (closed) {
            r.fail(new DeviceLostException("device closed"));
            return true;
        }
        DeviceLostException l = lost;
        if (l != null) {
            r.fail(l);
            return true;
        }
        return false;
    }

    private void trigger() {
        triggered.set(true);
        LockSupport.unpark(thread);
    }

    // ---- failover thread -----------------------------------------------------------------------------------------

    private void run() {
        IoQueue.DEVICE_THREAD.set(Boolean.TRUE);
        while (!closed && lost == null) {
            try {
                maintain();
                for (IoRequest r : notReady.takeDue(System.nanoTime())) {
                    hold(r);
                }
                if (triggered.getAndSet(false) || active == null) {
                    failover();
                } else {
                    LockSupport.parkNanos(RETRY_NS);
                }
            } catch (RuntimeException e) {
                LOG.error("{}: failover thread: unexpected failure", name, e);
                LockSupport.parkNanos(RETRY_NS);
            }
        }
    }

    /** Paths whose association was declared lost get a new one in the background. */
    private void maintain() {
        for (Path p : paths) {
            NvmeBlockDevice d = p.device();
            if (d != null && d.state() == AssociationState.LOST) {
                p.replaceLost(this::openDevice, opts.reconnectDelayMs());
            }
        }
    }

    private void failover() {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(opts.failoverTimeoutMs());
        long nextReport = start;
        boolean waiting = false;
        while (!closed && lost == null) {
            boolean transition = transitionSeen;
            transitionSeen = false;
            Path best = choose();
            if (best != null) {
                if (transition && best == active) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TRANSITION_DELAY_MS));
                }
                if (waiting) {
                    LOG.info("{}: path {} Optimized after {} ms without one", name, best,
                            (System.nanoTime() - start) / 1_000_000);
                }
                switchTo(best);
                return;
            }
            if (!waiting) {
                waiting = true;
                Path old;
                synchronized (lock) {
                    old = active;
                    active = null;
                }
                failovers++;
                LOG.warn("{}: no Optimized path (was {}); I/O held up to failoverTimeoutMs={}", name, old,
                        opts.failoverTimeoutMs());
            }
            long now = System.nanoTime();
            if (now - nextReport >= 0 && report(now - start)) {
                nextReport = now + REPORT_INTERVAL_NS;
            }
            refreshCopies();
            maintain();
            if (System.nanoTime() - deadline >= 0) {
                declareLost("device lost: no Optimized path to " + name + " (" + subnqn + ") for failoverTimeoutMs="
                        + opts.failoverTimeoutMs() + "; paths: " + describePaths());
                return;
            }
            triggered.set(false);
            LockSupport.parkNanos(Math.min(RETRY_NS, Math.max(1, deadline - System.nanoTime())));
        }
    }

    /**
     * Re-reads the ANA state of every usable path (in parallel, each bounded by {@link #ANA_WAIT_NS}); the active
     * path when still Optimized, else the first Optimized one, else the first Non-Optimized one, else null.
     */
    private Path choose() {
        List<Path> live = new ArrayList<>();
        List<CompletableFuture<Integer>> reads = new ArrayList<>();
        for (Path p : paths) {
            if (p.usable()) {
                live.add(p);
                reads.add(p.device().controller().readAna());
            }
        }
        long until = System.nanoTime() + ANA_WAIT_NS;
        Path optimized = null;
        Path nonOptimized = null;
        Path current = active;
        for (int i = 0; i < live.size(); i++) {
            int st;
            try {
                st = reads.get(i).get(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                st = -1;
            }
            Path p = live.get(i);
            if (p.suspect) {
                continue; // fenced while we asked
            }
            if (st == AnaLog.OPTIMIZED && (optimized == null || p == current)) {
                optimized = p;
            } else if (st == AnaLog.NON_OPTIMIZED && nonOptimized == null) {
                nonOptimized = p;
            }
        }
        return optimized != null ? optimized : nonOptimized;
    }

    /** Makes {@code p} the active path and resubmits every held request on it in submission order. */
    private void switchTo(Path p) {
        NvmeBlockDevice d = p.device();
        if (d == null) {
            return;
        }
        Path old;
        int n;
        synchronized (lock) {
            old = active;
            active = p;
            List<IoRequest> list = held;
            held = new ArrayList<>();
            list.sort(Comparator.comparingLong(r -> r.seq));
            n = list.size();
            for (IoRequest r : list) {
                d.submitHere(r);
            }
        }
        if (old != p) {
            LOG.info("{}: I/O now on path {}{}", name, p, n > 0 ? " (" + n + " I/O resubmitted)" : "");
        } else if (n > 0) {
            LOG.debug("{}: {} I/O resubmitted on path {}", name, n, p);
        }
    }

    /**
     * Reports the primary unreachable: a primary this host reached before and cannot reach now, or one it reaches
     * but that has shown no Optimized state for {@code pathTimeoutMs} (e.g. past its lease, cut from the management
     * plane: the management plane promotes only when its heartbeats lapsed too).
     */
    private boolean report(long waitedNs) {
        if (source == null) {
            return false;
        }
        String node = primaryNodeId;
        Path p = node == null ? null : pathOfNode(node);
        if (p == null || !p.everConnected
                || (p.usable() && waitedNs < TimeUnit.MILLISECONDS.toNanos(opts.pathTimeoutMs()))) {
            return false;
        }
        try {
            source.reportUnreachable(node, epoch, hostnqn);
            LOG.info("{}: reported node {} unreachable (epoch {})", name, node, epoch);
        } catch (RuntimeException e) {
            if (!reportErrorLogged) {
                reportErrorLogged = true;
                LOG.warn("{}: reporting node {} unreachable failed (not retried more loudly): {}", name, node,
                        e.getMessage());
            } else {
                LOG.debug("{}: reporting node {} unreachable failed: {}", name, node, e.getMessage());
            }
        }
        return true;
    }

    /** Re-reads the volume record: epoch, primary, and a new path for each newly listed address. */
    private void refreshCopies() {
        if (source == null) {
            return;
        }
        CopySource.Copies c;
        try {
            c = source.read();
        } catch (RuntimeException e) {
            if (!readErrorLogged) {
                readErrorLogged = true;
                LOG.warn("{}: re-reading the volume record failed: {}", name, e.getMessage());
            }
            return;
        }
        epoch = c.epoch();
        primaryNodeId = c.primaryNodeId();
        for (CopySource.Copy copy : c.copies()) {
            Path p = pathAt(copy.fabricAddress());
            if (p != null) {
                p.nodeId = copy.nodeId();
            } else if (!closed) {
                try {
                    Path n = new Path(copy.fabricAddress(), copy.nodeId());
                    paths.add(n);
                    LOG.info("{}: new copy on node {} at {}: connecting", name, copy.nodeId(), copy.fabricAddress());
                    n.connectInBackground(this::openDevice, 0);
                } catch (IllegalArgumentException e) {
                    LOG.warn("{}: copy on node {} has an invalid fabric address: {}", name, copy.nodeId(),
                            e.getMessage());
                }
            }
        }
    }

    private void declareLost(String message) {
        DeviceLostException ex = new DeviceLostException(message);
        List<IoRequest> list;
        synchronized (lock) {
            lost = ex;
            active = null;
            list = held;
            held = new ArrayList<>();
            list.addAll(notReady.takeAll());
        }
        LOG.error(message);
        for (IoRequest r : list) {
            r.fail(ex);
        }
    }

    // ---- queries and close ---------------------------------------------------------------------------------------

    /** The message of the device's loss, or null. */
    String lossMessage() {
        DeviceLostException l = lost;
        return l == null ? null : l.getMessage();
    }

    /** The active path's device, or null while there is none. */
    NvmeBlockDevice activeDevice() {
        Path p = active;
        return p == null ? null : p.device();
    }

    List<Path> paths() {
        return List.copyOf(paths);
    }

    /** Times the device was without an Optimized path (tests, diagnostics). */
    int failovers() {
        return failovers;
    }

    /** Every device of every path (buffer ownership). */
    List<NvmeBlockDevice> devices() {
        List<NvmeBlockDevice> all = new ArrayList<>();
        for (Path p : paths) {
            all.addAll(p.devices());
        }
        return all;
    }

    private Path pathOf(NvmeBlockDevice d) {
        for (Path p : paths) {
            if (p.device() == d) {
                return p;
            }
        }
        return null;
    }

    private Path pathOfNode(String nodeId) {
        for (Path p : paths) {
            if (nodeId.equals(p.nodeId)) {
                return p;
            }
        }
        return null;
    }

    private Path pathAt(String fabricAddress) {
        for (Path p : paths) {
            if (p.fabricAddress.equals(fabricAddress)) {
                return p;
            }
        }
        return null;
    }

    private String describePaths() {
        StringBuilder sb = new StringBuilder();
        for (Path p : paths) {
            NvmeBlockDevice d = p.device();
            sb.append(sb.isEmpty() ? "" : ", ").append(p).append(": ");
            sb.append(d == null ? "not connected" : d.state() + (p.suspect ? " (fenced)" : "") + " ana="
                    + AnaLog.stateName(d.controller().anaState()));
        }
        return sb.toString();
    }

    /** Fails held I/O, stops the failover thread and closes every path. */
    void close() {
        List<IoRequest> list;
        synchronized (lock) {
            closed = true;
            active = null;
            list = held;
            held = new ArrayList<>();
            list.addAll(notReady.takeAll());
        }
        LockSupport.unpark(thread);
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        DeviceLostException ex = new DeviceLostException("device closed");
        for (IoRequest r : list) {
            r.fail(ex);
        }
        for (Path p : paths) {
            p.close();
        }
        buffers.close();
    }
}
