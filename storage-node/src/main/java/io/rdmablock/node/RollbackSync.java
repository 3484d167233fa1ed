package io.rdmablock.node;

import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.rdmablock.mgmt.client.DesiredRollback;
import io.rdmablock.mgmt.client.DesiredVolume;
import io.rdmablock.mgmt.client.RollbackReport;
import io.rdmablock.mgmt.client.VolumeState;
import io.rdmablock.node.store.Snapshots;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.node.target.Subsystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the rollback the management server asks of this node's copy of a volume ({@link DesiredVolume#rollback()},
 * docs/snapshots.md, "Rollback"), whatever the copy's role: each copy rolls back to its own snapshot of the same id.
 * Once per request id: {@link Snapshots#rollback(String, long, String)} writes the id in the rollback's own synced
 * metadata batch and does nothing for the id last applied, so an answer that still carries the request (until every
 * copy reported it) never rolls back writes made since, not even after a restart of the node.
 *
 * <p>While a rollback is asked the server sends no allowed host, so hosts are disconnected ({@code MgmtSync} applies
 * the allow-list first) and refused. The rollback runs only when no host (peer nodes aside) was connected at this
 * answer and at the one before, about a heartbeat apart, so the queues of the hosts just disconnected have torn down
 * before the store's barrier drains the writes still in flight. Reported per volume ({@link #report}): {@code done},
 * {@code waiting} (hosts, writes in flight, the map busy: retried at the next answer) or {@code failed} (no snapshot
 * of that id here, a flat volume: not retried). Runs on the agent thread.
 */
final class RollbackSync {
    private static final Logger LOG = LoggerFactory.getLogger(RollbackSync.class);

    private final VolumeStore store;
    private final Function<String, Set<String>> connectedHosts;
    /** The last word per volume id, reported until the answer no longer asks a rollback. */
    private final Map<String, RollbackReport> reports = new ConcurrentHashMap<>();
    /** Per volume id: the request id whose previous answer found no host connected. */
    private final Map<String, String> quiet = new ConcurrentHashMap<>();

    /**
     * @param store          the node's store
     * @param connectedHosts volume id to the host NQNs connected to it now (peer nodes' too: they are left out here)
     */
    RollbackSync(VolumeStore store, Function<String, Set<String>> connectedHosts) {
        this.store = store;
        this.connectedHosts = connectedHosts;
    }

    /** Rolls volume {@code v} back when {@code dv} asks it and it was not applied yet (see the class comment). */
    void apply(DesiredVolume dv, StoreVolume v) {
        DesiredRollback r = dv.rollback();
        if (r == null || dv.state() == VolumeState.DELETING) {
            reports.remove(v.id());
            quiet.remove(v.id());
            return;
        }
        Snapshots snaps = store.snapshots();
        try {
            if (r.requestId().equals(snaps.lastRollback(v.id()))) {
                report(dv, r, RollbackReport.State.DONE, null);
                return;
            }
            Set<String> hosts = connectedHosts.apply(v.id()).stream()
                    .filter(h -> !h.startsWith(Subsystem.NODE_HOSTNQN_PREFIX)).collect(java.util.stream.Collectors
                            .toCollection(java.util.TreeSet::new));
            if (!hosts.isEmpty()) {
                quiet.remove(v.id());
                report(dv, r, RollbackReport.State.WAITING, "hosts still connected: " + hosts);
                return;
            }
            if (!r.requestId().equals(quiet.put(v.id(), r.requestId()))) {
                report(dv, r, RollbackReport.State.WAITING, "no host connected: rolls back at the next answer");
                return;
            }
            snaps.rollback(v.id(), r.snapshotId(), r.requestId());
            report(dv, r, RollbackReport.State.DONE, null);
        } catch (NoSuchElementException | IllegalArgumentException e) {
            report(dv, r, RollbackReport.State.FAILED, e.getMessage());
        } catch (RuntimeException e) { // writes in flight past the barrier's bound, the map busy, RocksDB
            report(dv, r, RollbackReport.State.WAITING, e.getMessage());
        }
    }

    /** This node's word on the rollback asked of volume {@code id}; null when none is asked. */
    RollbackReport report(String id) {
        return reports.get(id);
    }

    private void report(DesiredVolume dv, DesiredRollback r, RollbackReport.State state, String detail) {
        String why = detail == null || detail.length() <= 1024 ? detail : detail.substring(0, 1024);
        RollbackReport next = new RollbackReport(r.requestId(), state, why);
        RollbackReport before = reports.put(dv.id(), next);
        if (next.equals(before)) {
            return;
        }
        if (state == RollbackReport.State.DONE) {
            LOG.info("rollback done: volume={}, snapshot={}, id={}, request={}", dv.name(), r.snapshot(),
                    r.snapshotId(), r.requestId());
        } else {
            LOG.warn("rollback {}: volume={}, snapshot={}, id={}, request={}: {}",
                    state == RollbackReport.State.FAILED ? "failed" : "waiting", dv.name(), r.snapshot(),
                    r.snapshotId(), r.requestId(), detail);
        }
    }
}
