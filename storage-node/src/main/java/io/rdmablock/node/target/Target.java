package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.CmPrivateData;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.DeviceContext;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The NVMe-oF-style target: listens through the connection manager, checks each queue's connect request (NVMe/RDMA
 * transport 1.0 section 3.2: RECFMT, QID, HSQSIZE), builds the {@link RdmaQueue} (RECVs posted before the accept),
 * accepts with CRQSIZE on a handshake thread ({@link QueueHandshakes}: the acceptor never waits for a peer) and hands
 * the queue to a {@link Poller} ({@link PollerPool}). Holds the subsystems (one per exported volume, plus
 * the node's discovery subsystem {@code nqn.2014-08.org.nvmexpress.discovery}) and the controllers.
 *
 * <p>Lifecycle: {@link #start} binds (port 0 picks a free port, see {@link #localAddress()}); {@link #close} stops
 * accepting, tears down every queue on its poller, and leaves the store and provider to their owner. Thread-safe.
 */
public final class Target implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Target.class);
    /** Largest cntlid of the dynamic controller model (NVMe-oF 1.1: FFF0h-FFFFh are reserved). */
    static final int MAX_CNTLID = TargetOptions.MAX_CNTLID;

    private final VerbsProvider provider;
    private final VolumeStore store;
    private final TargetOptions options;
    private final NodeMetrics metrics;
    private final ConcurrentHashMap<String, Subsystem> subsystems = new ConcurrentHashMap<>();
    /** The node's discovery subsystem (well-known NQN); not in {@link #subsystems}. */
    private final Subsystem discovery = Subsystem.discovery();
    /** Discovery log GENCTR: + 1 whenever the exported subsystems or an allow-list may have changed. */
    private final java.util.concurrent.atomic.AtomicLong discoveryGeneration = new java.util.concurrent.atomic.AtomicLong();
    /** Live controllers by subsystem and cntlid, the cntlid range and the {@link ConnectLimits} counts. */
    private final ControllerTable controllers;
    /** One protection domain per device context (by identity), made on first use, closed after every queue. */
    private final ConcurrentHashMap<DeviceContext, ProtectionDomain> protectionDomains = new ConcurrentHashMap<>();
    private volatile boolean closed;
    /** The poller threads (started with the target). */
    private volatile PollerPool pollers;
    private final VolumeIo.Factory localIo;
    /** Ends each queue's handshake off the acceptor (started with the target). */
    private volatile QueueHandshakes handshakes;
    private volatile CmListener listener;
    private volatile Thread acceptor;
    private volatile boolean running;
    /** Releases torn-down queues' connections and memory off the pollers; started with the target. */
    private volatile QueueReaper reaper;
    /** Bytes of queue memory registered now (every queue's {@link TargetQueueMemory}). */
    private final java.util.concurrent.atomic.AtomicLong registeredBytes = new java.util.concurrent.atomic.AtomicLong();
    /** Pending queues (accepted, no validated Fabrics Connect yet): on the node and per peer IP address. */
    private final PendingQueues pending;

    /** Hosts that must authenticate (DH-HMAC-CHAP) and their secrets; read at each Connect. */
    private volatile HostSecrets hostSecrets = HostSecrets.NONE;
    private final java.security.SecureRandom random = new java.security.SecureRandom();
    /** The node's tunables (system properties read once by the node's configuration). */
    private final TargetTuning tuning;
    /** The DH-HMAC-CHAP computations, off the pollers, and their limits ({@link TargetTuning#dhchap()}). */
    private final DhchapWork dhchapWork;
    private final CopySnapshotWork copySnapshotWork;

    /**
     * Sets the hosts that must pass in-band authentication (DH-HMAC-CHAP) and their secrets; applies to queues that
     * connect afterwards ({@link HostSecrets}). {@link HostSecrets#NONE} (the default) requires none.
     */
    public void hostSecrets(HostSecrets secrets) {
        this.hostSecrets = java.util.Objects.requireNonNull(secrets, "secrets");
        LOG.info("in-band authentication: {} host(s) must authenticate (DH-HMAC-CHAP); peer nodes {}", secrets.size(),
                secrets.hasNodeKey() ? "must authenticate with their node link secrets (node key set)"
                        : "cannot connect to secondary copies yet (no node key from the management server)");
    }

    /** The current {@link HostSecrets}. */
    public HostSecrets hostSecrets() {
        return hostSecrets;
    }

    /** Where the DH-HMAC-CHAP computations run, and the limits of in-band authentication. */
    DhchapWork dhchapWork() {
        return dhchapWork;
    }

    /** Where secondaries take the snapshots their primary's cut asks for ({@link io.rdmablock.rdma.fabric.Opcodes#ADMIN_COPY_SNAPSHOT}). */
    CopySnapshotWork copySnapshotWork() {
        return copySnapshotWork;
    }

    /** The node's random source for challenges and DH keys. */
    java.security.SecureRandom random() {
        return random;
    }

    /**
     * @param tuning  the node's tunables (connect limits, authentication limits, poller store wait, epoch window,
     *                store buffer registration), checked once when the node's configuration was read
     * @param localIo the volume I/O of the node's own copy, which a subsystem's I/O queues open when it is not
     *                replicated ({@code node.io.LocalVolumeIo::open}; the node wires it, so this package does not
     *                depend on {@code node.io})
     */
    public Target(VerbsProvider provider, VolumeStore store, TargetOptions options, NodeMetrics metrics,
                  TargetTuning tuning, VolumeIo.Factory localIo) {
        this.localIo = java.util.Objects.requireNonNull(localIo, "localIo");
        this.provider = provider;
        this.store = store;
        this.options = options;
        this.metrics = metrics;
        this.tuning = java.util.Objects.requireNonNull(tuning, "tuning");
        this.dhchapWork = new DhchapWork(tuning.dhchap());
        this.copySnapshotWork = new CopySnapshotWork(store);
        this.controllers = new ControllerTable(options, tuning.connectLimits(), metrics);
        this.pending = new PendingQueues(options.pending(), metrics);
        store.addListener(hostsListener);
    }

    /**
     * Sets the controller ids this node allocates, {@code min..max} inclusive (e.g. {@code ordinal * 1024 ..
     * ordinal * 1024 + 1023} given by the management plane, docs/failover.md), replacing
     * {@link TargetOptions#cntlidMin()}..{@link TargetOptions#cntlidMax()}. Only before the first controller is
     * created. Any thread.
     *
     * @throws IllegalArgumentException unless 1 &lt;= min &lt;= max &lt;= {@value TargetOptions#MAX_CNTLID}
     * @throws IllegalStateException    when a controller was created already
     */
    public void cntlidRange(int min, int max) {
        controllers.range(min, max);
        LOG.info("cntlid range set: cntlidMin={}, cntlidMax={} (each subsystem allocates from it)", min, max);
    }

    /** The node's tunables this target was built with. */
    public TargetTuning tuning() {
        return tuning;
    }

    /** The caps checked at each Connect and the KATO bounds ({@link ConnectLimits}). */
    public ConnectLimits connectLimits() {
        return controllers.limits();
    }

    /**
     * Replaces the {@link ConnectLimits} (default: {@link TargetTuning#connectLimits()}); they apply to the
     * Connects that follow, live controllers and queues stay. Any thread.
     */
    public void connectLimits(ConnectLimits limits) {
        controllers.limits(limits);
        LOG.info("connect limits set: {}", limits);
    }

    /** Ends the associations of hosts an allow-list change no longer admits (they must not keep doing I/O). */
    private final java.util.function.Consumer<io.rdmablock.node.store.VolumeEvent> hostsListener = e -> {
        if (e.kind() != io.rdmablock.node.store.VolumeEvent.Kind.RESIZED) {
            discoveryGeneration.incrementAndGet();
        }
        if (e.kind() == io.rdmablock.node.store.VolumeEvent.Kind.ALLOWED_HOSTS_CHANGED) {
            for (Subsystem s : subsystems.values()) {
                if (s.volume().id().equals(e.info().id())) {
                    s.revokeDisallowedHosts();
                }
            }
        }
    };

    /**
     * Binds and starts the acceptor and poller threads.
     *
     * @throws IllegalStateException when already started
     */
    public synchronized void start(InetSocketAddress listen) {
        if (listener != null) {
            throw new IllegalStateException("target already started: listen=" + listener.localAddress());
        }
        listener = provider.listen(listen, 128);
        running = true;
        reaper = new QueueReaper("rdmablock-queue-reaper");
        pollers = new PollerPool(options, tuning.storeWaitMin());
        handshakes = new QueueHandshakes(options.pending().maxPerNode(), options.connectTimeoutNs());
        Thread t = new Thread(this::acceptLoop, "rdmablock-acceptor");
        t.setDaemon(true);
        acceptor = t;
        t.start();
        LOG.info("target listening: address={}, provider={}, pollers={}, maxQueueEntries={}, inCapsuleDataBytes={}, "
                + "mdtsBytes={}, maxPendingQueues={}, maxPendingQueuesPerAddress={}, pendingConnectTimeoutMs={}",
                listener.localAddress(), provider.name(), pollers.size(),
                options.maxQueueEntries(), options.inCapsuleDataBytes(), options.mdtsBytes(),
                options.pending().maxPerNode(), options.pending().maxPerAddress(),
                options.pending().connectTimeoutMs());
        LOG.info("connect limits (rdmablock.node.*): {}", controllers.limits());
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress localAddress() {
        CmListener l = listener;
        if (l == null) {
            throw new IllegalStateException("target not started");
        }
        return l.localAddress();
    }

    /** Exports {@code volume} as subsystem {@code subnqn} ({@code null}: {@link Subsystem#nqnFor} of its name). */
    public Subsystem addVolume(StoreVolume volume, String subnqn) {
        return addVolume(volume, subnqn, s -> { });
    }

    /**
     * As {@link #addVolume(StoreVolume, String)}, with {@code configure} run on the new subsystem before it is
     * published (e.g. its replication mode, so no host ever connects to a copy in the wrong mode). If
     * {@code configure} throws, nothing is exported and the exception propagates. An already exported subsystem of
     * the same volume is returned as it is.
     */
    public Subsystem addVolume(StoreVolume volume, String subnqn, java.util.function.Consumer<Subsystem> configure) {
        String nqn = subnqn == null ? Subsystem.nqnFor(volume.name()) : subnqn;
        if (nqn.equals(discovery.subnqn())) {
            throw new IllegalArgumentException("subnqn reserved for the discovery subsystem: subnqn=" + nqn);
        }
        Subsystem existing = subsystems.get(nqn);
        if (existing != null && existing.volume() == volume) {
            return existing;
        }
        Subsystem s = new Subsystem(nqn, volume, tuning.epochWindow(), localIo);
        configure.accept(s);
        Subsystem old = subsystems.putIfAbsent(nqn, s);
        if (old != null) {
            if (old.volume() == volume) {
                return old;
            }
            throw new IllegalArgumentException("subnqn already exported: subnqn=" + nqn + ", volume="
                    + old.volume().id());
        }
        discoveryGeneration.incrementAndGet();
        LOG.info("subsystem added: subnqn={}, volume={}, sizeBytes={}, lbaSizeBytes={}", nqn, volume.id(),
                volume.sizeBytes(), volume.lbaSizeBytes());
        return s;
    }

    /** Stops exporting the volume: its controllers are destroyed and their queues torn down. */
    public void removeVolume(String volumeId) {
        for (Subsystem s : subsystems.values()) {
            if (s.volume().id().equals(volumeId) && subsystems.remove(s.subnqn(), s)) {
                discoveryGeneration.incrementAndGet();
                LOG.info("subsystem removed: subnqn={}, volume={}", s.subnqn(), volumeId);
                s.remove("subsystem removed");
            }
        }
    }

    /** The subsystem of a volume, or null. */
    public Subsystem subsystemOfVolume(String volumeId) {
        for (Subsystem s : subsystems.values()) {
            if (s.volume().id().equals(volumeId)) {
                return s;
            }
        }
        return null;
    }

    public Collection<Subsystem> subsystems() {
        return List.copyOf(subsystems.values());
    }

    /** hostnqns connected to the volume's subsystem (empty when not exported). */
    public Set<String> connectedHosts(String volumeId) {
        Subsystem s = subsystemOfVolume(volumeId);
        return s == null ? Set.of() : s.connectedHosts();
    }

    /** Live controllers. */
    public int controllerCount() {
        return controllers.size();
    }

    /** Connected queues of {@code hostnqn} counted against {@link ConnectLimits#maxQueuesPerHost()}. */
    int queuesOf(String hostnqn) {
        return controllers.queuesOf(hostnqn);
    }

    /**
     * The protection domain of {@code device}, shared by every queue of this target on that device (as SPDK
     * {@code lib/nvmf/rdma.c} keeps one {@code ibv_pd} per {@code ibv_context}); allocated on first use. The queues'
     * data buffers and RECV slots are registered in it with REMOTE_READ, so a queue pair of this node in the same
     * domain (a primary's connection to a secondary) lets the peer RDMA READ a write's payload where it landed
     * ({@link Request#dataAddress()}, {@link Request#dataRkey()}). Callers must not close it. Any thread.
     *
     * <p>Trade-off: the domain is shared by every connection on the device, hosts' included, and the request data
     * and RECV regions allow remote read (data: also remote write) in it, so a host that learnt or guessed an rkey
     * and an address of another queue's buffer could reach it through its own connection. The rkeys are only ever
     * sent to peer nodes (in forwarded commands), never to hosts; memory windows bound to one peer's queue pair
     * would close the gap where a device supports them.
     *
     * @throws IllegalStateException after {@link #close}
     * @throws io.rdmablock.rdma.verbs.VerbsException when {@code ibv_alloc_pd} fails
     */
    public ProtectionDomain protectionDomain(DeviceContext device) {
        if (closed) {
            throw new IllegalStateException("target closed: no protection domain for device " + device.name());
        }
        return protectionDomains.computeIfAbsent(device, DeviceContext::allocPd);
    }

    TargetOptions options() {
        return options;
    }

    /**
     * Bytes of registered memory the target's queues hold now: a pending queue (no validated Fabrics Connect yet)
     * {@value TargetQueueMemory#CONNECT_SLOT_BYTES}, a connected one its RECV slots, data buffers and response
     * capsules (docs/wire-protocol.md, "Pending queues"); a torn-down queue's once its release has run. Any thread.
     */
    public long registeredQueueBytes() {
        return registeredBytes.get();
    }

    /** Pending queues now: accepted at the CM level, no Fabrics Connect validated yet, not torn down. Any thread. */
    public int pendingQueues() {
        return pending.count();
    }

    int pendingQueuesOf(java.net.InetAddress addr) { // tests
        return pending.countOf(addr);
    }

    java.util.concurrent.atomic.AtomicLong registeredBytesCounter() {
        return registeredBytes;
    }

    /** The RDMA provider ({@link TcpListener} finds with it the device its queues' buffers are registered on). */
    VerbsProvider provider() {
        return provider;
    }

    /** Runs a torn-down queue's release off the pollers ({@link QueueReaper}); inline before start or after close. */
    void reap(Runnable job) {
        QueueReaper r = reaper;
        if (r == null) {
            try {
                job.run();
            } catch (RuntimeException e) {
                LOG.warn("queue release failed: {}", e.toString());
            }
        } else {
            r.submit(job);
        }
    }

    volatile InetSocketAddress tcpAddress; // the TcpListener's while it runs (discovery log entries), else null

    /** A queue of {@link TcpListener}: pending, then to a poller; false when none took it (the caller closes it). */
    boolean adopt(FabricQueue q) {
        q.pending = true;
        pending.admit(q); // a full pending limit evicts an older pending queue, never this one
        PollerPool p = pollers;
        return p != null && p.handOff(q);
    }

    /** The queue is no longer pending ({@link PendingQueues#done}). Idempotent. */
    void pendingDone(FabricQueue q) {
        pending.done(q);
    }

    NodeMetrics metrics() {
        return metrics;
    }

    VolumeStore store() {
        return store;
    }

    boolean zeroesAfterTrim() {
        return store.zeroesAfterTrim();
    }

    /** The discovery log's generation counter (GENCTR). */
    long discoveryGeneration() {
        return discoveryGeneration.get();
    }

    /** The subsystem with {@code subnqn} (the discovery subsystem for the well-known NQN), or null. */
    Subsystem subsystem(String subnqn) {
        if (discovery.subnqn().equals(subnqn)) {
            return discovery;
        }
        Subsystem s = subsystems.get(subnqn);
        return s == null || s.isRemoved() ? null : s;
    }

    /** The live controller {@code cntlid} of {@code s}, or null (cntlids are unique per subsystem). */
    TargetController controller(Subsystem s, int cntlid) {
        return controllers.get(s, cntlid);
    }

    /** The live controller with {@code cntlid} when exactly one subsystem has one (tests), else null. */
    TargetController controller(int cntlid) {
        List<TargetController> cs = controllers.withCntlid(cntlid);
        return cs.size() == 1 ? cs.get(0) : null;
    }

    /**
     * Creates a controller with its admin queue counted as connected, its KATO {@code requestedKatoMs} as bounded by
     * {@link ConnectLimits#katoMs}.
     *
     * @return the controller, or null when a {@link ConnectLimits} cap is reached or no cntlid of the subsystem is
     *         free (logged): the Connect is then answered Connect Controller Busy
     */
    TargetController createController(Subsystem s, String hostnqn, long hostIdHigh, long hostIdLow,
                                      int requestedKatoMs, long nowNs) {
        ConnectLimits limits = controllers.limits();
        int katoMs = limits.katoMs(s.isDiscovery(), requestedKatoMs);
        TargetController c = controllers.add(s, hostnqn, id -> new TargetController(id, s, hostnqn,
                hostIdHigh, hostIdLow, katoMs, options, this, nowNs));
        if (c == null) {
            return null;
        }
        c.queueOpened();
        s.attach(c);
        metrics.controllerUp();
        LOG.info("controller created: cntlid={}, subnqn={}, hostnqn={}, katoMs={}{}", c.cntlid, s.subnqn(), hostnqn,
                katoMs, katoMs == requestedKatoMs ? "" : " (asked " + Integer.toUnsignedString(requestedKatoMs)
                        + "; 0 is " + (s.isDiscovery() ? "discovery " + ConnectLimits.DISCOVERY_KATO_MS
                        : "defaultKatoMs " + limits.defaultKatoMs()) + ", maxKatoMs=" + limits.maxKatoMs() + ")");
        if (s.isRemoved()) {
            c.destroy("subsystem removed");
        }
        return c;
    }

    /**
     * Counts a queue of {@code hostnqn} about to be connected with {@code growBytes} more registered memory, unless
     * the host is at {@link ConnectLimits#maxQueuesPerHost()} or the node would go beyond
     * {@link ConnectLimits#maxRegisteredBytes()} (logged, naming the cap and its property). Undone by
     * {@link #queueGone}.
     */
    boolean admitQueue(String hostnqn, int qid, long growBytes, String peer) {
        long max = controllers.limits().maxRegisteredBytes();
        long now = registeredBytes.get();
        if (now + growBytes > max) {
            metrics.connectRefused("maxRegisteredBytes");
            LOG.warn("connect refused: controller busy: registered queue memory at the cap: registeredBytes={}, "
                            + "queueBytes={}, maxRegisteredBytes={} ({}), qid={}, hostnqn={}, peer={}", now, growBytes,
                    max, ConnectLimits.property("maxRegisteredBytes"), qid, hostnqn, peer);
            return false;
        }
        return controllers.admitQueue(hostnqn, qid, peer);
    }

    /** A queue counted by {@link #admitQueue} is torn down. */
    void queueGone(String hostnqn) {
        controllers.queueGone(hostnqn);
    }

    void controllerGone(TargetController c) {
        if (controllers.remove(c)) {
            metrics.controllerDown();
        }
    }

    private void acceptLoop() {
        while (running) {
            CmId id;
            try {
                id = listener.getRequest(200_000_000L);
            } catch (RuntimeException e) {
                if (running) {
                    LOG.warn("getRequest failed: {}", e.toString());
                }
                continue;
            }
            if (id == null) {
                continue;
            }
            try {
                handleConnectRequest(id);
            } catch (RuntimeException e) {
                LOG.warn("connect request failed: peer={}: {}", id.remoteAddress(), e.toString());
                try {
                    id.close();
                } catch (RuntimeException ignored) {
                    // already closed
                }
            }
        }
    }

    private void handleConnectRequest(CmId id) {
        byte[] pd = id.privateData();
        if (pd == null || pd.length < CmPrivateData.REQUEST_LENGTH) {
            reject(id, CmPrivateData.REJECT_INVALID_PRIVATE_DATA_LENGTH, "private data lengthBytes="
                    + (pd == null ? 0 : pd.length) + ", min=" + CmPrivateData.REQUEST_LENGTH);
            return;
        }
        CmPrivateData.Request req = CmPrivateData.Request.decode(pd);
        if (req.recfmt() != 0) {
            reject(id, CmPrivateData.REJECT_INVALID_RECFMT, "recfmt=" + req.recfmt() + ", supported=0");
            return;
        }
        if (req.qid() > options.maxIoQueues()) {
            reject(id, CmPrivateData.REJECT_INVALID_QID, "qid=" + req.qid() + ", min=0, max=" + options.maxIoQueues());
            return;
        }
        int entries = req.hsqsize() + 1;
        int max = options.maxEntries(req.qid());
        if (entries < 2 || entries > max) {
            reject(id, CmPrivateData.REJECT_INVALID_HSQSIZE, "hsqsize=" + req.hsqsize() + ", min=1, max=" + (max - 1)
                    + " (0-based), qid=" + req.qid());
            return;
        }
        if (req.hrqsize() < 1) {
            reject(id, CmPrivateData.REJECT_INVALID_HRQSIZE, "hrqsize=" + req.hrqsize() + ", min=1");
            return;
        }
        RdmaQueue q;
        try {
            q = new RdmaQueue(this, id, req.qid(), entries);
        } catch (RuntimeException e) {
            LOG.warn("queue allocation failed: qid={}, entries={}, peer={}: {}", req.qid(), entries,
                    id.remoteAddress(), e.toString());
            reject(id, CmPrivateData.REJECT_NO_RESOURCES, "no resources: " + e.getMessage());
            return;
        }
        q.pending = true;
        pending.admit(q); // a full pending limit evicts an older pending queue (PendingQueues), never this one
        // the peer's part of the handshake is awaited off this thread: a silent peer must not hold the others
        handshakes.accept(q, id, new CmPrivateData.Accept(0, entries).encode(), pollers::handOff);
    }

    /** The poller pool (tests: to find a poller's thread); null before {@link #start}. */
    PollerPool pollers() {
        return pollers;
    }

    private void reject(CmId id, int sts, String detail) {
        LOG.info("connect request rejected: sts=0x{}, {}, peer={}", Integer.toHexString(sts), detail,
                id.remoteAddress());
        try {
            id.reject(new CmPrivateData.Reject(0, sts).encode());
        } catch (RuntimeException e) {
            LOG.debug("reject failed: {}", e.toString());
            id.close();
        }
    }

    /** Stops accepting, tears down every queue, destroys every controller. Idempotent. */
    @Override
    public synchronized void close() {
        store.removeListener(hostsListener);
        if (!running) {
            return;
        }
        running = false;
        CmListener l = listener;
        if (l != null) {
            l.close();
        }
        Thread t = acceptor;
        if (t != null) {
            try {
                t.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        QueueHandshakes h = handshakes;
        if (h != null) {
            h.stop(options.connectTimeoutNs() / 1_000_000 + 1_000); // each ends by its deadline
        }
        PollerPool p = pollers;
        if (p != null) {
            p.stop(10_000);
        }
        dhchapWork.close(); // the pollers are stopped: no queue waits for a DH computation any more
        copySnapshotWork.close();
        for (TargetController c : controllers.all()) {
            c.destroy("target shutdown");
        }
        QueueReaper r = reaper;
        if (r != null) {
            r.stop(10_000); // every queue's QP, CQ and memory released before the protection domains
        }
        closed = true; // every queue is closed (pollers stopped, acceptor joined): their memory is deregistered
        for (var e : protectionDomains.entrySet()) {
            try {
                e.getValue().close();
            } catch (RuntimeException ex) {
                LOG.warn("protection domain close failed: device={}: {}", e.getKey().name(), ex.toString());
            }
        }
        protectionDomains.clear();
        LOG.info("target stopped");
    }
}
