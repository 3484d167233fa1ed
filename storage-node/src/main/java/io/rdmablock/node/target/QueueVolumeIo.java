package io.rdmablock.node.target;

import io.rdmablock.node.failover.ExportRole;
import io.rdmablock.node.failover.IoGate;

/**
 * The volume I/O of one {@link FabricQueue}: the {@link VolumeIo} its subsystem's factory opened at Connect (none on
 * the admin queue), the subsystem role it was opened under, and what follows from that role: the ANA gate every
 * command passes ({@link #admit}) and, after a change of mode, the re-open of the handle from the subsystem's current
 * factory once the old one has drained - or the end of the queue when it has not drained
 * {@link FabricQueue#DRAIN_TIMEOUT_NS} after the change was seen (docs/failover.md, "Paths: NVMe ANA").
 *
 * <p>One per queue, made with it; poller thread only; no lock, nothing allocated per command.
 */
final class QueueVolumeIo {

    private final FabricQueue q;
    /** The store behind this I/O queue, opened at Connect ({@link #open}); null on the admin queue. */
    private VolumeIo handle;
    /** The subsystem role {@link #handle} was opened under; a newer one makes the queue re-open it once drained. */
    private ExportRole role;
    /** True when this queue's host is the primary node of a secondary ({@link #role}): its I/O is not gated. */
    private boolean exempt;
    /** True while the volume I/O hands back completions ({@link VolumeIo#poll}): it must not be closed then. */
    private boolean reaping;
    /** When this queue first saw a newer role than {@link #role} (0: not waiting); bounds the old handle's drain. */
    private long roleChangeSeenNs;

    QueueVolumeIo(FabricQueue q) {
        this.q = q;
    }

    /** The queue's volume I/O; null on the admin queue (and before Connect). */
    VolumeIo handle() {
        return handle;
    }

    /** Commands in flight in the volume I/O (0 on the admin queue). */
    int inFlight() {
        VolumeIo v = handle;
        return v == null ? 0 : v.inFlight();
    }

    /** {@link VolumeIo#awaitStore}; false without a store (admin queue) or while a role change is being reaped. */
    boolean awaitStore(long timeoutNs) {
        VolumeIo v = handle;
        return v != null && !reaping && v.awaitStore(timeoutNs);
    }

    /**
     * The volume I/O part of a polling round: hands back up to {@code max} completions to {@code completions}, then,
     * when the subsystem's role changed, re-opens the handle once drained ({@link #awaitReopen}).
     *
     * @return the number of completions handed back
     */
    int poll(VolumeIo.Completions completions, int max, long nowNs) {
        VolumeIo v = handle;
        if (v == null) {
            return 0;
        }
        int work;
        reaping = true;
        try {
            work = v.poll(completions, max, nowNs);
        } finally {
            reaping = false;
        }
        ExportRole current = q.controller.subsystem.ioGate().role();
        if (current != role && !sameSecondary(current)) {
            awaitReopen(nowNs); // the role changed: a new handle once the old one drained
        }
        return work;
    }

    /**
     * The I/O gate (docs/failover.md, "Paths: NVMe ANA"), called by {@link IoCommands#execute} for every command just
     * before the volume I/O starts it: 0 when it may run, else the ANA status it is answered with (SCT 3h, DNR 0):
     * SC 03h Transition while this queue still holds the handle of an older role (it is re-opened once the old one
     * has drained), or while the subsystem's primary is activating or past its lease; SC 02h Inaccessible on a
     * secondary. The primary node's host on a secondary is not gated. Costs one volatile read, two for a primary
     * (its lease end); no lock. Poller thread.
     */
    int admit(Request r) {
        Subsystem s = q.controller.subsystem;
        IoGate g = s.ioGate();
        if (g.role() != role && !sameSecondary(g.role()) && !reopen()) {
            return Subsystem.ANA_TRANSITION;
        }
        if (exempt) {
            return 0;
        }
        if (g.status() != 0) {
            return g.status();
        }
        if (g.leased()) {
            // the clock now, not the poll round's: a capsule that arrived while this process was stopped must not
            // be judged by a time taken before the stop
            long now = System.nanoTime();
            if (s.leaseLapsed(now)) {
                s.refreshAnaState(now);
                return Subsystem.ANA_INACCESSIBLE;
            }
        }
        return 0;
    }

