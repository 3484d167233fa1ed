package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The node's live controllers, by subsystem and cntlid, and the per-node and per-host-NQN counts the
 * {@link ConnectLimits} cap. A cntlid is unique within its subsystem only (as Linux nvmet allocates them from one
 * ida per subsystem), taken round robin (per subsystem NQN) from the node's range ({@link TargetOptions#cntlidMin()} ..
 * {@link TargetOptions#cntlidMax()}, or {@link #range}); each subsystem has the whole range, so connections to one
 * subsystem (e.g. discovery) never use up another's cntlids. A controller leaves the table when it is destroyed.
 * Thread-safe (one lock: controllers are made and destroyed at Connect and teardown, not per command).
 */
final class ControllerTable {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerTable.class);

    /** The cntlids of one subsystem in use. */
    private static final class Ids {
        final HashMap<Integer, TargetController> byCntlid = new HashMap<>();
    }

    private volatile ConnectLimits limits;
    private final NodeMetrics metrics;
    private final Map<Subsystem, Ids> bySubsystem = new IdentityHashMap<>();
    /**
     * Where each subsystem NQN's next allocation starts: kept when its last controller goes (one entry per NQN ever
     * connected to), so a cntlid is not handed out again at once.
     */
    private final HashMap<String, Integer> nextCntlid = new HashMap<>();
    private final HashMap<String, Integer> controllersPerHost = new HashMap<>();
    private final HashMap<String, Integer> queuesPerHost = new HashMap<>();
    private int cntlidMin;
    private int cntlidMax;
    /** True once a controller was created: the range is fixed from then on. */
    private boolean allocated;
    private int controllers;
    private int discoveryControllers;

    ControllerTable(TargetOptions options, ConnectLimits limits, NodeMetrics metrics) {
        this.limits = limits;
        this.metrics = metrics;
        this.cntlidMin = options.cntlidMin();
        this.cntlidMax = options.cntlidMax();
    }

    ConnectLimits limits() {
        return limits;
    }

    /** Replaces the limits; they apply to the Connects that follow (live controllers and queues stay). */
    void limits(ConnectLimits l) {
        this.limits = java.util.Objects.requireNonNull(l, "limits");
    }

    /**
     * Sets the cntlid range, {@code min..max} inclusive; only before the first controller.
     *
     * @throws IllegalArgumentException unless 1 &lt;= min &lt;= max &lt;= {@value TargetOptions#MAX_CNTLID}
     * @throws IllegalStateException    when a controller was created already
     */
    synchronized void range(int min, int max) {
        TargetOptions.checkCntlidRange(min, max);
        if (allocated) {
            throw new IllegalStateException("cntlid range fixed: a controller was created already: cntlidMin="
                    + cntlidMin + ", cntlidMax=" + cntlidMax + ", requested " + min + ".." + max);
        }
        cntlidMin = min;
        cntlidMax = max;
    }

    /**
     * Makes and registers a controller of {@code s} for {@code hostnqn} with the next free cntlid of {@code s}
     * ({@code make} builds it from the cntlid; it must not throw), unless a cap is reached or every cntlid of the
     * range is in use in {@code s}: then null, and the reason (the cap and its property) is logged.
     */
    synchronized TargetController add(Subsystem s, String hostnqn, IntFunction<TargetController> make) {
        boolean discovery = s.isDiscovery();
        String refusal = null;
        String capName = null;
        if (discovery && discoveryControllers >= limits.maxDiscoveryControllers()) {
            capName = "maxDiscoveryControllers";
            refusal = cap(capName, limits.maxDiscoveryControllers(), "discovery controllers on the node");
        } else if (!discovery && controllers - discoveryControllers >= limits.maxControllers()) {
            capName = "maxControllers";
            refusal = cap(capName, limits.maxControllers(), "controllers on the node");
        } else if (controllersPerHost.getOrDefault(hostnqn, 0) >= limits.maxControllersPerHost()) {
            capName = "maxControllersPerHost";
            refusal = cap(capName, limits.maxControllersPerHost(), "controllers of this host NQN");
        }
        int range = cntlidMax - cntlidMin + 1;
        Ids ids = bySubsystem.get(s);
        if (refusal == null && ids != null && ids.byCntlid.size() >= range) {
            capName = "noFreeCntlid";
            refusal = "no free cntlid: " + range + " in use in this subsystem (cntlidMin=" + cntlidMin
                    + ", cntlidMax=" + cntlidMax + ")";
        }
        if (refusal != null) {
            metrics.connectRefused(capName);
            LOG.warn("connect refused: controller busy: {}, subnqn={}, hostnqn={}", refusal, s.subnqn(), hostnqn);
            return null;
        }
        if (ids == null) {
            ids = new Ids();
            bySubsystem.put(s, ids);
        }
        allocated = true;
        int id = nextCntlid.getOrDefault(s.subnqn(), cntlidMin);
        if (id < cntlidMin || id > cntlidMax) {
            id = cntlidMin;
        }
        while (ids.byCntlid.containsKey(id)) {
            id = id >= cntlidMax ? cntlidMin : id + 1;
        }
        nextCntlid.put(s.subnqn(), id >= cntlidMax ? cntlidMin : id + 1);
        TargetController c = make.apply(id);
        ids.byCntlid.put(id, c);
        controllers++;
        if (discovery) {
            discoveryControllers++;
        }
        controllersPerHost.merge(hostnqn, 1, Integer::sum);
        return c;
    }

    private static String cap(String name, long value, String what) {
        return what + " at the cap " + name + "=" + value + " (" + ConnectLimits.property(name) + ")";
    }

    /** Takes {@code c} out; false when it was not in the table (removed already). */
    synchronized boolean remove(TargetController c) {
        Ids ids = bySubsystem.get(c.subsystem);
        if (ids == null || !ids.byCntlid.remove(c.cntlid, c)) {
            return false;
        }
        if (ids.byCntlid.isEmpty()) {
            bySubsystem.remove(c.subsystem);
        }
        controllers--;
        if (c.subsystem.isDiscovery()) {
            discoveryControllers--;
        }
        controllersPerHost.computeIfPresent(c.hostnqn(), (k, v) -> v <= 1 ? null : v - 1);
        return true;
    }

    /** The live controller {@code cntlid} of {@code s}, or null. */
    synchronized TargetController get(Subsystem s, int cntlid) {
        Ids ids = bySubsystem.get(s);
        return ids == null ? null : ids.byCntlid.get(cntlid);
    }

    /** Every live controller with {@code cntlid}, any subsystem. */
    synchronized List<TargetController> withCntlid(int cntlid) {
        List<TargetController> out = new ArrayList<>();
        for (Ids ids : bySubsystem.values()) {
            TargetController c = ids.byCntlid.get(cntlid);
            if (c != null) {
                out.add(c);
            }
        }
        return out;
    }

    /** Live controllers on the node. */
    synchronized int size() {
        return controllers;
    }

    /** Every live controller (a copy). */
    synchronized List<TargetController> all() {
        List<TargetController> out = new ArrayList<>();
        for (Ids ids : bySubsystem.values()) {
            out.addAll(ids.byCntlid.values());
        }
        return out;
    }

    /**
     * Counts a queue of {@code hostnqn} about to be connected, unless the host is at {@link
     * ConnectLimits#maxQueuesPerHost}: then false and the cap is logged. Undone by {@link #queueGone}.
     */
    synchronized boolean admitQueue(String hostnqn, int qid, String peer) {
        int n = queuesPerHost.getOrDefault(hostnqn, 0);
        if (n >= limits.maxQueuesPerHost()) {
            metrics.connectRefused("maxQueuesPerHost");
            LOG.warn("connect refused: controller busy: {}, qid={}, hostnqn={}, peer={}",
                    cap("maxQueuesPerHost", limits.maxQueuesPerHost(), "queues of this host NQN"), qid, hostnqn,
                    peer);
            return false;
        }
        queuesPerHost.put(hostnqn, n + 1);
        return true;
    }

    /** A queue counted by {@link #admitQueue} is torn down. */
    synchronized void queueGone(String hostnqn) {
        queuesPerHost.computeIfPresent(hostnqn, (k, v) -> v <= 1 ? null : v - 1);
    }

    /** Connected queues of {@code hostnqn} counted now (tests, metrics). */
    synchronized int queuesOf(String hostnqn) {
        return queuesPerHost.getOrDefault(hostnqn, 0);
    }
}
