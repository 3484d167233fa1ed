package io.rdmablock.node.failover;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.DesiredCopy;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.PrimarySilence;
import io.rdmablock.mgmt.client.VolumeState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * A secondary copy watches its primary over the fabric (docs/failover.md, "Promotion: a secondary's report"): the
 * primary renews its peer lease on every copy in sync or syncing every {@code leaseMs / 4} (Peer Lease, C1h), so a
 * copy that heard no renewal for a lease knows the primary holds no peer lease granted by it. Its heartbeat then says
 * so ({@link PrimarySilence}); the management plane promotes once the primary's own lease lapsed too. A primary cut
 * from the management plane alone still renews (on its host queues' associations, or on its own when it has none:
 * {@code replication.LeaseAssociation}), so it is not reported. The watch starts when a heartbeat answer names the primary and epoch (the silence counts from
 * then, or from the last renewal heard after it). Node agent thread.
 */
public final class PrimaryWatch {
    private static final Logger LOG = LoggerFactory.getLogger(PrimaryWatch.class);

    /** What this copy watches: the primary named at an epoch, since when, and whether its silence was logged. */
    private record Watch(String primary, String primaryHostnqn, long epoch, long sinceNanos, boolean logged) {
    }

    private final Map<String, Watch> watches = new HashMap<>();

    /**
     * Follows a heartbeat answer: watches the primary of every volume whose copy on {@code self} is a secondary in
     * sync or syncing; forgets the others.
     */
    public synchronized void update(List<DesiredVolume> volumes, String self, long nowNs) {
        Map<String, Watch> next = new HashMap<>();
        for (DesiredVolume dv : volumes) {
            if (dv.role() != CopyRole.SECONDARY || dv.state() == VolumeState.DELETING) {
                continue;
            }
            DesiredCopy mine = copyOn(dv, self);
            DesiredCopy primary = dv.copies().stream().filter(c -> c.role() == CopyRole.PRIMARY).findFirst()
                    .orElse(null);
            if (mine == null || mine.state() == CopyState.STALE || primary == null || primary.nodeId().equals(self)) {
                continue;
            }
            Watch w = watches.get(dv.id());
            if (w == null || !w.primary().equals(primary.nodeId()) || w.epoch() != dv.epoch()) {
                w = new Watch(primary.nodeId(), primary.hostnqn(), dv.epoch(), nowNs, false);
            }
            next.put(dv.id(), w);
        }
        watches.clear();
        watches.putAll(next);
    }

    private static DesiredCopy copyOn(DesiredVolume dv, String nodeId) {
        for (DesiredCopy c : dv.copies()) {
            if (c.nodeId().equals(nodeId)) {
                return c;
            }
        }
        return null;
    }

    /**
     * The silence of volume {@code id}'s primary as this copy sees it, or null: not watched, no lease known
     * ({@code leaseMs} &lt;= 0), or a renewal heard within the lease.
     *
     * @param asked when a peer node (by host NQN) last asked for a peer lease here, nanoTime, or
     *              {@link Long#MIN_VALUE} ({@link io.rdmablock.node.target.Subsystem#peerLeaseAskedNanos})
     */
    public synchronized PrimarySilence silence(String id, ToLongFunction<String> asked, long leaseMs, long nowNs) {
        Watch w = watches.get(id);
        if (w == null || leaseMs <= 0) {
            return null;
        }
        long heard = asked.applyAsLong(w.primaryHostnqn());
        long since = heard != Long.MIN_VALUE && heard - w.sinceNanos() > 0 ? heard : w.sinceNanos();
        long silentMs = (nowNs - since) / 1_000_000L;
        if (silentMs < leaseMs) {
            if (w.logged()) {
                watches.put(id, new Watch(w.primary(), w.primaryHostnqn(), w.epoch(), w.sinceNanos(), false));
                LOG.info("primary {} of volume {} renews its peer lease here again (epoch {})", w.primary(), id,
                        w.epoch());
            }
            return null;
        }
        if (!w.logged()) {
            watches.put(id, new Watch(w.primary(), w.primaryHostnqn(), w.epoch(), w.sinceNanos(), true));
            LOG.warn("primary {} of volume {} renewed no peer lease here for {} ms (epoch {}, lease {} ms): reported "
                    + "in the heartbeat", w.primary(), id, silentMs, w.epoch(), leaseMs);
        }
        return new PrimarySilence(w.primary(), w.epoch(), silentMs);
    }
}
