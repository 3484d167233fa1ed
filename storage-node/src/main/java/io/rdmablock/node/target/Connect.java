package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The Fabrics Connect command (NVMe-oF 1.1 section 3.3; SPDK {@code lib/nvmf/ctrlr.c} {@code nvmf_ctrlr_cmd_connect}):
 * on qid 0 it creates the controller of a new association (dynamic controller model, after the
 * {@link AssociationFence} of the host's previous one; for a host that must authenticate the fence runs once the new
 * admin queue authenticated instead), on qid >= 1 it attaches the I/O queue to the controller named by CNTLID.
 * Checks, each answered Connect Invalid Parameters (SCT 1, SC 82h) with the offending byte in dw0 (IATTR, IPO):
 * RECFMT 0, SUBNQN and HOSTNQN NUL-terminated UTF-8 without control characters
 * ({@link ConnectDataDescriptor#nqnFault}; checked before either is looked up or logged), QID = the qid of the
 * connection's private data, SQSIZE 1 .. min(queue entries, maxQueueEntries) - 1 (0-based), SUBNQN known, CNTLID FFFFh on qid 0 and on qid >= 1 a live, admitted ({@link TargetController#admitted})
 * controller of the same subsystem, HOSTNQN and HOSTID (the 16 bytes at connect data offset 0, NVMe-oF 1.1 section
 * 3.3 Figure 20: the host identifier of the association); a host the subsystem does not admit ({@link Subsystem#allowsHost}) is answered Connect Invalid
 * Host (SCT 1, SC 84h), and so is a host without a DH-HMAC-CHAP secret on a subsystem that requires authentication
 * ({@link Subsystem#requiresAuth}), and a secondary's peer node ({@link io.rdmablock.node.failover.ExportRole#exempts}) when this node has
 * no node key to check it with (a peer node always authenticates with its node link secret, {@link HostSecrets}): as
 * Linux nvmet answers a host it cannot authenticate ({@code
 * drivers/nvme/target/fabrics-cmd.c} {@code nvmet_execute_admin_connect}: {@code nvmet_setup_auth} failing for a
 * host without a key is {@code NVME_SC_CONNECT_INVALID_HOST}; NVMe-oF 1.1 section 3.3, Figure 21; NVMe
 * Base 2.0 section 8.13 for the authentication itself). An I/O queue gets its {@link VolumeIo} here, from the
 * subsystem's factory of the moment; if it cannot be opened the Connect is answered Internal Error. A validated
 * Connect first gives the queue its full buffers ({@link QueueAdmission#grow}: until then a pending queue holds
 * one Connect slot); when they cannot be registered the Connect is answered Internal Error. Runs on the connecting
 * queue's poller.
 */
final class Connect {
    private static final Logger LOG = LoggerFactory.getLogger(Connect.class);
    private static final ValueLayout.OfLong HOSTID = ValueLayout.JAVA_LONG_UNALIGNED;

    private Connect() {
    }

    /** NEW: the queue is not yet connected and no Connect of it waits; the 1024-byte connect data from the host. */
    static Outcome prepare(Request r, FabricQueue q) {
        if (q.controller != null) {
            return q.reject(r, Commands.CSE, "connect", 1, "queue already connected");
        }
        if (q.connectAwaitingFence()) {
            return q.reject(r, Commands.CSE, "connect", 1, "a Connect on this queue already waits for the host's "
                    + "previous association to drain");
        }
        return Commands.dataFromHost(r, q, ConnectDataDescriptor.DATA_LENGTH, false);
    }

    /**
     * READY_TO_EXECUTE: creates the controller (qid 0) or attaches the I/O queue to it; {@link Outcome#AWAIT_FENCE}
     * when the host's previous association must drain first (the command then runs again with {@code r.fence} set).
     */
    static Outcome execute(Request r, FabricQueue q) {
        MemorySegment sqe = r.sqe;
        MemorySegment data = r.data;
        Target t = q.target;
        int recfmt = ConnectDataDescriptor.recfmt(sqe);
        if (recfmt != 0) {
            return invalidParameter(r, q, false, ConnectDataDescriptor.RECFMT_OFFSET, "recfmt=" + recfmt
                    + ", supported=0");
        }
        int qid = ConnectDataDescriptor.qid(sqe);
        if (qid != q.qid) {
            return invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid + ", expected="
                    + q.qid + " (qid of the connection private data)");
        }
        int sqsize = ConnectDataDescriptor.sqsize(sqe);
        int maxEntries = q.options.maxEntries(qid);
        int max = Math.min(maxEntries, q.entries) - 1;
        if (sqsize < 1 || sqsize > max) {
            return invalidParameter(r, q, false, ConnectDataDescriptor.SQSIZE_OFFSET, "sqsize=" + sqsize
                    + ", min=1, max=" + max + " (0-based; maxQueueEntries=" + maxEntries + ", queue entries="
                    + q.entries + ")");
        }
        for (int off : new int[] {ConnectDataDescriptor.SUBNQN_OFFSET, ConnectDataDescriptor.HOSTNQN_OFFSET}) {
            String fault = ConnectDataDescriptor.nqnFault(data, off);
            if (fault != null) { // before any NQN is looked up or logged
                return invalidParameter(r, q, true, off, (off == ConnectDataDescriptor.SUBNQN_OFFSET ? "subnqn "
                        : "hostnqn ") + fault);
            }
        }
        String subnqn = ConnectDataDescriptor.subnqn(data);
        String hostnqn = ConnectDataDescriptor.hostnqn(data);
        int cntlid = ConnectDataDescriptor.cntlid(data);
        Subsystem s = t.subsystem(subnqn);
        if (s == null) {
            return invalidParameter(r, q, true, ConnectDataDescriptor.SUBNQN_OFFSET, "subnqn=" + subnqn
                    + " (unknown)");
        }
        if (!s.allowsHost(hostnqn)) {
            LOG.info("connect rejected: invalid host: hostnqn={}, subnqn={}, admits={}, qid={}, peer={}",
                    hostnqn, subnqn, s.admittedHosts(), qid, q.peer);
            return r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST));
        }
        HostSecrets secrets = t.hostSecrets(); // read once: a change applies to Connects after this one
        HostSecrets.Entry auth = s.isDiscovery() ? null : secrets.lookup(hostnqn);
        if (auth == null && s.role().exempts(hostnqn)) {
            LOG.info("connect rejected: invalid host: peer node hostnqn={} cannot prove its identity (this node has "
                    + "no node key from the management plane yet), subnqn={}, qid={}, peer={}", hostnqn, subnqn, qid,
                    q.peer);
            return r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST));
        }
        if (auth == null && secrets.secretUnknown(hostnqn)) {
            LOG.warn("connect rejected: invalid host: hostnqn={} has a DH-HMAC-CHAP secret at the management server "
                    + "that was withheld from this node (no TLS to it, see its heartbeat log), so it cannot "
                    + "authenticate here; subnqn={}, qid={}, peer={}", hostnqn, subnqn, qid, q.peer);
            return r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST));
        }
        if (auth == null && s.requiresAuth()) {
            LOG.info("connect rejected: invalid host: authentication required and hostnqn={} has no DH-HMAC-CHAP "
                    + "secret, subnqn={}, qid={}, peer={}", hostnqn, subnqn, qid, q.peer);
            return r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST));
        }
        if (qid != 0 && s.isDiscovery()) {
            return invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid
                    + ", max=0 (a discovery controller has no I/O queues)");
        }
        TargetController c;
        VolumeIo volumeIo = null;
        if (qid == 0) {
            if (cntlid != ConnectDataDescriptor.CNTLID_DYNAMIC) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.CNTLID_OFFSET, "cntlid=" + cntlid
                        + ", expected=0xffff (dynamic controller model)");
            }
            long idHigh = data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET);
            long idLow = data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET + 8);
            if (auth != null) {
                // a host that must authenticate is fenced once its admin queue authenticated, not before: a peer
                // without its secret must not end its association (AssociationFence.afterAuthentication)
            } else if (r.fence == null) {
                if (AssociationFence.begin(r, s, hostnqn, idHigh, idLow)) {
                    return Outcome.AWAIT_FENCE;
                }
            } else if (!AssociationFence.drained(r)) {
                LOG.warn("connect rejected: previous association did not drain within {} ms: hostnqn={}, subnqn={}",
                        FabricQueue.DRAIN_TIMEOUT_NS / 1_000_000, hostnqn, subnqn);
                return r.fail(NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC, NvmeStatus.SC_CONNECT_CONTROLLER_BUSY,
                        false));
            }
            if (!q.admission.grow(hostnqn)) {
                return noResources(r, q);
            }
            c = t.createController(s, hostnqn, idHigh, idLow, ConnectDataDescriptor.kato(sqe), r.startNs);
            if (c == null) { // a ConnectLimits cap or no free cntlid in s (logged)
                return r.fail(QueueAdmission.CONTROLLER_BUSY);
            }
            if (auth == null) {
                c.admit();
            }
        } else {
            c = t.controller(s, cntlid);
            if (c == null || c.isDestroyed()) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.CNTLID_OFFSET, "cntlid=" + cntlid
                        + " (unknown)");
            }
            if (c.subsystem != s) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.SUBNQN_OFFSET, "subnqn=" + subnqn
                        + ", expected=" + c.subsystem.subnqn() + " (subnqn of cntlid " + cntlid + ")");
            }
            if (!c.hostnqn().equals(hostnqn)) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.HOSTNQN_OFFSET, "hostnqn=" + hostnqn
                        + ", expected=" + c.hostnqn() + " (hostnqn of cntlid " + cntlid + ")");
            }
            if (data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET) != c.hostIdHigh
                    || data.get(HOSTID, ConnectDataDescriptor.HOSTID_OFFSET + 8) != c.hostIdLow) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.HOSTID_OFFSET, "hostid differs from the "
                        + "hostid of cntlid " + cntlid + " (its admin Connect's)");
            }
            if (!c.admitted()) {
                return invalidParameter(r, q, true, ConnectDataDescriptor.CNTLID_OFFSET, "cntlid=" + cntlid
                        + " (its admin queue has not authenticated yet, or waits for the host's previous "
                        + "association to drain)");
            }
            if (qid > q.options.maxIoQueues()) {
                return invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid + ", min=1, max="
                        + q.options.maxIoQueues());
            }
            if (!q.admission.grow(hostnqn)) {
                return noResources(r, q);
            }
            try {
                volumeIo = q.volumeIo.open(s, hostnqn, cntlid);
            } catch (RuntimeException e) {
                LOG.warn("connect failed: volume I/O could not be opened: subnqn={}, qid={}, cntlid={}, peer={}: {}",
                        subnqn, qid, cntlid, q.peer, e.toString());
                return r.fail(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
            }
            if (!c.attachIoQueue(qid, q, auth == null)) { // a queue that must authenticate takes its qid then
                TargetQueueMemory.closeQuietly(volumeIo);
                return invalidParameter(r, q, false, ConnectDataDescriptor.QID_OFFSET, "qid=" + qid + ", min=1, max="
                        + q.options.maxIoQueues() + " (already connected)");
            }
        }
        c.commandReceived(r.startNs);
        q.connected(c, sqsize + 1, volumeIo);
        r.dw0 = c.cntlid;
        if (auth != null) {
            q.auth = new QueueAuthentication(new io.rdmablock.rdma.fabric.auth.DhchapController(subnqn, hostnqn,
                    auth.hostSecret(), auth.ctrlSecret(), HostSecrets.isNodeNqn(hostnqn) ? HostSecrets.NODE_LINK_POLICY
                    : secrets.policy(), tid -> claimOnSuccess(c, q, qid, tid), t.random()), qid,
                    r.startNs + q.options.pending().connectTimeoutMs() * 1_000_000L);
            r.dw0 |= QueueAuthentication.CONNECT_AUTHREQ_ATR;
        }
        LOG.info("queue connected: qid={}, cntlid={}, sqsize={} (0-based), subnqn={}, hostnqn={}, peer={}", qid,
                c.cntlid, sqsize, subnqn, hostnqn, q.peer);
        return Outcome.COMPLETE;
    }

    /**
     * A transaction of queue {@code q} proved the host's secret (R1): claims its T_ID for the association and, on an
     * I/O queue, the qid's slot ({@link TargetController#claimIoQueue}); false refuses the transaction (Failure1).
     */
    private static boolean claimOnSuccess(TargetController c, FabricQueue q, int qid, int tid) {
        if (qid != 0 && !c.claimIoQueue(qid, q)) {
            LOG.warn("authentication refused: qid={} of cntlid={} is held by another authenticated queue, peer={}",
                    qid, c.cntlid, q.peer);
            return false;
        }
        return c.claimAuthTransaction(tid);
    }

    /** {@link QueueAdmission#grow} refused: Controller Busy (a cap) or Internal Error (no buffers). */
    private static Outcome noResources(Request r, FabricQueue q) {
        return r.fail(q.admission.refusal());
    }

    /** Connect Invalid Parameters with IATTR/IPO in dw0 (NVMe-oF 1.1 Figure 21). */
    private static Outcome invalidParameter(Request r, FabricQueue q, boolean inData, int offset, String detail) {
        LOG.info("connect rejected: invalid parameter: {} ({} byte {}), qid={}, peer={}", detail,
                inData ? "connect data" : "SQE", offset, q.qid, q.peer);
        r.dw0 = ConnectDataDescriptor.invalidParameterDw0(inData, offset);
        return r.fail(NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS));
    }
}
