package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One controller: the association of a host (hostnqn) with a {@link Subsystem}, made of the admin queue (qid 0) and
 * up to {@link TargetOptions#maxIoQueues()} I/O queues (NVMe-oF 1.1 section 3.3, dynamic controller model); with the
 * discovery subsystem, a discovery controller (admin queue only, NVMe-oF 1.1 section 5). Owns the properties (CAP, VS,
 * CC, CSTS), the admin command dispatch ({@link Identify}, {@link LogPages}, Set/Get Features 06h, 07h, 0Bh, 0Fh,
 * Keep Alive, AER) and the keep-alive timer.
 *
 * <p>Threading: admin commands and property accesses run on the admin queue's poller only; {@link #destroy} and the
 * queue table may be touched from any thread (connect on another poller, management removing the volume).
 *
 * <p>Asynchronous Event Requests are held (never answered) until an event: the namespace size changed (notice 00h,
 * log 04h) or, when the host enabled it (Set Features 0Bh bit 11), the subsystem's ANA state changed (notice 03h, log
 * 0Ch; NVMe 1.4 §5.2, Asynchronous Event Request). Up to {@link #MAX_HELD_AER} (AERL + 1) are held, more are answered with
 * Asynchronous Event Request Limit Exceeded. Events are checked by the admin queue's housekeeping (every 10 ms);
 * several ANA changes between two checks, or while no AER is held, make one notice.
 */
final class TargetController {
    private static final Logger LOG = LoggerFactory.getLogger(TargetController.class);
    static final int MAX_HELD_AER = 4;
    /** AEN dw0: type 2 (notice), info 0 (namespace attribute changed), log page 04h. */
    static final int AEN_NS_ATTRIBUTE_CHANGED = 0x02 | (0x00 << 8)
            | (LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST << 16);
    /** AEN dw0: type 2 (notice), info 03h (Asymmetric Namespace Access change), log page 0Ch. */
    static final int AEN_ANA_CHANGE = 0x02 | (0x03 << 8) | (AnaLogDescriptor.LID_ANA << 16);
    /** OAES / Asynchronous Event Configuration bit 11: ANA Change Notices (NVMe 1.4 Identify Controller, Feature 0Bh). */
    static final int OAES_ANA_CHANGE = 1 << 11;
    private static final int SC_AER_LIMIT_EXCEEDED = 0x05;
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    final int cntlid;
    final Subsystem subsystem;
    private final String hostnqn;
    /** HOSTID of the admin Connect (16 bytes as two longs). */
    final long hostIdHigh;
    final long hostIdLow;
    /** Queues connected and not yet fully released (store I/O drained); guarded by this. */
    private int liveQueues;
    /**
     * Keep-alive timeout (ms, never 0: {@link ConnectLimits#katoMs}): the Connect's KATO, or a Set Features 0Fh; read
     * by the admin poller.
     */
    private volatile int katoMs;
    private final TargetOptions options;
    private final Target target;
    private final AtomicReferenceArray<FabricQueue> ioQueues;
    private volatile boolean destroyed;
    /**
     * False until the association may carry I/O: set by {@link #admit} at Connect for a host without a secret, and
     * for a host that must authenticate once its admin queue authenticated and the host's previous associations
     * drained ({@link AssociationFence#afterAuthentication}). An I/O Connect to a controller not admitted is refused.
     */
    private volatile boolean admitted;
    private volatile long lastCommandNs;

    // admin-poller state
    private int cc;
    private int csts;
    private final Request[] heldAer = new Request[MAX_HELD_AER];
    /** The held {@link Opcodes#ADMIN_COPY_SNAPSHOT} and its work ({@link CopySnapshotWork}), or nulls. Admin poller. */
    private Request heldCopySnapshot;
    private java.util.concurrent.CompletableFuture<Integer> copySnapshotWork;
    private long announcedBlocks;
    /** The subsystem's ANA change count last announced to this host (or current when this controller was made). */
    private long announcedAnaChanges;
    private boolean namespaceChanged;
    private boolean changedNamespaceUnread;
    /** Asynchronous Event Configuration (Set Features 0Bh), masked to the supported bits. */
    private int asyncEventConfig;
    private MemorySegment scratch;
    /** Counters of this association's I/O queues that closed; guarded by this. */
    private final long[] closedIoCounters = new long[IoCounters.COUNT];
    /** DH-HMAC-CHAP T_IDs used in this association (replay check); guarded by this. */
    private final java.util.BitSet authTransactions = new java.util.BitSet();

    TargetController(int cntlid, Subsystem subsystem, String hostnqn, long hostIdHigh, long hostIdLow, int katoMs,
                     TargetOptions options, Target target, long nowNs) {
        this.cntlid = cntlid;
        this.subsystem = subsystem;
        this.hostnqn = hostnqn;
        this.hostIdHigh = hostIdHigh;
        this.hostIdLow = hostIdLow;
        this.katoMs = katoMs;
        this.options = options;
        this.target = target;
        this.ioQueues = new AtomicReferenceArray<>(options.maxIoQueues() + 1);
        this.lastCommandNs = nowNs;
        this.announcedBlocks = subsystem.isDiscovery() ? 0 : subsystem.volume().blockCount();
        this.announcedAnaChanges = subsystem.anaChangeCount();
    }

    int katoMs() {
        return katoMs;
    }

    String hostnqn() {
        return hostnqn;
    }

    boolean isDestroyed() {
        return destroyed;
    }

    /** True once the association may attach I/O queues ({@link #admit}). */
    boolean admitted() {
        return admitted;
    }

    /** Lets I/O queues attach: the admin queue is connected (and, if the host must, authenticated and fenced). */
    void admit() {
        admitted = true;
    }

    /** Claims DH-HMAC-CHAP transaction id {@code tid} for this association; false when it was used before (replay). */
    synchronized boolean claimAuthTransaction(int tid) {
        if (authTransactions.get(tid)) {
            return false;
        }
        authTransactions.set(tid);
        return true;
    }

    /**
     * Attaches I/O queue {@code qid} (counted as connected); with {@code claim} it also takes the qid's slot, else the
     * queue takes it once it authenticated ({@link #claimIoQueue}). False when the controller is gone or (claim) the
     * qid is taken.
     */
    synchronized boolean attachIoQueue(int qid, FabricQueue q, boolean claim) {
        if (destroyed || qid < 1 || qid >= ioQueues.length() || claim && !ioQueues.compareAndSet(qid, null, q)) {
            return false;
        }
        liveQueues++;
        return true;
    }

    /**
     * Takes the slot of I/O queue {@code qid} for {@code q}, a queue that attached without it and has just proved the
     * host's secret: until then a peer that knows the host's NQN, HOSTID and controller id but not its secret holds no
     * qid the host needs. True when taken now or already {@code q}'s; false when another queue holds it.
     */
    synchronized boolean claimIoQueue(int qid, FabricQueue q) {
        return !destroyed && (ioQueues.get(qid) == q || ioQueues.compareAndSet(qid, null, q));
    }

    void detachIoQueue(int qid, FabricQueue q) {
        if (qid >= 1 && qid < ioQueues.length()) {
            ioQueues.compareAndSet(qid, q, null);
        }
    }

    /** Destroys the association: every queue of it tears down on its poller at its next round. Idempotent. */
    void destroy(String reason) {
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            if (liveQueues == 0) {
                subsystem.detach(this);
            }
        }
        LOG.info("controller destroyed: cntlid={}, subnqn={}, hostnqn={}, reason={}", cntlid, subsystem.subnqn(),
                hostnqn, reason);
        target.controllerGone(this);
    }

    /** A queue of this association connected. */
    synchronized void queueOpened() {
        liveQueues++;
    }

    /** A queue of this association released everything (its store I/O drained). */
    void queueClosed() {
        boolean drainedNow;
        synchronized (this) {
            drainedNow = --liveQueues == 0 && destroyed;
        }
        if (drainedNow) {
            subsystem.detach(this);
            LOG.info("controller drained: cntlid={}, subnqn={}, hostnqn={}", cntlid, subsystem.subnqn(), hostnqn);
        }
    }

    /** True when destroyed and every queue of it has released its resources (no store I/O of it is in flight). */
    synchronized boolean drained() {
        return destroyed && liveQueues == 0;
    }

    /** True when this association was made by the host with this hostnqn and HOSTID. */
    boolean sameHost(String nqn, long idHigh, long idLow) {
        return hostnqn.equals(nqn) && hostIdHigh == idHigh && hostIdLow == idLow;
    }

    /**
     * Admin poller: destroys the controller when no command of this association (on any of its queues) came for
     * KATO + grace. Traffic-based keep-alive (NVMe 2.0 base spec section 3.9.5, CTRATT.TBKAS): a host that keeps I/O
     * queues busy need not also get a Keep Alive through, and a host still connecting its I/O queues is alive.
     */
    void checkKeepAlive(long nowNs) {
        int katoMs = this.katoMs;
        if (katoMs == 0 || destroyed) {
            return;
        }
        long idleNs = nowNs - lastCommandNs;
        long limitNs = (katoMs + options.keepAliveGraceMs()) * 1_000_000L;
        if (idleNs > limitNs) {
            destroy("keep-alive expired: katoMs=" + katoMs + ", graceMs=" + options.keepAliveGraceMs() + ", idleMs="
                    + idleNs / 1_000_000);
        }
    }

    /**
     * Admin poller: answers one held Asynchronous Event Request when there is an event to report: the namespace grew
     * or shrank since the last notice (namespace attribute changed), else an ANA change not yet announced (only when
     * enabled by Set Features 0Bh bit 11). Also notices a primary's lease lapse ({@link Subsystem#refreshAnaState}).
     * Records the event on the request for the queue to advance.
     *
     * @return the request to advance, or null
     */
    Request pollAsyncEvent(long nowNs) {
        if (subsystem.isDiscovery()) {
            return null;
        }
        long blocks = subsystem.volume().blockCount();
        if (blocks != announcedBlocks) {
            announcedBlocks = blocks;
            namespaceChanged = true;
            changedNamespaceUnread = true;
        }
        subsystem.refreshAnaState(nowNs);
        long anaChanges = subsystem.anaChangeCount();
        boolean anaChanged = anaChanges != announcedAnaChanges && (asyncEventConfig & OAES_ANA_CHANGE) != 0;
        if (!namespaceChanged && !anaChanged) {
            return null;
        }
        for (int i = 0; i < heldAer.length; i++) {
            Request r = heldAer[i];
            if (r != null) {
                heldAer[i] = null;
                if (namespaceChanged) {
                    namespaceChanged = false;
                    r.dw0 = AEN_NS_ATTRIBUTE_CHANGED;
                } else {
                    announcedAnaChanges = anaChanges;
                    r.dw0 = AEN_ANA_CHANGE;
                    LOG.debug("ANA change notice: cntlid={}, subnqn={}, changeCount={}", cntlid, subsystem.subnqn(),
                            anaChanges);
                }
                r.event(Request.Event.ASYNC_EVENT);
                return r;
            }
        }
        return null;
    }

    /**
     * Any poller: a command of this association arrived (keep-alive traffic, TBKAS). The shared field is written at
     * most once per millisecond per poller, so busy I/O queues on several pollers do not contend for its cache line.
     */
    void commandReceived(long nowNs) {
        if (nowNs - lastCommandNs > 1_000_000L) {
            lastCommandNs = nowNs;
        }
    }

    /**
     * Executes an admin command whose data buffer (if any) is ready: sets status/dw0, fills {@code r.data} for
     * controller-to-host commands, or holds the request ({@link Outcome#HOLD}).
     */
    Outcome executeAdmin(Request r, FabricQueue q) {
        MemorySegment sqe = r.sqe;
        return switch (r.opcode) {
            case Opcodes.ADMIN_KEEP_ALIVE -> Outcome.COMPLETE;
            case Opcodes.ADMIN_IDENTIFY -> Identify.execute(r, q, this);
            case Opcodes.ADMIN_SET_FEATURES, Opcodes.ADMIN_GET_FEATURES -> features(r, sqe);
            case Opcodes.ADMIN_GET_LOG_PAGE -> LogPages.execute(r, q, this);
            case Opcodes.ADMIN_ASYNC_EVENT_REQUEST -> holdAer(r);
            case Opcodes.ADMIN_PEER_LEASE -> peerLease(r, q);
            case Opcodes.ADMIN_COPY_SNAPSHOT -> copySnapshot(r);
            default -> q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE), "opcode", r.opcode, "admin");
        };
    }

    /** {@link Opcodes#ADMIN_COPY_SNAPSHOT}: checked and handed to {@link CopySnapshotWork}, held until it is done. */
    private Outcome copySnapshot(Request r) {
        if (heldCopySnapshot != null) {
            return r.fail(NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR));
        }
        var work = target.copySnapshotWork().start(r, subsystem, hostnqn);
        if (work == null) {
            return Outcome.COMPLETE;
        }
        heldCopySnapshot = r;
        copySnapshotWork = work;
        return Outcome.HOLD;
    }

    /**
     * Admin poller: the held {@link Opcodes#ADMIN_COPY_SNAPSHOT} once its work is done (its status set, the event
     * recorded for the queue to advance), else null.
     */
    Request pollCopySnapshot() {
        Request r = heldCopySnapshot;
        if (r == null || !copySnapshotWork.isDone()) {
            return null;
        }
        heldCopySnapshot = null;
        r.status = copySnapshotWork.getNow(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
        copySnapshotWork = null;
        r.event(Request.Event.ASYNC_EVENT);
        return r;
    }

    /** Longest peer lease a primary may ask for, ms ({@link Opcodes#ADMIN_PEER_LEASE}). */
    static final long MAX_PEER_LEASE_MS = 60_000;

    /**
     * {@link Opcodes#ADMIN_PEER_LEASE} (docs/failover.md, "Peer lease"): only from a peer node of a secondary copy
     * ({@link io.rdmablock.node.failover.ExportRole#exempts}, authenticated at Connect), NSID 1, CDW12 in 1..{@value #MAX_PEER_LEASE_MS}, else Invalid Field; DW0 = the granted ms (0:
     * refused, {@link Subsystem#grantLease}).
     */
    private Outcome peerLease(Request r, FabricQueue q) {
        MemorySegment sqe = r.sqe;
        long ms = SqeDescriptor.cdw(sqe, 12) & 0xFFFF_FFFFL;
        if (subsystem.isDiscovery() || !subsystem.role().exempts(hostnqn)) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE), "opcode", r.opcode,
                    "peer lease from a peer node of a secondary copy only");
        }
        if (ms < 1 || ms > MAX_PEER_LEASE_MS) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), "cdw12", ms,
                    "1.." + MAX_PEER_LEASE_MS + " ms");
        }
        long epoch = (SqeDescriptor.cdw(sqe, 10) & 0xFFFF_FFFFL) | ((long) SqeDescriptor.cdw(sqe, 11) << 32);
        long now = System.nanoTime();
        subsystem.peerLeaseAsked(hostnqn, now);
        long granted = subsystem.grantLease(epoch, ms * 1_000_000L, now);
        r.dw0 = (int) (granted / 1_000_000L);
        return Outcome.COMPLETE;
    }

    private Outcome features(Request r, MemorySegment sqe) {
        int fid = SqeDescriptor.cdw(sqe, 10) & 0xFF;
        int cdw11 = SqeDescriptor.cdw(sqe, 11);
        boolean set = r.opcode == Opcodes.ADMIN_SET_FEATURES;
        boolean discovery = subsystem.isDiscovery();
        int maxIo = options.maxIoQueues() - 1;
        switch (fid) {
            case Opcodes.FID_NUMBER_OF_QUEUES -> {
                if (discovery) {
                    return unsupportedFeature(r, fid);
                }
                int nsqr = set ? Math.min(cdw11 & 0xFFFF, maxIo) : maxIo;
                int ncqr = set ? Math.min(cdw11 >>> 16, maxIo) : maxIo;
                if (set && ((cdw11 & 0xFFFF) == 0xFFFF || (cdw11 >>> 16) == 0xFFFF)) {
                    return r.fail(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD));
                }
                r.dw0 = nsqr | ncqr << 16;
            }
            case Opcodes.FID_VOLATILE_WRITE_CACHE -> {
                if (discovery) {
                    return unsupportedFeature(r, fid);
                }
                r.dw0 = 1; // always on; a Set is accepted and changes nothing
            }
            case Opcodes.FID_ASYNC_EVENT_CONFIG -> {
                if (set) {
                    asyncEventConfig = cdw11 & supportedAsyncEvents();
                }
                r.dw0 = asyncEventConfig;
            }
            case Opcodes.FID_KEEP_ALIVE_TIMER -> {
                if (set) { // 0 or beyond the cap: bounded as at Connect (ConnectLimits#katoMs)
                    katoMs = target.connectLimits().katoMs(subsystem.isDiscovery(), cdw11);
                    LOG.info("keep-alive timer set: cntlid={}, katoMs={}", cntlid, katoMs);
                }
                r.dw0 = katoMs;
            }
            default -> {
                return unsupportedFeature(r, fid);
            }
        }
        return Outcome.COMPLETE;
    }

    private Outcome unsupportedFeature(Request r, int fid) {
        LOG.debug("feature not supported: fid=0x{}, cntlid={}, discovery={}", Integer.toHexString(fid), cntlid,
                subsystem.isDiscovery());
        return r.fail(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD));
    }

    /**
     * Asynchronous Event Configuration bits this controller can send (= OAES): namespace attribute notices (bit 8)
     * and ANA change notices (bit 11); none on a discovery controller.
     */
    int supportedAsyncEvents() {
        return subsystem.isDiscovery() ? 0 : IdentifyControllerDescriptor.OAES_NAMESPACE_ATTRIBUTE | OAES_ANA_CHANGE;
    }

    /** Admin poller: a 4096-byte scratch buffer for building log pages. */
    MemorySegment scratch() {
        if (scratch == null) {
            scratch = java.lang.foreign.Arena.ofAuto().allocate(Opcodes.IDENTIFY_DATA_LENGTH, 8);
        }
        return scratch;
    }

    /** Admin poller: true when a namespace size change has not yet been read from log page 04h with RAE = 0. */
    boolean changedNamespaceUnread() {
        return changedNamespaceUnread;
    }

    /** Admin poller: log page 04h was read with RAE = 0. */
    void changedNamespaceRead() {
        changedNamespaceUnread = false;
    }

    /** A closed I/O queue's counters, kept for the SMART log of the association. */
    synchronized void ioQueueClosed(IoCounters counters) {
        counters.addTo(closedIoCounters);
    }

    /** READ/WRITE commands and bytes of this association ({@link IoCounters} indices): closed and live queues. */
    long[] ioCounters() {
        long[] sums = new long[IoCounters.COUNT];
        synchronized (this) {
            System.arraycopy(closedIoCounters, 0, sums, 0, IoCounters.COUNT);
        }
        for (int i = 1; i < ioQueues.length(); i++) {
            FabricQueue q = ioQueues.get(i);
            if (q != null) {
                q.ioCounters.addTo(sums);
            }
        }
        return sums;
    }

    private Outcome holdAer(Request r) {
        for (int i = 0; i < heldAer.length; i++) {
            if (heldAer[i] == null) {
                heldAer[i] = r;
                return Outcome.HOLD;
            }
        }
        return r.fail(NvmeStatus.commandSpecific(SC_AER_LIMIT_EXCEEDED));
    }

    /** Fabrics Property Get/Set (NVMe-oF 1.1 sections 3.4, 3.5): CAP, VS, CC, CSTS. */
    Outcome property(Request r, FabricQueue q) {
        MemorySegment sqe = r.sqe;
        boolean eightBytes = (SqeDescriptor.cdw(sqe, 10) & 0x7) == 1;
        int offset = SqeDescriptor.cdw(sqe, 11);
        boolean set = SqeDescriptor.fctype(sqe) == Opcodes.FCTYPE_PROPERTY_SET;
        long value;
        switch (offset) {
            case Opcodes.PROP_CAP -> value = (options.maxQueueEntries() - 1) | 1L << 16 | 20L << 24 | 1L << 37;
            case Opcodes.PROP_VS -> value = IdentifyControllerDescriptor.VERSION_1_4;
            case Opcodes.PROP_CC -> value = cc & 0xFFFFFFFFL;
            case Opcodes.PROP_CSTS -> value = csts & 0xFFFFFFFFL;
            default -> {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), "property offset", offset,
                        "supported=0x0,0x8,0x14,0x1c");
            }
        }
        if (eightBytes != (offset == Opcodes.PROP_CAP)) {
            return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), "property size", eightBytes ? 8 : 4,
                    "offset=0x" + Integer.toHexString(offset));
        }
        if (set) {
            if (offset != Opcodes.PROP_CC) {
                return q.reject(r, NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD),
                        "property offset (read-only)", offset,
                        "writable=0x14");
            }
            int newCc = (int) sqe.get(U64, SqeDescriptor.CDW12_OFFSET);
            boolean en = (newCc & 1) != 0;
            int shn = (newCc >>> 14) & 0x3;
            csts = en ? (csts | 1) : (csts & ~1);
            if (shn != 0) {
                csts = (csts & ~0xC) | (2 << 2); // SHST: shutdown processing complete
            }
            cc = newCc;
        } else {
            r.dw0 = (int) value;
            r.dw1 = (int) (value >>> 32);
        }
        return Outcome.COMPLETE;
    }

    @Override
    public String toString() {
        return "Controller[cntlid=" + cntlid + ", " + subsystem.subnqn() + ", hostnqn=" + hostnqn + "]";
    }
}
