package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pending queues (accepted at the CM level, no validated Fabrics Connect yet, not torn down) on the node and per
 * peer IP address, in the order they arrived, against {@link TargetOptions.PendingLimits}. A queue counts from its
 * connect request ({@link #admit}) through its handshake until its Connect succeeds or it is torn down
 * ({@link #done}), or until a newer queue evicts it.
 *
 * <p>A full limit never refuses a newcomer (a client that holds queues open without a Connect must not lock other
 * hosts out): {@link #admit} evicts, as it counts the new queue,
 * <ul>
 *   <li>the oldest pending queue of the newcomer's address when that address holds
 *   {@link TargetOptions.PendingLimits#maxPerAddress()};</li>
 *   <li>else, when the node holds {@link TargetOptions.PendingLimits#maxPerNode()}, the oldest pending queue of the
 *   address holding the most (of those, the one whose oldest queue is the oldest).</li>
 * </ul>
 * So the counts never go beyond the limits, and a host whose queues send their Connect within the pending timeout
 * gets in however many queues others hold. The evicted queue stops counting at once; its teardown is requested
 * ({@link FabricQueue#evict}) and done by its owner (handshake thread or poller), as a pending-connect timeout is.
 * Each eviction is counted ({@link NodeMetrics#pendingEvicted}) and logged at INFO, at most
 * {@value #LOGS_PER_SECOND} lines a second (the lines left out are counted in the next one).
 *
 * <p>Thread-safe: one monitor, taken once per connect request, Connect and teardown of a queue, never on the I/O
 * path; {@link #count} reads no lock.
 */
final class PendingQueues {
    private static final Logger LOG = LoggerFactory.getLogger(PendingQueues.class);
    /** Placeholder key of peers whose address is unknown. */
    static final InetAddress UNKNOWN_PEER = InetAddress.getLoopbackAddress();
    /** Most eviction log lines a second. */
    static final int LOGS_PER_SECOND = 10;

    private final TargetOptions.PendingLimits limits;
    private final NodeMetrics metrics;
    /** Per address, its pending queues oldest first, each with its arrival number. Guarded by this. */
    private final HashMap<InetAddress, LinkedHashMap<FabricQueue, Long>> byAddress = new HashMap<>();
    /** Pending queues on the node (written under this). */
    private volatile int node;
    private long arrivals;
    private long logWindowStartNs = System.nanoTime();
    private int logsInWindow;
    private long logsSuppressed;

    PendingQueues(TargetOptions.PendingLimits limits, NodeMetrics metrics) {
        this.limits = limits;
        this.metrics = metrics;
    }

    /** Pending queues on the node now. */
    int count() {
        return node;
    }

    /** Pending queues from {@code addr} now. */
    synchronized int countOf(InetAddress addr) {
        Map<FabricQueue, Long> m = byAddress.get(addr);
        return m == null ? 0 : m.size();
    }

    /**
     * Counts the new pending queue {@code q} (keyed by {@link FabricQueue#peerAddress}, {@link #UNKNOWN_PEER} when
     * null), first evicting the queue the limits pick (see the class comment) when one is full: the evicted queue is
     * off the counts when this returns and its teardown requested ({@link FabricQueue#evict}). Never refuses.
     *
     * @return the evicted queue, or null when the limits had room
     */
    FabricQueue admit(FabricQueue q) {
        InetAddress addr = keyOf(q);
        FabricQueue victim = null;
        InetAddress victimAddr = null;
        String limit = null;
        int addrCount;
        int nodeCount;
        int victimAddrCount = 0;
        synchronized (this) {
            LinkedHashMap<FabricQueue, Long> own = byAddress.computeIfAbsent(addr, k -> new LinkedHashMap<>());
            if (own.size() >= limits.maxPerAddress()) {
                victimAddr = addr;
                limit = "maxPendingQueuesPerAddress";
            } else if (node >= limits.maxPerNode()) {
                victimAddr = mostHeld();
                limit = "maxPendingQueues";
            }
            if (victimAddr != null) {
                LinkedHashMap<FabricQueue, Long> m = byAddress.get(victimAddr);
                victimAddrCount = m.size();
                Iterator<FabricQueue> it = m.keySet().iterator();
                victim = it.next();
                it.remove();
                node--;
                if (m.isEmpty() && m != own) {
                    byAddress.remove(victimAddr);
                }
                // under the monitor: its owner's done() waits here, so its id is not closed under the disconnect
                victim.evict();
            }
            own.put(q, arrivals++);
            node++;
            addrCount = own.size();
            nodeCount = node;
        }
        if (victim != null) {
            metrics.pendingEvicted(limit);
            logEviction(victim, victimAddr, victimAddrCount, limit, q, addr, addrCount, nodeCount);
        }
        return victim;
    }

    /** The address holding the most pending queues; of those, the one whose oldest queue arrived first. */
    private InetAddress mostHeld() {
        InetAddress best = null;
        int bestSize = 0;
        long bestOldest = Long.MAX_VALUE;
        for (Map.Entry<InetAddress, LinkedHashMap<FabricQueue, Long>> e : byAddress.entrySet()) {
            LinkedHashMap<FabricQueue, Long> m = e.getValue();
            if (m.isEmpty()) {
                continue;
            }
            long oldest = m.firstEntry().getValue();
            if (m.size() > bestSize || m.size() == bestSize && oldest < bestOldest) {
                best = e.getKey();
                bestSize = m.size();
                bestOldest = oldest;
            }
        }
        return best;
    }

    private void logEviction(FabricQueue victim, InetAddress victimAddr, int victimAddrCount, String limit,
                             FabricQueue q, InetAddress addr, int addrCount, int nodeCount) {
        long suppressed;
        synchronized (this) {
            long now = System.nanoTime();
            if (now - logWindowStartNs >= 1_000_000_000L) {
                logWindowStartNs = now;
                logsInWindow = 0;
            }
            if (logsInWindow >= LOGS_PER_SECOND) {
                logsSuppressed++;
                return;
            }
            logsInWindow++;
            suppressed = logsSuppressed;
            logsSuppressed = 0;
        }
        LOG.info("pending queue evicted ({} reached): evicted qid={}, peer={}, address={} held {} pending; for qid={},"
                        + " peer={}, address={} now {} pending; node {} pending; maxPendingQueues={},"
                        + " maxPendingQueuesPerAddress={}{}", limit, victim.qid, victim.peer,
                victimAddr.getHostAddress(), victimAddrCount, q.qid, q.peer, addr.getHostAddress(), addrCount,
                nodeCount, limits.maxPerNode(), limits.maxPerAddress(),
                suppressed == 0 ? "" : " (" + suppressed + " earlier eviction lines left out)");
    }

    /**
     * The queue is no longer pending (its Connect succeeded, or it is torn down): takes it off the counts unless an
     * eviction did already. Idempotent; called by whoever owns the queue (acceptor, handshake thread, then its
     * poller), which alone writes {@link FabricQueue#pending}.
     */
    void done(FabricQueue q) {
        if (!q.pending) {
            return;
        }
        q.pending = false;
        InetAddress addr = keyOf(q);
        synchronized (this) {
            LinkedHashMap<FabricQueue, Long> m = byAddress.get(addr);
            if (m != null && m.remove(q) != null) {
                node--;
                if (m.isEmpty()) {
                    byAddress.remove(addr);
                }
            }
        }
    }

    private static InetAddress keyOf(FabricQueue q) {
        return q.peerAddress == null ? UNKNOWN_PEER : q.peerAddress;
    }
}
