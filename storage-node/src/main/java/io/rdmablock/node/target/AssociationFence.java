package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The cross-path fence of an admin Connect (case C8): a host that starts a new association with a subsystem while an
 * older one of it (same hostnqn and HOSTID, or a destroyed one of the same hostnqn still draining) exists must not
 * have the new one acknowledged before every store command of the old one has drained, so nothing of the old
 * association can land after a write of the new one. The old controllers are destroyed, the Connect waits in
 * {@link Request.State#AWAITING_FENCE} (at most {@link FabricQueue#DRAIN_TIMEOUT_NS} from its arrival) and then runs
 * again; if the old association still has not drained it is answered Connect Controller Busy (NVMe-oF 1.1 Figure
 * 20, SC 81h). SPDK fences the same way in {@code lib/nvmf/ctrlr.c} ({@code nvmf_ctrlr_add_qpair}, the "duplicate
 * controller" path, answered when the old one's qpairs are destroyed).
 *
 * <p>When: at the admin Connect for a host without a DH-HMAC-CHAP secret ({@link #begin}); for a host that must
 * authenticate only once its new admin queue has authenticated ({@link #afterAuthentication}, NVMe Base 2.0 section
 * 8.13), so a peer that claims the host's NQN and HOSTID without its secret cannot end the host's association. Until
 * the fence is over the new controller is not {@link TargetController#admitted admitted}: no I/O queue attaches to it.
 * Admin poller of the connecting queue only.
 */
final class AssociationFence {
    private static final Logger LOG = LoggerFactory.getLogger(AssociationFence.class);

    private AssociationFence() {
    }

    /**
     * Begins the fence for the first run of a Connect: destroys the host's previous associations with {@code s}.
     *
     * @return true when the Connect must wait ({@code r.fence} and its deadline set), false when there is nothing
     * to fence (discovery subsystems are never fenced: they have no I/O, and concurrent discoveries coexist)
     */
    static boolean begin(Request r, Subsystem s, String hostnqn, long hostIdHigh, long hostIdLow) {
        return begin(r, s, hostnqn, hostIdHigh, hostIdLow, null);
    }

    /**
     * Begins the fence of a host that must authenticate, when its new admin queue first authenticated: destroys the
     * host's other associations with the subsystem (same hostnqn and HOSTID, or destroyed and draining), as
     * {@link #begin}. The Authentication command that completed the authentication then waits in
     * {@link Request.State#AWAITING_FENCE} (at most {@link FabricQueue#DRAIN_TIMEOUT_NS} from its arrival).
     *
     * @return true when that command must wait ({@code r.fence} set); false when nothing was to fence (then
     * {@code c} is admitted)
     */
    static boolean afterAuthentication(Request r, TargetController c) {
        if (begin(r, c.subsystem, c.hostnqn(), c.hostIdHigh, c.hostIdLow, c)) {
            return true;
        }
        c.admit();
        return false;
    }

    private static boolean begin(Request r, Subsystem s, String hostnqn, long hostIdHigh, long hostIdLow,
                                 TargetController self) {
        if (s.isDiscovery()) {
            return false;
        }
        List<TargetController> previous = new java.util.ArrayList<>(s.controllersOf(hostnqn, hostIdHigh, hostIdLow));
        previous.remove(self);
        if (previous.isEmpty()) {
            return false;
        }
        for (TargetController old : previous) {
            old.destroy("replaced by a new association from the same host");
        }
        r.fence = previous;
        r.fenceDeadlineNs = r.startNs + FabricQueue.DRAIN_TIMEOUT_NS;
        LOG.info("{} waits for the previous association to drain: hostnqn={}, subnqn={}, cntlids={}",
                self == null ? "connect" : "authentication of cntlid " + self.cntlid, hostnqn, s.subnqn(),
                previous.stream().map(x -> x.cntlid).toList());
        return true;
    }

    /** True when the Connect's fence is over: every previous association drained, or the deadline passed. */
    static boolean done(Request r, long nowNs) {
        return nowNs - r.fenceDeadlineNs >= 0 || drained(r);
    }

    /** True when every association the Connect waited for has drained (its queues released their resources). */
    static boolean drained(Request r) {
        for (TargetController c : r.fence) {
            if (!c.drained()) {
                return false;
            }
        }
        return true;
    }
}
