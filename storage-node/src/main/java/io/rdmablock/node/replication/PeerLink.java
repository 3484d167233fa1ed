package io.rdmablock.node.replication;

import io.rdmablock.nvmf.host.NvmCommand;
import io.rdmablock.nvmf.host.PeerAssociation;
import io.rdmablock.nvmf.host.PeerQueue;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A primary's {@link ForwardLink} to one secondary copy over NVMe-oF: each {@link #open} sets up one controller
 * association on the shared host-side code ({@link PeerAssociation}: admin queue + one I/O queue, hostnqn = this
 * node's) on this link's own thread, and wraps its I/O queue in a {@link PeerQueue} owned by the host queue's
 * poller. The link thread also sends each association's Keep Alive every KATO / 3 and closes admin queues (never the
 * pollers: both wait for the peer). One thread per link, so a dead or hung secondary delays no other copy's set-up
 * or Keep Alive. An association is closed only through its queue ({@link ForwardQueue#close}, on the poller that
 * owns it); {@link #close} stops new opens and the Keep Alives, and the thread ends once every association is gone.
 */
public final class PeerLink implements ForwardLink {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLink.class);
    /** KATO of the associations to secondaries, ms: long enough that a loaded box does not drop a live primary. */
    static final int KEEP_ALIVE_TIMEOUT_MS = 15_000;
    /** Bound of each connection step (CM, Fabrics Connect, enable): {@code rdmablock.replica.openTimeoutMs}, ns. */
    private final long setupTimeoutNs;
    /** Pause between Fabrics Connects a secondary refused with a status, ms. */
    static final int CONNECT_RETRY_MS = 200;

    private static final java.util.concurrent.atomic.AtomicLong OPENED = new java.util.concurrent.atomic.AtomicLong();
    private final VerbsProvider provider;
    /** The secondary's fabric address; changes when its node re-registers elsewhere ({@link #retarget}). */
    private volatile InetSocketAddress address;
    private final String subnqn;
    private final String hostnqn;
    private final long commandTimeoutNs;
    private final ScheduledExecutorService thread;
    private final java.util.concurrent.ScheduledFuture<?> keepAlives;
    private final Set<PeerAssociation> associations = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private final java.util.function.BooleanSupplier patient;
    /** This node's secrets toward the secondary's node, read at each connection attempt (they may rotate). */
    private final java.util.function.Supplier<Secrets> secrets;
    /** The peer lease's own association, for when no host queue's is open (link thread only). */
    private final LeaseAssociation lease;

    /**
     * The DH-HMAC-CHAP secrets of a link to a peer node (docs/authentication.md, "Node identities"): the host secret
     * this node proves and the controller secret the peer must prove back; {@link #NONE} when the management plane
     * gave none (the secondary then refuses the Connect: Connect Invalid Host).
     */
    public record Secrets(io.rdmablock.nvme.auth.DhchapSecret host,
                          io.rdmablock.nvme.auth.DhchapSecret ctrl) {
        /** No secrets. */
        public static final Secrets NONE = new Secrets(null, null);

        @Override
        public String toString() {
            return "Secrets[" + (host == null ? "none" : "set") + "]";
        }
    }

    /**
     * @param address          the secondary's fabric address; null when unknown (every open then fails)
     * @param commandTimeoutNs replica timeout for each forwarded command
     */
    public PeerLink(VerbsProvider provider, InetSocketAddress address, String subnqn, String hostnqn,
                    long commandTimeoutNs) {
        this(provider, address, subnqn, hostnqn, commandTimeoutNs, () -> false, () -> Secrets.NONE,
                ReplicatedWrites.DEFAULT_OPEN_TIMEOUT_NS);
    }

    /**
     * @param patient true while dropping this copy would leave fewer copies in sync than the volume's minimum (writes
     *                would then be refused anyway): a connection that fails is then tried again for the set-up bound
     *                (e.g. every node restarting at once), not only a Connect refused with a status
     */
    public PeerLink(VerbsProvider provider, InetSocketAddress address, String subnqn, String hostnqn,
                    long commandTimeoutNs, java.util.function.BooleanSupplier patient) {
        this(provider, address, subnqn, hostnqn, commandTimeoutNs, patient, () -> Secrets.NONE,
                ReplicatedWrites.DEFAULT_OPEN_TIMEOUT_NS);
    }

    /**
     * @param secrets        this node's link secrets toward the secondary's node, read at each connection attempt
     * @param setupTimeoutNs bound of each connection step (CM, Fabrics Connect, enable), ns
     *                       ({@code rdmablock.replica.openTimeoutMs})
     */
    public PeerLink(VerbsProvider provider, InetSocketAddress address, String subnqn, String hostnqn,
                    long commandTimeoutNs, java.util.function.BooleanSupplier patient,
                    java.util.function.Supplier<Secrets> secrets, long setupTimeoutNs) {
        this.setupTimeoutNs = setupTimeoutNs;
        this.secrets = java.util.Objects.requireNonNull(secrets, "secrets");
        this.patient = patient;
        this.provider = provider;
        this.address = address;
        this.subnqn = subnqn;
        this.hostnqn = hostnqn;
        this.commandTimeoutNs = commandTimeoutNs;
        this.lease = new LeaseAssociation(provider, subnqn, hostnqn, secrets);
        this.thread = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "replica-link-" + address);
            t.setDaemon(true);
            return t;
        });
        long periodMs = KEEP_ALIVE_TIMEOUT_MS / 3;
        this.keepAlives = thread.scheduleWithFixedDelay(this::keepAlive, periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /** Keep Alive of every association (link thread, every few seconds). */
    public void keepAlive() {
        lease.keepAlive();
        for (PeerAssociation a : associations) {
            try {
                a.keepAlive();
            } catch (RuntimeException e) {
                LOG.debug("keep alive to {} failed (its I/O queue reports the loss): {}", address, e.toString());
            }
        }
    }

    @Override
    public CompletableFuture<Long> renewLease(long epoch, long leaseMs) {
        // 0 when nothing granted it: refused, no association could be made, or the link is closed
        return adminCommand("peer lease", a -> a.peerLease(epoch, leaseMs),
                to -> lease.renew(to, epoch, leaseMs, Math.min(setupTimeoutNs, TimeUnit.MILLISECONDS.toNanos(leaseMs)),
                        KEEP_ALIVE_TIMEOUT_MS)) // a lease's worth at most: the link thread forwards too
                .exceptionally(e -> 0L);
    }

    @Override
    public CompletableFuture<Integer> copySnapshot(long epoch, long snapshotId, boolean delete, long timeoutNs) {
        int action = delete ? io.rdmablock.rdma.fabric.Opcodes.COPY_SNAPSHOT_DELETE
                : io.rdmablock.rdma.fabric.Opcodes.COPY_SNAPSHOT_TAKE;
        return adminCommand("copy snapshot", a -> a.copySnapshot(epoch, snapshotId, action, timeoutNs),
                to -> lease.copySnapshot(to, epoch, snapshotId, action, Math.min(setupTimeoutNs, timeoutNs), timeoutNs,
                        KEEP_ALIVE_TIMEOUT_MS));
    }

    /**
     * Runs an admin command that waits for the peer on this link's thread (never a poller): on the first open host
     * queue's association that answers, else (none open: no host connected, or the hosts reconnecting; or all
     * failing) on the lease's own association ({@code fallback}, given the secondary's address).
     *
     * @return completed with the answer, or exceptionally with the last failure (or {@link IllegalStateException}
     *     when the link is closed or the address unknown)
     */
    private <T> CompletableFuture<T> adminCommand(String what, java.util.function.Function<PeerAssociation, T> command,
                                                  java.util.function.Function<InetSocketAddress, T> fallback) {
        CompletableFuture<T> f = new CompletableFuture<>();
        if (closed) {
            f.completeExceptionally(new IllegalStateException("link to " + address + " closed"));
            return f;
        }
        execute(() -> {
            RuntimeException last = null;
            for (PeerAssociation a : associations) {
                try {
                    f.complete(command.apply(a));
                    return;
                } catch (RuntimeException e) {
                    last = e;
                    LOG.debug("{} to {} failed on one association: {}", what, address, e.toString());
                }
            }
            InetSocketAddress to = address;
            try {
                if (closed || to == null) {
                    throw last != null ? last : new IllegalStateException("link to " + to + " closed");
                }
                f.complete(fallback.apply(to));
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    /**
     * Connects one association. A Fabrics Connect the secondary answers with an NVMe status (its node is up but does
     * not export the volume yet, e.g. right after a restart before its first heartbeat answer) is tried again every
     * {@value #CONNECT_RETRY_MS} ms until {@link #setupTimeoutNs} from the first attempt; a refused or lost
     * connection fails at once (the node is down: the copy is dropped without waiting).
     */
    private PeerAssociation connect(ProtectionDomain domain, int entries, byte[] hostId) {
        long deadline = System.nanoTime() + setupTimeoutNs;
        for (int attempt = 1; ; attempt++) {
            // the address is read at each attempt: the secondary may have moved meanwhile (retarget)
            Secrets k = secrets.get(); // read at each attempt too: rotated secrets arrive with a heartbeat answer
            PeerAssociation.Params params = new PeerAssociation.Params(address, subnqn, hostnqn, 1,
                    Math.max(2, entries), KEEP_ALIVE_TIMEOUT_MS, setupTimeoutNs, k.host(), k.ctrl());
            try {
                return PeerAssociation.connect(provider, domain, params, hostId);
            } catch (RuntimeException e) {
                boolean refusedWithStatus = e instanceof io.rdmablock.nvmf.host.NvmfStatusException;
                if (closed || (!refusedWithStatus && !patient.getAsBoolean())
                        || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CONNECT_RETRY_MS) - deadline > 0) {
                    throw e;
                }
                if (attempt == 1) {
                    LOG.info("no association to the secondary yet (trying again every {} ms for up to {} ms): address={}, "
                            + "subnqn={}: {}", CONNECT_RETRY_MS, setupTimeoutNs / 1_000_000, address, subnqn,
                            e.getMessage());
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(CONNECT_RETRY_MS));
            }
        }
    }

    /**
     * Follows the secondary to a new fabric address (its node restarted on another port or host): the next
     * association is made there; associations already open stay until they fail (the old address has no peer).
     */
    @Override
    public void retarget(InetSocketAddress next) {
        InetSocketAddress was = address;
        if (next != null && !next.equals(was)) {
            address = next;
            LOG.info("secondary moved: subnqn={}, address {} -> {}", subnqn, was, next);
        }
    }

    @Override
    public CompletableFuture<ForwardQueue> open(int entries, ProtectionDomain pd, ForwardQueue.Listener listener) {
        CompletableFuture<ForwardQueue> f = new CompletableFuture<>();
        execute(() -> {
            if (closed || address == null) {
                f.completeExceptionally(new IllegalStateException(closed ? "link to " + address + " closed"
                        : "the secondary has no fabric address (not registered)"));
                return;
            }
            io.rdmablock.rdma.verbs.CmId route = null;
            ProtectionDomain own = null;
            try {
                if (pd == null) {
                    // no host queue behind this open (a new primary's activation FLUSH, which carries no data): a
                    // protection domain of its own on the device that routes to the secondary
                    route = provider.createId();
                    route.resolve(address, setupTimeoutNs);
                    own = route.device().allocPd();
                }
                ProtectionDomain domain = own != null ? own : pd;
                // one association per host queue, each with its own HOSTID: the secondary fences a new association
                // of the same hostnqn and HOSTID against the old one (a host restart), and these must coexist
                byte[] hostId = PeerAssociation.hostId(hostnqn + "/" + subnqn + "/" + ProcessHandle.current().pid()
                        + "/" + System.nanoTime() + "/" + OPENED.incrementAndGet());
                PeerAssociation a = connect(domain, entries, hostId);
                PeerQueue q;
                try {
                    q = new PeerQueue(a.ioQueue(0), commandTimeoutNs, listener::forwarded);
                    q.inCapsuleBytes(a.limits().inCapsuleBytes()); // a forward's data up to this goes in the capsule
                } catch (RuntimeException e) {
                    closeQuietly(a);
                    throw e;
                }
                associations.add(a);
                f.complete(new Queue(a, q, own, route));
            } catch (RuntimeException e) {
                LOG.warn("no forward queue to the secondary: address={}, subnqn={}: {}", address, subnqn,
                        e.toString());
                closeQuietly(own);
                closeQuietly(route);
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    @Override
    public void close() {
        closed = true;
        keepAlives.cancel(false);
        execute(() -> {
            lease.close();
            endIfIdle();
        });
    }

    /** Ends the link thread once closed and no association is left (link thread). */
    private void endIfIdle() {
        if (closed && associations.isEmpty()) {
            thread.shutdown();
        }
    }

    /** Runs {@code task} on the link thread; inline when the thread has ended already. */
    private void execute(Runnable task) {
        try {
            thread.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            task.run();
        }
    }

    /** Closes {@code c} (null: nothing), logging a failure at debug. */
    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close failed: {}", e.toString());
        }
    }

    /** The poller's side: a {@link PeerQueue}; a host's command is forwarded from its own SQE. */
    private final class Queue implements ForwardQueue {
        private final PeerAssociation association;
        private final PeerQueue queue;
        /** The queue's own protection domain and the CM id it was found through (no host queue's), else null. */
        private final ProtectionDomain ownPd;
        private final io.rdmablock.rdma.verbs.CmId route;
        private boolean closedHere;
        private final java.util.List<io.rdmablock.rdma.verbs.MemoryRegion> regions = new java.util.ArrayList<>();

        Queue(PeerAssociation association, PeerQueue queue, ProtectionDomain ownPd,
              io.rdmablock.rdma.verbs.CmId route) {
            this.association = association;
            this.queue = queue;
            this.ownPd = ownPd;
            this.route = route;
        }

        @Override
        public boolean forward(MemorySegment sqe, long epoch, long dataAddress, int dataLength, int rkey, int lkey,
                               int tag, long nowNs) {
            return queue.forward(sqe, epoch, dataAddress, dataLength, rkey, lkey, tag, nowNs);
        }

        @Override
        public boolean submit(NvmCommand c, int tag, long nowNs) {
            return queue.submit(c, tag, nowNs);
        }

        @Override
        public int register(java.lang.foreign.MemorySegment segment) {
            if (ownPd == null) {
                throw new UnsupportedOperationException("a host queue's forward queue has no buffer of its own");
            }
            io.rdmablock.rdma.verbs.MemoryRegion mr = ownPd.registerMemory(segment,
                    io.rdmablock.rdma.verbs.Access.ALL);
            regions.add(mr);
            return mr.rkey();
        }

        @Override
        public boolean isBroken() {
            return queue.state() != PeerQueue.State.LIVE;
        }

        @Override
        public int poll(long nowNs) {
            return queue.poll(nowNs);
        }

        @Override
        public int outstanding() {
            return queue.outstanding();
        }

        @Override
        public int await(long timeoutNs) {
            return queue.await(timeoutNs);
        }

        @Override
        public void close() {
            if (closedHere) {
                return;
            }
            closedHere = true;
            try {
                queue.close(); // on the poller: fences the host queue's buffers at once
            } catch (RuntimeException e) {
                LOG.debug("forward queue close failed: {}", e.toString());
            } finally {
                execute(() -> { // the admin queue's teardown waits for the peer: off the poller
                    associations.remove(association);
                    closeQuietly(association);
                    regions.forEach(PeerLink::closeQuietly);
                    closeQuietly(ownPd);
                    closeQuietly(route);
                    endIfIdle();
                });
            }
        }
    }
}
