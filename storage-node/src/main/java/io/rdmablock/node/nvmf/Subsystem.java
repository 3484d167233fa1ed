package io.rdmablock.node.nvmf;

import io.rdmablock.node.store.Volume;
import io.rdmablock.node.store.VolumeSpec;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An NVM subsystem: its subnqn, one namespace (nsid 1) backed by one store {@link Volume}, and the hosts allowed to
 * connect (the volume's allow-list). Thread-safe: controllers attach and detach from any poller; the volume's size
 * is read per command (it only grows).
 */
public final class Subsystem {
    /** subnqn prefix: {@code nqn.2026-11.io.rdmablock:volume:<volume name>}. */
    public static final String NQN_PREFIX = "nqn.2026-11.io.rdmablock:volume:";
    /** The one namespace id of every subsystem. */
    public static final int NSID = 1;

    private final String subnqn;
    private final Volume volume;
    /** Live controllers and destroyed ones whose queues are still draining. */
    private final CopyOnWriteArrayList<Controller> controllers = new CopyOnWriteArrayList<>();
    private volatile boolean removed;

    Subsystem(String subnqn, Volume volume) {
        this.subnqn = subnqn;
        this.volume = volume;
    }

    /** The subnqn of a volume by name. */
    public static String nqnFor(String volumeName) {
        return NQN_PREFIX + volumeName;
    }

    public String subnqn() {
        return subnqn;
    }

    public Volume volume() {
        return volume;
    }

    /**
     * True when {@code hostnqn} may connect: the allow-list is empty (any host, rdmablock's rule), holds
     * {@link VolumeSpec#ANY_HOST}, or holds the hostnqn.
     */
    public boolean allowsHost(String hostnqn) {
        Set<String> hosts = volume.allowedHosts();
        return hosts.isEmpty() || volume.isHostAllowed(hostnqn);
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
        return "Subsystem[" + subnqn + ", volume=" + volume.id() + "]";
    }
}
