package io.rdmablock.node.nvmf;

import io.rdmablock.node.store.Volume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.rdma.fabric.DiscoveryLogDescriptor;
import io.rdmablock.rdma.fabric.NamespaceIdDescriptor;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.UUID;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An NVM subsystem: its subnqn, one namespace (nsid 1) backed by one store {@link Volume}, the hosts allowed to
 * connect (the volume's allow-list), its replication {@link Mode} and the {@link VolumeIo.Factory} its I/O queues get
 * their store handle from. Or the node's discovery subsystem ({@link #discovery()}, the well-known NQN
 * {@value DiscoveryLogDescriptor#DISCOVERY_NQN}): no namespace, any host, admin queue only. Thread-safe: controllers
 * attach and detach from any poller; the volume's size is read per command (it only grows).
 */
public final class Subsystem {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Subsystem.class);
    /** subnqn prefix: {@code nqn.2026-11.io.rdmablock:volume:<volume name>}. */
    public static final String NQN_PREFIX = "nqn.2026-11.io.rdmablock:volume:";
    /** The one namespace id of every subsystem. */
    public static final int NSID = 1;

    private final String subnqn;
    /** The namespace's volume; null for the discovery subsystem. */
    private final Volume volume;
    /** EUI64, NGUID, UUID of the namespace (stable: derived from the volume id); null for the discovery subsystem. */
    private final NamespaceIdDescriptor.Ids namespaceIds;
    /** Live controllers and destroyed ones whose queues are still draining. */
    private final CopyOnWriteArrayList<Controller> controllers = new CopyOnWriteArrayList<>();
    private volatile boolean removed;
    /** Opens the {@link VolumeIo} of each I/O queue at its Connect; swappable at runtime. */
    private volatile VolumeIo.Factory volumeIoFactory = LocalVolumeIo::open;
    /** Mode and (secondary) the one admitted host, replaced together. */
    private volatile Role role = new Role(Mode.PLAIN, null);

    /**
     * How this node exports the volume (docs/replication.md). Changed by the management sync ({@link #plain},
     * {@link #primary}, {@link #secondaryOf}); a change of mode ends every association of the subsystem, so each
     * host reconnects under the new mode and gets the new mode's {@link VolumeIo}.
     */
    public enum Mode {
        /** Not replicated: the volume's allow-list admits hosts; the local copy serves them; CDW2-3 are ignored. */
        PLAIN,
        /** This node is the primary: as PLAIN for admission; its I/O queues get the factory given to {@link #primary}. */
        PRIMARY,
        /**
         * This node holds a secondary copy: only the primary node's host NQN is admitted (the allow-list does not
         * apply), and write-type commands are fenced by the epoch they carry ({@link EpochFencedVolumeIo}).
         */
        SECONDARY
    }

    private record Role(Mode mode, String primaryHostNqn) {
    }

    Subsystem(String subnqn, Volume volume) {
        this.subnqn = subnqn;
        this.volume = volume;
        this.namespaceIds = volume == null ? null : namespaceIdsOf(volume.id());
    }

    /** The discovery subsystem of a node (NQN {@value DiscoveryLogDescriptor#DISCOVERY_NQN}). */
    static Subsystem discovery() {
        return new Subsystem(DiscoveryLogDescriptor.DISCOVERY_NQN, null);
    }

    /** True for the discovery subsystem: Identify CNTRLTYPE 2, Discovery log page, no I/O queues, any host. */
    boolean isDiscovery() {
        return volume == null;
    }

    /**
     * Namespace identifiers of the volume with id {@code volumeId}, the same on every node exporting it (so Linux
     * multipath sees one namespace behind several paths, {@code nvme_init_ns_head}) and distinct between volumes
     * ({@code nvme_global_check_duplicate_ids}): UUID = name-based (RFC 4122 version 3) of
     * {@code "rdmablock:volume:" + volumeId}; NGUID = bytes 0..15 and EUI64 = bytes 16..23 of SHA-256 of the same
     * string; CSI 0 (NVM).
     */
    static NamespaceIdDescriptor.Ids namespaceIdsOf(String volumeId) {
        byte[] name = ("rdmablock:volume:" + volumeId).getBytes(StandardCharsets.UTF_8);
        byte[] sha;
        try {
            sha = MessageDigest.getInstance("SHA-256").digest(name);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
        UUID u = UUID.nameUUIDFromBytes(name);
        byte[] uuid = new byte[16];
        for (int i = 0; i < 8; i++) {
            uuid[i] = (byte) (u.getMostSignificantBits() >>> (56 - 8 * i));
            uuid[8 + i] = (byte) (u.getLeastSignificantBits() >>> (56 - 8 * i));
        }
        return new NamespaceIdDescriptor.Ids(Arrays.copyOfRange(sha, 16, 24), Arrays.copyOfRange(sha, 0, 16), uuid,
                NamespaceIdDescriptor.CSI_NVM);
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
    public Volume volume() {
        return volume;
    }

    /**
     * True when {@code hostnqn} may connect. {@link Mode#SECONDARY}: it is the primary node's host NQN given to
     * {@link #secondaryOf}. Otherwise: the allow-list is empty (any host, rdmablock's rule), holds
     * {@link VolumeSpec#ANY_HOST}, or holds the hostnqn.
     */
    public boolean allowsHost(String hostnqn) {
        if (volume == null) {
            return true; // discovery: any host; the log page lists only what the host may connect to
        }
        Role r = role;
        if (r.mode() == Mode.SECONDARY) {
            return r.primaryHostNqn().equals(hostnqn);
        }
        Set<String> hosts = volume.allowedHosts();
        return hosts.isEmpty() || volume.isHostAllowed(hostnqn);
    }

    /** The hosts this subsystem admits, for log lines: the primary's (secondary mode) or the allow-list (empty = any). */
    Set<String> admittedHosts() {
        Role r = role;
        if (volume == null) {
            return Set.of();
        }
        return r.mode() == Mode.SECONDARY ? Set.of(r.primaryHostNqn()) : volume.allowedHosts();
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
     * Not replicated ({@link Mode#PLAIN}): the allow-list admits hosts, I/O queues get a {@link LocalVolumeIo}. The
     * initial mode. A change of mode ends every association (hosts reconnect under the new mode). Any thread.
     */
    public synchronized void plain() {
        setRole(new Role(Mode.PLAIN, null), LocalVolumeIo::open);
    }

    /**
     * This node is the volume's primary ({@link Mode#PRIMARY}): the allow-list admits hosts, I/O queues get their
     * handle from {@code replicated} (e.g. the local copy plus the in-sync secondaries). A change of mode ends every
     * association; staying primary with another factory only swaps the factory (queues connected before keep
     * theirs until they reconnect). Any thread.
     *
     * @throws NullPointerException when {@code replicated} is null
     */
    public synchronized void primary(VolumeIo.Factory replicated) {
        java.util.Objects.requireNonNull(replicated, "replicated");
        setRole(new Role(Mode.PRIMARY, null), replicated);
    }

    /**
     * This node holds a secondary copy ({@link Mode#SECONDARY}): only {@code primaryHostNqn} (the primary node's
     * {@code nqn.2026-11.io.rdmablock:node:<nodeId>}) may connect, the volume's allow-list does not apply, and write-type
     * commands are fenced by the epoch in CDW2-3 ({@link EpochFencedVolumeIo}); READ is served unchecked. A change of
     * mode or of the primary ends every association of the subsystem. Any thread.
     *
     * @throws IllegalArgumentException when {@code primaryHostNqn} is null or blank
     */
    public synchronized void secondaryOf(String primaryHostNqn) {
        if (primaryHostNqn == null || primaryHostNqn.isBlank()) {
            throw new IllegalArgumentException("invalid primaryHostNqn: primaryHostNqn=" + primaryHostNqn
                    + " (the primary node's host NQN is required)");
        }
        setRole(new Role(Mode.SECONDARY, primaryHostNqn), EpochFencedVolumeIo::open);
    }

    private void setRole(Role next, VolumeIo.Factory factory) {
        if (volume == null) {
            throw new IllegalStateException("the discovery subsystem has no replication mode");
        }
        Role prev = role;
        volumeIoFactory = factory; // before the role: a host admitted under the new role gets the new handle
        role = next;
        if (!prev.equals(next)) {
            LOG.info("subsystem mode changed: subnqn={}, mode={} -> {}, primaryHostNqn={}", subnqn, prev.mode(),
                    next.mode(), next.primaryHostNqn());
            disconnectAll("subsystem mode changed to " + next.mode());
        }
    }

    /** True while a newly promoted primary activates its epoch and waits out the old lease (ANA Change). */
    private volatile boolean activating;
    /** {@link System#nanoTime()} until which this primary may serve host I/O; Long.MAX_VALUE: no lease. */
    private volatile long leaseDeadlineNanos = Long.MAX_VALUE;

    /**
     * Marks a newly promoted primary as activating (true) or done (false): while activating, hosts see ANA
     * {@link AnaState#CHANGE} and their I/O gets the ANA Transition status. Any thread.
     */
    public void activating(boolean on) {
        activating = on;
    }

    /**
     * Sets the primary's lease end, a {@link System#nanoTime()} value: host I/O is served only before it (after:
     * ANA {@link AnaState#CHANGE}). {@code Long.MAX_VALUE} (the default) means no lease (single copy, no management
     * plane). Any thread.
     */
    public void leaseDeadline(long nanoTime) {
        leaseDeadlineNanos = nanoTime;
    }

    /** The lease end set by {@link #leaseDeadline}, a {@link System#nanoTime()} value. */
    public long leaseDeadlineNanos() {
        return leaseDeadlineNanos;
    }

    /**
     * The ANA state hosts (other than a secondary's primary) see for the namespace now: PLAIN {@link
     * AnaState#OPTIMIZED}; PRIMARY {@link AnaState#CHANGE} while activating or past its lease, else OPTIMIZED;
     * SECONDARY {@link AnaState#INACCESSIBLE}.
     */
    public AnaState anaState() {
        Mode m = role.mode();
        if (m == Mode.SECONDARY) {
            return AnaState.INACCESSIBLE;
        }
        if (m == Mode.PRIMARY && (activating || System.nanoTime() - leaseDeadlineNanos >= 0
                && leaseDeadlineNanos != Long.MAX_VALUE)) {
            return AnaState.CHANGE;
        }
        return AnaState.OPTIMIZED;
    }

    /** hostnqns of the controllers currently connected. */
    public Set<String> connectedHosts() {
        Set<String> s = new TreeSet<>();
        for (Controller c : controllers) {
            if (!c.isDestroyed()) {
                s.add(c.hostnqn());
            }
        }
        return s;
    }

    /** The factory the next I/O queue Connect opens its {@link VolumeIo} with (default: {@link LocalVolumeIo}). */
    public VolumeIo.Factory volumeIoFactory() {
        return volumeIoFactory;
    }

    /**
     * Replaces the factory of the volume's {@link VolumeIo}s (e.g. a replicated one when this node becomes the
     * volume's primary). Takes effect at the next I/O queue Connect: queues connected before keep the handle they
     * opened until they are torn down and the host reconnects (call {@link #disconnectAll} to make that happen now).
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
        for (Controller c : controllers) {
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
    java.util.List<Controller> controllersOf(String hostnqn, long hostIdHigh, long hostIdLow) {
        java.util.List<Controller> out = new java.util.ArrayList<>();
        for (Controller c : controllers) {
            if (c.sameHost(hostnqn, hostIdHigh, hostIdLow) || (c.isDestroyed() && c.hostnqn().equals(hostnqn))) {
                out.add(c);
            }
        }
        return out;
    }

    void attach(Controller c) {
        controllers.add(c);
    }

    void detach(Controller c) {
        controllers.remove(c);
    }

    /** Destroys the controllers of hosts the volume's allow-list no longer admits (after an allow-list change). */
    void revokeDisallowedHosts() {
        for (Controller c : controllers) {
            if (!allowsHost(c.hostnqn())) {
                c.destroy("host removed from the allow-list: hostnqn=" + c.hostnqn());
            }
        }
    }

    /** Marks the subsystem removed and destroys every controller (their queues tear down on their pollers). */
    void remove(String reason) {
        removed = true;
        for (Controller c : controllers) {
            c.destroy(reason);
        }
    }

    @Override
    public String toString() {
        return "Subsystem[" + subnqn + ", volume=" + (volume == null ? "none (discovery)" : volume.id()) + "]";
    }
}
