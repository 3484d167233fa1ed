package io.rdmablock.node.target;

import io.rdmablock.node.failover.AnaState;
import io.rdmablock.node.failover.EpochFencedVolumeIo;
import io.rdmablock.node.failover.ExportRole;
import io.rdmablock.node.failover.IoGate;
import io.rdmablock.node.failover.PeerLeaseGrants;
import io.rdmablock.node.failover.PrimaryLease;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.NamespaceIdDescriptor;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An NVM subsystem: its subnqn, one namespace (nsid 1) backed by one store {@link StoreVolume}, the hosts allowed to
 * connect (the volume's allow-list), its replication {@link Mode}, its NVMe ANA state (NVMe 1.4 §8.20; one ANA group,
 * id 1, holding nsid 1; {@link #anaState()}, change count for log page 0Ch) and the {@link VolumeIo.Factory} its I/O
 * queues get their store handle from. Or the node's discovery subsystem ({@link #discovery()}, the well-known NQN
 * {@value DiscoveryLogDescriptor#DISCOVERY_NQN}): no namespace, any host, admin queue only. Thread-safe: controllers
 * attach and detach from any poller; the volume's size is read per command (it only grows).
 */
public final class Subsystem {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Subsystem.class);
    /** subnqn prefix: {@code nqn.2026-11.io.rdmablock:volume:<volume name>}. */
    public static final String NQN_PREFIX = "nqn.2026-11.io.rdmablock:volume:";
    /** Host NQN prefix of the cluster's nodes (as {@code io.rdmablock.mgmt.client.Node#HOSTNQN_PREFIX}). */
    public static final String NODE_HOSTNQN_PREFIX = "nqn.2026-11.io.rdmablock:node:";
    /** The one namespace id of every subsystem. */
    public static final int NSID = 1;

    private final String subnqn;
    /** The namespace's volume; null for the discovery subsystem. */
    private final StoreVolume volume;
    /** EUI64, NGUID, UUID of the namespace (stable: derived from the volume id); null for the discovery subsystem. */
    private final NamespaceIdDescriptor.Ids namespaceIds;
    /** Live controllers and destroyed ones whose queues are still draining. */
    private final CopyOnWriteArrayList<TargetController> controllers = new CopyOnWriteArrayList<>();
    private volatile boolean removed;
    /** Hosts without a DH-HMAC-CHAP secret are refused at Connect ({@link #requireAuth(boolean)}). */
    private volatile boolean requireAuth;
    /** The node's own copy's volume I/O ({@link Mode#PLAIN}; {@code node.io.LocalVolumeIo}, given by the node). */
    private final VolumeIo.Factory localIo;
    private volatile VolumeIo.Factory volumeIoFactory; // each I/O queue's at its Connect; swappable at runtime
    /** Mode and (secondary) the primary node's host, replaced together; a new object on every change of either. */
    private volatile ExportRole role = new ExportRole(Mode.PLAIN, null, Set.of(), 0);
    /**
     * Highest epoch a forwarded command may raise this copy to ({@link EpochFencedVolumeIo}): the volume's epoch the
     * management plane last told this node plus {@link #epochWindow()}; {@link Long#MAX_VALUE} until told.
     */
    private volatile long epochCeiling = Long.MAX_VALUE;
    /**
     * How far above the epoch the management plane last told this node a forwarded command may raise a secondary
     * copy's epoch: the epochs the management plane can assign before this node's next heartbeat answer (each
     * promotion, drop or resync completion adds 1). {@link TargetTuning#epochWindow()} (default 16, 1..1M). */
    private final long epochWindow;
    /**
     * What the I/O path reads once per command ({@link #ioGate()}): the role and the status hosts other than a
     * secondary's primary get. Replaced (never mutated) whenever the role or {@link #activating} changes.
     */
    private volatile IoGate ioGate = new IoGate(role, 0, false);
    /** Guards the ANA bookkeeping below (writers only; readers use the volatile fields). */
    private final Object anaLock = new Object();
    /** The ANA state last published to hosts (log page 0Ch, notices). Written under {@link #anaLock}. */
    private volatile AnaState publishedAnaState = AnaState.OPTIMIZED;
    /** ANA change count (log page 0Ch header and descriptor bytes 0..7 / 8..15): bumped per published change. */
    private volatile long anaChangeCount;
    private final io.rdmablock.node.qos.VolumeQosLimiter qos = new io.rdmablock.node.qos.VolumeQosLimiter();

    /**
     * How this node exports the volume (docs/replication.md, docs/failover.md). Changed by the management sync
     * ({@link #plain}, {@link #primary}, {@link #secondaryOf}); a change of mode keeps the associations of hosts still
     * admitted: each I/O queue re-opens the new mode's {@link VolumeIo} once its commands in flight have drained
     * (meanwhile its new commands get ANA Transition), and hosts see the new ANA state.
     */
    public enum Mode {
        /** Not replicated: the volume's allow-list admits hosts; the local copy serves them; CDW2-3 are ignored. */
        PLAIN,
        /** This node is the primary: as PLAIN for admission; its I/O queues get the factory given to {@link #primary}. */
        PRIMARY,
        /**
         * This node holds a secondary copy: the allow-listed hosts are admitted with ANA Inaccessible (their I/O gets
         * SCT 3h SC 02h); the nodes the management plane names as holding the volume's other copies (the primary and
         * the copies that may succeed it) are admitted once they authenticate with their node link secret
         * (docs/authentication.md, "Node identities") and served, their write-type commands fenced by the epoch they
         * carry ({@link EpochFencedVolumeIo}).
         */
        SECONDARY
    }

    /** SCT 3h (Path Related Status), SC 02h Asymmetric Access Inaccessible, DNR 0 (NVMe 1.4, Path Related Status). */
    static final int ANA_INACCESSIBLE = io.rdmablock.rdma.fabric.NvmeStatus.of(3, 0x02, false);
    /** SCT 3h, SC 03h Asymmetric Access Transition, DNR 0: the host retries (this path or another). */
    static final int ANA_TRANSITION = io.rdmablock.rdma.fabric.NvmeStatus.of(3, 0x03, false);

    Subsystem(String subnqn, StoreVolume volume, long epochWindow, VolumeIo.Factory localIo) {
        this.subnqn = subnqn;
        this.epochWindow = epochWindow;
        this.localIo = localIo;
        this.volumeIoFactory = localIo;
        this.volume = volume;
        this.namespaceIds = volume == null ? null : NamespaceIds.of(volume.id());
    }

    /** The discovery subsystem of a node (NQN {@value DiscoveryLogDescriptor#DISCOVERY_NQN}). */
    static Subsystem discovery() {
        return new Subsystem(DiscoveryLogDescriptor.DISCOVERY_NQN, null, TargetTuning.DEFAULT_EPOCH_WINDOW, null);
    }

    /** True for the discovery subsystem: Identify CNTRLTYPE 2, Discovery log page, no I/O queues, any host. */
    boolean isDiscovery() {
        return volume == null;
    }

    /** EUI64, NGUID, UUID and CSI of namespace 1; null for the discovery subsystem. */
    NamespaceIdDescriptor.Ids namespaceIds() {
        return namespaceIds;
    }

    /** The subnqn of a volume by name. */
    public static String nqnFor(String volumeName) {
        return NQN_PREFIX + volumeName;
    }

    public String subnqn() {
        return subnqn;
    }

    /** The namespace's volume; null for the discovery subsystem ({@link #isDiscovery()}). */
    public StoreVolume volume() {
        return volume;
    }

    /**
     * True when {@code hostnqn} may connect: the allow-list holds {@link VolumeSpec#ANY_HOST} or the hostnqn (an
     * empty list admits no host, as Linux nvmet and SPDK); in {@link Mode#SECONDARY} also the primary node's host NQN
     * given to {@link #secondaryOf} (docs/failover.md: a secondary exports the volume to its hosts as ANA
     * Inaccessible, so they hold a path ready for a failover) the peer nodes it names ({@link ExportRole#exempts}). A node's
     * host NQN that is not a named peer is treated as any host's.
     */
    public boolean allowsHost(String hostnqn) {
        if (volume == null) {
            return true; // discovery: any host; the log page lists only what the host may connect to
        }
        if (role.exempts(hostnqn)) {
            return true;
        }
        if (hostnqn != null && hostnqn.startsWith(NODE_HOSTNQN_PREFIX) && role.mode() == Mode.PRIMARY) {
            return false; // a node forwards only to secondaries; on a primary its epoch would not be checked
        }
        return volume.isHostAllowed(hostnqn);
    }

    /**
     * Whether only hosts with a DH-HMAC-CHAP secret ({@link HostSecrets}) may connect: any other host is answered
     * Connect Invalid Host. A secondary's peer nodes must authenticate whatever this says ({@link Connect}).
     * Applies to Connects from then on; {@link #revokeHostsWithoutSecrets} ends the associations of hosts that
     * connected before without a secret. Default false. Any thread.
     */
    public void requireAuth(boolean on) {
        requireAuth = on;
    }

    /** @return whether hosts without a DH-HMAC-CHAP secret are refused ({@link #requireAuth(boolean)}) */
    public boolean requiresAuth() {
        return requireAuth;
    }

    /** The hosts this subsystem admits, for log lines: the allow-list (empty = none) and a secondary's peers. */
    Set<String> admittedHosts() {
        ExportRole r = role;
        if (volume == null) {
            return Set.of();
        }
        if (r.mode() != Mode.SECONDARY) {
            return volume.allowedHosts();
        }
        Set<String> s = new TreeSet<>(volume.allowedHosts());
        s.addAll(r.peers());
        return s;
    }

    /** The current replication mode (PLAIN for the discovery subsystem). */
    public Mode mode() {
        return role.mode();
    }

    /** The primary node's host NQN in {@link Mode#SECONDARY}, else null. */
    public String primaryHostNqn() {
        return role.primaryHostNqn();
    }

    /**
     * Not replicated ({@link Mode#PLAIN}, the initial mode): the allow-list admits hosts, I/O queues get the node's own
     * copy's volume I/O. A change of mode keeps the hosts' associations: each I/O queue re-opens its {@link VolumeIo}
     * from the new factory once its commands in flight have drained (docs/failover.md). Any thread. */
    public synchronized void plain() {
        setRole(Mode.PLAIN, null, Set.of(), localIo);
    }

    /**
     * This node is the volume's primary ({@link Mode#PRIMARY}): the allow-list admits hosts, I/O queues get their
     * handle from {@code replicated} (e.g. the local copy plus the in-sync secondaries). A change of mode keeps the
     * associations (queues re-open their handle once drained); staying primary with another factory only swaps the
     * factory (queues opened before keep theirs until they reconnect). Any thread.
     *
     * @throws NullPointerException when {@code replicated} is null
     */
    public synchronized void primary(VolumeIo.Factory replicated) {
        java.util.Objects.requireNonNull(replicated, "replicated");
        setRole(Mode.PRIMARY, null, Set.of(), replicated);
    }

    /**
     * This node holds a secondary copy ({@link Mode#SECONDARY}): the allow-listed hosts stay admitted (their I/O gets
     * ANA Inaccessible, SCT 3h SC 02h) and so is {@code primaryHostNqn} (the primary node's
     * {@code nqn.2026-11.io.rdmablock:node:<nodeId>}), whose write-type commands are fenced by the epoch in CDW2-3
     * ({@link EpochFencedVolumeIo}); its READ is served unchecked. A change of mode or of the primary keeps the
     * associations of hosts still admitted (their queues re-open their handle once drained) and ends those of the
     * previous primary's host NQN. Any thread.
     *
     * @throws IllegalArgumentException when {@code primaryHostNqn} is null or blank
     */
    public synchronized void secondaryOf(String primaryHostNqn) {
        secondaryOf(primaryHostNqn, Set.of());
    }

    /**
     * As {@link #secondaryOf(String)}, admitting as peer nodes {@code primaryHostNqn} and {@code successors} (the host
     * NQNs of the nodes holding the volume's other copies, any of which the management plane may promote; this
     * node's own is ignored by the caller's choice). Each must still authenticate with its node link secret.
     *
     * @throws IllegalArgumentException when {@code primaryHostNqn} is null or blank
     */
    public synchronized void secondaryOf(String primaryHostNqn, Set<String> successors) {
        if (primaryHostNqn == null || primaryHostNqn.isBlank()) {
            throw new IllegalArgumentException("invalid primaryHostNqn: primaryHostNqn=" + primaryHostNqn
                    + " (the primary node's host NQN is required)");
        }
        Set<String> peers = new TreeSet<>(successors);
        peers.add(primaryHostNqn);
        setRole(Mode.SECONDARY, primaryHostNqn, peers, q -> EpochFencedVolumeIo.open(q, this::epochCeiling));
    }

    /**
     * Sets the {@link #epochCeiling} from the volume's epoch the management plane told this node ({@code epoch} +
     * {@link #epochWindow()}); ignored when {@code epoch <= 0} (an older server). Any thread.
     */
    public void managedEpoch(long epoch) {
        if (epoch > 0) {
            epochCeiling = epoch > Long.MAX_VALUE - epochWindow ? Long.MAX_VALUE : epoch + epochWindow;
        }
    }

    /** How far above the managed epoch a forwarded command may raise this copy's ({@link #managedEpoch}). */
    public long epochWindow() {
        return epochWindow;
    }

    /** The highest epoch a forwarded command may raise this copy to ({@link #managedEpoch}). */
    public long epochCeiling() {
        return epochCeiling;
    }

    /** The peer nodes admitted to this secondary (empty unless {@link Mode#SECONDARY}). */
    public Set<String> peers() {
        return role.peers();
    }

    private void setRole(Mode mode, String primaryHostNqn, Set<String> peers, VolumeIo.Factory factory) {
        if (volume == null) {
            throw new IllegalStateException("the discovery subsystem has no replication mode");
        }
        ExportRole prev = role;
        volumeIoFactory = factory; // before the role: a queue re-opening under the new role gets the new handle
        if (prev.mode() == mode && java.util.Objects.equals(prev.primaryHostNqn(), primaryHostNqn)
                && prev.peers().equals(peers)) {
            return;
        }
        ExportRole next = new ExportRole(mode, primaryHostNqn, peers, prev.generation() + 1);
        role = next;
        publishGate();
        LOG.info("subsystem mode changed: subnqn={}, mode={} -> {}, primaryHostNqn={}, peers={}, generation={}",
                subnqn, prev.mode(), next.mode(), next.primaryHostNqn(), next.peers(), next.generation());
        refreshAnaState(System.nanoTime());
        String oldPrimary = prev.primaryHostNqn();
        if (oldPrimary != null && !oldPrimary.equals(next.primaryHostNqn())) {
            for (TargetController c : controllers) {
                if (c.hostnqn().equals(oldPrimary)) {
                    c.destroy("no longer the primary of this secondary: hostnqn=" + oldPrimary + ", mode="
                            + next.mode() + ", primaryHostNqn=" + next.primaryHostNqn());
                }
            }
        }
        revokeDisallowedHosts();
    }

    /** Rebuilds {@link #ioGate} from the role and the activating flag. Callers hold this or {@link #anaLock}. */
    private void publishGate() {
        synchronized (anaLock) {
            ExportRole r = role;
            int status = switch (r.mode()) {
                case PLAIN -> 0;
                case PRIMARY -> activating ? ANA_TRANSITION : 0;
                case SECONDARY -> ANA_INACCESSIBLE;
            };
            ioGate = new IoGate(r, status, r.mode() == Mode.PRIMARY);
        }
    }

    /** The volume's limits on this node, shared by its I/O queues while it is not a secondary (docs/qos.md). */
    public io.rdmablock.node.qos.VolumeQosLimiter qos() {
        return qos;
    }

    /** The gate the I/O path reads, one volatile read per command. */
    IoGate ioGate() {
        return ioGate;
    }

    /** The current role (mode, primary, generation). */
    ExportRole role() {
        return role;
    }

    /** True while a newly promoted primary activates its epoch and waits out the old lease (ANA Change). */
    private volatile boolean activating;
    /** Until when this primary may serve host I/O: the management plane's lease and the peer lease combined. */
    private final PrimaryLease lease = new PrimaryLease();

    /**
     * Marks a newly promoted primary as activating (true) or done (false): while activating, hosts see ANA
     * {@link AnaState#CHANGE} and their I/O gets the ANA Transition status. A change of the state hosts see is an ANA
     * change (count bumped, notices sent). Any thread.
     */
    public void activating(boolean on) {
        if (volume == null) {
            return;
        }
        synchronized (anaLock) {
            activating = on;
            publishGate();
        }
        refreshAnaState(System.nanoTime());
    }

    /**
     * Sets the primary's lease end, a {@link System#nanoTime()} value: host I/O is served only before it (after:
     * ANA {@link AnaState#CHANGE}, noticed lazily by the I/O path, the ANA log page and each admin queue's
     * housekeeping every 10 ms). {@code Long.MAX_VALUE} (the default) means no lease (single copy, no management
     * plane). Any thread.
     */
    public void leaseDeadline(long nanoTime) {
        lease.mgmt(nanoTime);
        if (volume != null) {
            refreshAnaState(System.nanoTime());
        }
    }

    /** No peer lease ({@link #peerLeaseDeadline}). */ public static final long NO_PEER_LEASE = PrimaryLease.NO_PEER_LEASE;

    /**
     * Sets the primary's peer lease end (docs/failover.md, "Peer lease"), a {@link System#nanoTime()} value: the
     * earliest grant end of its in-sync secondaries, less the margin; {@link #NO_PEER_LEASE} when none holds. Host
     * I/O is served until the later of this and the management plane's lease ({@link #leaseDeadline}); with no
     * management lease at all (Long.MAX_VALUE, a single copy) it changes nothing. Any thread (a primary's lease
     * renewals, a few per second).
     */
    public void peerLeaseDeadline(long nanoTime) {
        lease.peer(nanoTime);
        if (volume != null) {
            refreshAnaState(System.nanoTime());
        }
    }

    /** No grants ({@link #grantLimit}). */ public static final long NO_GRANTS = PeerLeaseGrants.NO_GRANTS;
    private final PeerLeaseGrants grants = new PeerLeaseGrants();

    /**
     * Sets until when this copy, as an in-sync secondary, may grant its primary a peer lease ({@link #grantLease}):
     * the send time of this node's last answered heartbeat + the management plane's {@code peerLeaseMaxMs}
     * (docs/failover.md, "Peer lease"); {@link #NO_GRANTS} when the copy is not an in-sync secondary. Any thread.
     */
    public void grantLimit(long nanoTime) {
        grants.limit(nanoTime);
    }

    /**
     * Grants the primary a lease ({@link PeerLeaseGrants}): until {@code min(now + leaseNs, grantLimit)} by this
     * node's clock, if this copy is a secondary that accepted no epoch above {@code epoch} (a promoted primary's epoch
     * is above every epoch the old primary had, and the promoted copy raised it before it waits out its grants; the
     * end is recorded before this check). Poller thread (admin queue).
     *
     * @return the granted length, ns (&gt; 0); 0 when refused (not a secondary, a higher epoch accepted, no grants)
     */
    long grantLease(long epoch, long leaseNs, long nowNs) {
        if (volume == null) {
            return 0;
        }
        return grants.grant(leaseNs, nowNs,
                () -> role.mode() == Mode.SECONDARY && volume.epochFence().epoch() <= epoch);
    }

    /** {@link PeerLeaseGrants#asked}: peer node {@code hostnqn} asked for a peer lease now. Poller thread. */
    void peerLeaseAsked(String hostnqn, long nowNs) {
        grants.asked(hostnqn, nowNs);
    }

    /** {@link PeerLeaseGrants#askedNanos}: when peer node {@code hostnqn} last asked. Any thread. */
    public long peerLeaseAskedNanos(String hostnqn) {
        return grants.askedNanos(hostnqn);
    }

    /** The latest end of any lease this copy granted (or the subsystem's creation time), a nanoTime value. */
    public long grantedUntilNanos() {
        return grants.grantedUntilNanos();
    }

    /** The lease end set by {@link #leaseDeadline}, a {@link System#nanoTime()} value. */
    public long leaseDeadlineNanos() {
        return lease.deadlineNanos();
    }

    /** True when a lease was set and {@code nowNs} is at or past its end. */
    boolean leaseLapsed(long nowNs) {
        return lease.lapsed(nowNs);
    }

    /**
     * The ANA state hosts (other than a secondary's primary) see for the namespace now: PLAIN {@link
     * AnaState#OPTIMIZED}; PRIMARY {@link AnaState#CHANGE} while activating, {@link AnaState#INACCESSIBLE} past its
     * lease (no bound on how long: not Change, whose ANATT a host enforces), else OPTIMIZED;
     * SECONDARY {@link AnaState#INACCESSIBLE}. Reading it notices a lease lapse (an ANA change).
     */
    public AnaState anaState() {
        long now = System.nanoTime();
        AnaState s = anaStateAt(now);
        if (s != publishedAnaState) {
            refreshAnaState(now);
        }
        return s;
    }

    /**
     * The ANA state {@code hostnqn} sees: {@link AnaState#OPTIMIZED} for a secondary's primary node (its forwarded,
     * epoch-fenced I/O is served), else {@link #anaState()}.
     */
    AnaState anaStateFor(String hostnqn) {
        return role.exempts(hostnqn) ? AnaState.OPTIMIZED : anaState();
    }

    private AnaState anaStateAt(long nowNs) {
        Mode m = role.mode();
        if (m == Mode.SECONDARY) {
            return AnaState.INACCESSIBLE;
        }
        if (m == Mode.PRIMARY && activating) {
            return AnaState.CHANGE; // bounded: the activation of a promoted primary (or a deposed one's last moments)
        }
        if (m == Mode.PRIMARY && leaseLapsed(nowNs)) {
            return AnaState.INACCESSIBLE; // unbounded (e.g. cut from the management plane): not Change, ANATT
        }
        return AnaState.OPTIMIZED;
    }

    /**
     * Publishes the ANA state of {@code nowNs} when it differs from the last published one: bumps the change count,
     * which each controller's admin poller turns into an ANA Change notice
     * ({@link TargetController#pollAsyncEvent}). Any thread; cheap when nothing changed (volatile reads only).
     */
    void refreshAnaState(long nowNs) {
        if (volume == null || anaStateAt(nowNs) == publishedAnaState) {
            return;
        }
        synchronized (anaLock) {
            AnaState now = anaStateAt(nowNs);
            AnaState prev = publishedAnaState;
            if (now == prev) {
                return;
            }
            publishedAnaState = now;
            anaChangeCount = anaChangeCount + 1;
            LOG.info("ANA state changed: subnqn={}, anaState={} -> {}, changeCount={}, mode={}, activating={}, "
                    + "leaseLapsed={}", subnqn, prev, now, anaChangeCount, role.mode(), activating, leaseLapsed(nowNs));
        }
    }

    /** The ANA change count (log page 0Ch): how many changes of the published ANA state there were. */
    long anaChangeCount() {
        return anaChangeCount;
    }

    /** hostnqns of the controllers currently connected. */
    public Set<String> connectedHosts() {
        Set<String> s = new TreeSet<>();
        for (TargetController c : controllers) {
            if (!c.isDestroyed()) {
                s.add(c.hostnqn());
            }
        }
        return s;
    }

    /** The factory the next I/O queue Connect opens its {@link VolumeIo} with (default: the node's own copy's). */
    public VolumeIo.Factory volumeIoFactory() {
        return volumeIoFactory;
    }

    /**
     * Replaces the factory of the volume's {@link VolumeIo}s (e.g. a replicated one when this node becomes the
     * volume's primary). Takes effect at the next I/O queue Connect, or when a queue re-opens its handle after a
     * change of mode: queues connected before keep the handle they opened until then (call {@link #disconnectAll}
     * to end every association now).
     * The mode setters ({@link #plain}, {@link #primary}, {@link #secondaryOf}) set the factory too; a factory set
     * in {@link Mode#SECONDARY} replaces the epoch fence and must provide its own. Any thread.
     *
     * @throws NullPointerException when {@code factory} is null
     */
    public void setVolumeIoFactory(VolumeIo.Factory factory) {
        volumeIoFactory = java.util.Objects.requireNonNull(factory, "factory");
    }

    /** Destroys every controller of this subsystem (hosts reconnect and get the current factory and mode). */
    public void disconnectAll(String reason) {
        for (TargetController c : controllers) {
            c.destroy(reason);
        }
    }

    boolean isRemoved() {
        return removed;
    }

    /**
     * Controllers a new association of this host must wait for (case C8): those made by the same host (hostnqn and
     * HOSTID), live or still draining, and destroyed ones of the same hostnqn whose store I/O is still draining (a
     * restarted host process has a new HOSTID; its old association's stalled writes must not land after its new
     * writes). Live controllers of the same hostnqn with another HOSTID are other processes: left alone.
     */
    java.util.List<TargetController> controllersOf(String hostnqn, long hostIdHigh, long hostIdLow) {
        java.util.List<TargetController> out = new java.util.ArrayList<>();
        for (TargetController c : controllers) {
            if (c.sameHost(hostnqn, hostIdHigh, hostIdLow) || (c.isDestroyed() && c.hostnqn().equals(hostnqn))) {
                out.add(c);
            }
        }
        return out;
    }

    void attach(TargetController c) {
        controllers.add(c);
    }

    void detach(TargetController c) {
        controllers.remove(c);
    }

    /**
     * While {@link #requiresAuth()}: destroys the controllers of hosts that have no entry in {@code secrets} (they
     * connected before authentication was required; their queues tear down on their pollers). Peer nodes always
     * authenticate ({@link Connect}). Hosts that authenticated keep their queues. Any thread.
     */
    public void revokeHostsWithoutSecrets(HostSecrets secrets) {
        if (!requireAuth) {
            return;
        }
        for (TargetController c : controllers) {
            if (!c.isDestroyed() && secrets.lookup(c.hostnqn()) == null) {
                c.destroy("authentication now required and hostnqn=" + c.hostnqn() + " has no DH-HMAC-CHAP secret");
            }
        }
    }

    /** Destroys the controllers of hosts this subsystem no longer admits (after an allow-list or mode change). */
    void revokeDisallowedHosts() {
        for (TargetController c : controllers) {
            if (!c.isDestroyed() && !allowsHost(c.hostnqn())) {
                c.destroy("host no longer admitted: hostnqn=" + c.hostnqn() + ", mode=" + role.mode());
            }
        }
    }

    /** Marks the subsystem removed and destroys every controller (their queues tear down on their pollers). */
    void remove(String reason) {
        removed = true;
        for (TargetController c : controllers) {
            c.destroy(reason);
        }
    }

    @Override
    public String toString() {
        return "Subsystem[" + subnqn + ", volume=" + (volume == null ? "none (discovery)" : volume.id()) + "]";
    }
}