    /**
     * True when the role changed from one secondary role to another (a new primary): the factory is the same epoch
     * fence, so the handle is kept and only the role is taken over (re-opening would answer the new primary's
     * forwarded writes ANA Transition while the old handle drains).
     */
    private boolean sameSecondary(ExportRole next) {
        if (role == null || role.mode() != Subsystem.Mode.SECONDARY || next.mode() != Subsystem.Mode.SECONDARY) {
            return false;
        }
        role = next;
        exempt = next.exempts(q.controller.hostnqn());
        roleChangeSeenNs = 0;
        return true;
    }

    /**
     * After a change of role: re-opens the volume I/O once drained, or ends the queue when the old handle still has
     * commands in flight {@link FabricQueue#DRAIN_TIMEOUT_NS} after the change was seen (as a torn-down queue would).
     */
    private void awaitReopen(long nowNs) {
        if (roleChangeSeenNs == 0) {
            roleChangeSeenNs = nowNs | 1;
        }
        if (!reopen() && !q.isFatal() && nowNs - roleChangeSeenNs > FabricQueue.DRAIN_TIMEOUT_NS) {
            q.fail("volume I/O", "the volume I/O of the previous mode did not drain within "
                    + FabricQueue.DRAIN_TIMEOUT_NS / 1_000_000 + " ms: inFlight=" + inFlight());
        }
    }

    /**
     * Re-opens this I/O queue's volume I/O from the subsystem's current factory after a change of role, once the old
     * handle has nothing in flight (and not while it hands back completions). A factory that fails ends the queue
     * (the host reconnects; its Connect then reports the failure). Poller thread.
     *
     * @return true when the queue now holds a handle of the current role
     */
    private boolean reopen() {
        VolumeIo old = handle;
        TargetController c = q.controller;
        if (reaping || q.isFatal() || old == null || c.isDestroyed() || old.inFlight() > 0) {
            return false;
        }
        ExportRole from = role;
        roleChangeSeenNs = 0;
        handle = null;
        TargetQueueMemory.closeQuietly(old);
        try {
            handle = open(c.subsystem, c.hostnqn(), c.cntlid);
        } catch (RuntimeException e) {
            q.fail("volume I/O", "re-opening the volume I/O after a change of mode failed: " + e);
            return false;
        }
        FabricQueue.LOG.info("volume I/O re-opened: qid={}, cntlid={}, subnqn={}, hostnqn={}, mode={} -> {}, generation={}",
                q.qid, c.cntlid, c.subsystem.subnqn(), c.hostnqn(), from == null ? null : from.mode(), role.mode(),
                role.generation());
        return true;
    }

    /**
     * Connect of an I/O queue (and {@link #reopen}): opens its volume I/O with the subsystem's current factory -
     * behind the volume's limits ({@link io.rdmablock.node.qos.QosVolumeIo}) unless a secondary - and records the
     * role it belongs to (read before the factory: {@code Subsystem.setRole} writes the factory first,
     * so a handle is never older than its recorded role). The handle is the queue's once {@link #attach}ed. Poller
     * thread.
     *
     * @throws RuntimeException whatever the factory throws
     */
    VolumeIo open(Subsystem s, String hostnqn, int cntlid) {
        ExportRole current = s.ioGate().role();
        VolumeIo.Factory f = s.volumeIoFactory();
        VolumeIo v = f.open(new VolumeIo.Context(s.volume(), q.target.store(), s.subnqn(), hostnqn, cntlid, q.qid,
                q.entries, q.poller, q.device(), q.protectionDomain(), q.dataRegion(), q.recvRegion(), q.target.tuning().registerStoreBuffers()));
        if (current.mode() != Subsystem.Mode.SECONDARY) { // the primary (or a single copy) enforces the limits
            v = new io.rdmablock.node.qos.QosVolumeIo(v, s.qos(), q.entries, q.target.metrics().foregroundLatency());
        }
        role = current;
        exempt = current.exempts(hostnqn);
        return v;
    }

    /** After a successful Connect: the handle from {@link #open} (null on the admin queue), owned from now on. */
    void attach(VolumeIo v) {
        handle = v;
    }

    /** Closes the handle, if any: waits for what is still in flight (it may still use the queue's buffers). */
    void close() {
        if (handle != null) {
            TargetQueueMemory.closeQuietly(handle);
        }
    }
}
