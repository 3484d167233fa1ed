package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.auth.DhchapController;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * In-band authentication of one queue (NVMe Base 2.0 sections 6.1, 6.2, 8.13; Linux
 * {@code drivers/nvme/target/fabrics-cmd-auth.c}): the Fabrics Authentication Send (FCTYPE 05h) and Receive (06h)
 * commands drive a {@link DhchapController}. Made at Connect when the host is listed in the target's
 * {@link HostSecrets} (the Connect answer then carries AUTHREQ.ATR, dw0 bit 17); until it reports success every other
 * command on the queue is answered Authentication Required (SCT 1, SC 91h, DNR). Command checks, answered Invalid Field
 * in Command (DNR): SECP E9h, SPSP0 and SPSP1 01h, TL / AL 1..4096 and within the queue's data buffer; the SGL length
 * must equal TL / AL (Data SGL Length Invalid otherwise).
 *
 * <p>An Authentication Receive whose answer needs a DH computation (the Challenge's key pair, the Reply's check) waits
 * for it without blocking the poller ({@link Request.State#AWAITING_AUTH}): {@link DhchapWork} runs it on a worker
 * thread, within a DH work budget per peer address; meanwhile another Authentication Send or Receive on the queue is
 * answered Command Sequence Error. Per queue, at most {@link DhchapLimits#transactionsBeforeSuccess} Negotiates
 * before the first success, then at most one per {@link DhchapLimits#reauthIntervalMs}; one more is answered
 * Failure1 (01h).
 *
 * <p>A failed authentication is answered with the failure message (AUTH_Failure1 in the Authentication Receive data,
 * status 0, as nvmet) and {@link #FAILURE_LINGER_NS} later the queue is torn down: on the admin queue with its whole
 * association, on an I/O queue that queue alone (the host sending AUTH_Failure2 ends it the same way), so a peer that
 * fails on an I/O queue it attached to a host's controller cannot end that host's association. When the admin queue
 * first authenticates, the host's previous associations are fenced ({@link AssociationFence#afterAuthentication}):
 * the command that completed the authentication waits until they drained, and only then may I/O queues attach. A
 * queue not authenticated within the pending-connect timeout ({@link TargetOptions.PendingLimits#connectTimeoutMs})
 * of its Connect is torn down. Poller thread only.
 */
final class QueueAuthentication {
    private static final Logger LOG = LoggerFactory.getLogger(QueueAuthentication.class);
    /** AUTHREQ.ATR in the Connect response dw0 (Linux NVME_CONNECT_AUTHREQ_ATR): authentication required. */
    static final int CONNECT_AUTHREQ_ATR = 1 << 17;
    /** Authentication Required (NVMe Base 2.0 Figure 102, Fabrics command specific 91h), DNR. */
    static final int AUTH_REQUIRED = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC, 0x91, true);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    final DhchapController dhchap;
    /** The queue's qid: a failure on qid 0 ends the association, on an I/O queue only the queue. */
    private final int qid;
    private final long deadlineNs;
    /** True while the command that completed the admin queue's authentication waits for the fence. */
    private boolean fencing;
    /** True while an Authentication Receive waits for its DH computation ({@link #resume}). */
    private boolean parked;
    /** The computation handed to {@link DhchapWork}, null before (and after) it. */
    private DhchapWork.Job job;
    /** When {@link #resume} may ask {@link DhchapWork} again (System.nanoTime). */
    private long nextSubmitNs;
    /** Negotiates received before the queue first authenticated. */
    private int transactions;
    /** When the last Negotiate that started a transaction arrived (System.nanoTime), 0 before. */
    private long lastNegotiateNs;
    private boolean logged;
    /** When the authentication failed (System.nanoTime), 0 before. */
    private long failedAtNs;
    /** How long a failed queue stays up so its failure message is delivered (100 ms). */
    static final long FAILURE_LINGER_NS = 100_000_000L;

    QueueAuthentication(DhchapController dhchap, int qid, long deadlineNs) {
        this.dhchap = dhchap;
        this.qid = qid;
        this.deadlineNs = deadlineNs;
    }

    /** True when the host proved its secret on this queue and (admin queue) the fence is over. */
    boolean authenticated() {
        return dhchap.isAuthenticated() && !fencing;
    }

    /**
     * Housekeeping of the queue: true when the queue is to be torn down, because the deadline passed without success
     * or the authentication failed {@link #FAILURE_LINGER_NS} ago (on the admin queue the association is then
     * destroyed too; an I/O queue ends alone). The linger lets the failure message reach the host before the
     * connection closes; meanwhile every other command is refused.
     */
    boolean due(long nowNs, TargetController c) {
        if (failedAtNs != 0 && nowNs - failedAtNs >= FAILURE_LINGER_NS) {
            if (qid == 0) {
                c.destroy("authentication failed");
            }
            return true;
        }
        return !dhchap.isAuthenticated() && nowNs - deadlineNs >= 0;
    }

    /** NEW of an Authentication Send / Receive ({@code fctype} 05h / 06h). */
    static Outcome prepare(Request r, FabricQueue q, int fctype) {
        if (q.controller == null) {
            return q.reject(r, Commands.CSE, "fctype", fctype, "Connect must come first");
        }
        if (q.auth == null) {
            return q.reject(r, Commands.INVALID_FIELD, "fctype", fctype, "authentication not configured for host "
                    + q.controller.hostnqn());
        }
        MemorySegment sqe = r.sqe;
        int secp = sqe.get(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET) & 0xFF;
        int spsp0 = sqe.get(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET) & 0xFF;
        int spsp1 = sqe.get(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET) & 0xFF;
        if (secp != DhchapMessages.SECP) {
            return q.reject(r, Commands.INVALID_FIELD, "secp", secp, "supported=0xe9 (DH-HMAC-CHAP)");
        }
        if (spsp0 != DhchapMessages.SPSP || spsp1 != DhchapMessages.SPSP) {
            return q.reject(r, Commands.INVALID_FIELD, "spsp0/spsp1", spsp0 << 8 | spsp1, "supported=0x01/0x01");
        }
        long len = Integer.toUnsignedLong(sqe.get(U32, DhchapMessages.LENGTH_OFFSET));
        long max = Math.min(DhchapMessages.MAX_LENGTH, q.dataBytesPerRequest);
        if (len < 1 || len > max) {
            return q.reject(r, Commands.INVALID_FIELD, fctype == Opcodes.FCTYPE_AUTH_SEND ? "tl" : "al", len,
                    "min=1, max=" + max);
        }
        return fctype == Opcodes.FCTYPE_AUTH_SEND
                ? Commands.dataFromHost(r, q, (int) len, true)
                : Commands.dataToHost(r, q, (int) len, true);
    }

    /**
     * READY_TO_EXECUTE of an Authentication Send / Receive: {@link Outcome#COMPLETE}, or {@link Outcome#AWAIT_FENCE}
     * when it completed the admin queue's first authentication and the host's previous association must drain (the
     * command then runs again with {@code r.fence} set, its data already in place).
     */
    static Outcome execute(Request r, FabricQueue q, int fctype) {
        QueueAuthentication a = q.auth;
        if (r.fence != null) {
            return a.fenceDone(r, q);
        }
        DhchapController d = a.dhchap;
        if (a.parked) {
            return q.reject(r, Commands.CSE, "fctype", fctype, "an Authentication Receive of this queue waits for its "
                    + "DH computation");
        }
        if (fctype == Opcodes.FCTYPE_AUTH_SEND) {
            byte[] m = r.data.asSlice(0, r.transferBytes).toArray(ValueLayout.JAVA_BYTE);
            String refused = m.length >= DhchapMessages.FAILURE_LENGTH && DhchapMessages.type(m)
                    == DhchapMessages.TYPE_COMMON && DhchapMessages.id(m) == DhchapMessages.ID_NEGOTIATE
                    ? a.negotiateRefused(q.target.dhchapWork().limits, r.startNs) : null;
            if (refused != null) {
                d.refuse(DhchapMessages.FAILED, refused);
            } else {
                d.send(m);
            }
        } else {
            if (d.computePending()) {
                a.parked = true; // resume() hands the computation to a worker; nothing touches d until it is done
                return Outcome.AWAIT_AUTH;
            }
            if (r.transferBytes < d.receiveLengthBytes()) {
                return q.reject(r, Commands.INVALID_FIELD, "al", r.transferBytes, "min=" + d.receiveLengthBytes());
            }
            byte[] m = d.receive();
            MemorySegment out = r.dataBuffer.asSlice(0, r.transferBytes);
            out.fill((byte) 0);
            MemorySegment.copy(m, 0, out, ValueLayout.JAVA_BYTE, 0, m.length);
        }
        return a.after(r, q);
    }

    /**
     * The per-queue limits of {@link DhchapLimits}: null when this Negotiate may start a transaction, else why
     * not (the transaction is then answered Failure1, 01h).
     */
    private String negotiateRefused(DhchapLimits limits, long nowNs) {
        if (!logged) { // never authenticated on this queue
            if (++transactions > limits.transactionsBeforeSuccess()) {
                return "rate limit: transaction " + transactions + " on a queue not authenticated, max="
                        + limits.transactionsBeforeSuccess() + " (rdmablock.node.dhchap.transactionsBeforeSuccess)";
            }
        } else if (lastNegotiateNs != 0 && nowNs - lastNegotiateNs < limits.reauthIntervalMs() * 1_000_000L) {
            return "rate limit: re-authentication " + (nowNs - lastNegotiateNs) / 1_000_000 + " ms after the last, min="
                    + limits.reauthIntervalMs() + " ms (rdmablock.node.dhchap.reauthIntervalMs)";
        }
        lastNegotiateNs = nowNs;
        return null;
    }

    /**
     * Poll round of a queue whose Authentication Receive waits ({@link Request.State#AWAITING_AUTH}): hands the DH
     * computation to {@link DhchapWork} (again every 10 ms while the peer address has no budget or the pool is full)
     * and answers true once it is done (a failed computation is answered Failure1, 01h). While it waits the host
     * waits for the node, so the association counts as active for its keep-alive timer
     * ({@link TargetController#commandReceived}): a slow machine (an emulator: seconds per exponentiation) or a
     * spent address budget never expires a host that is only waiting for its answer. Poller thread.
     */
    boolean resume(FabricQueue q, long nowNs) {
        TargetController c = q.controller;
        if (c != null) {
            c.commandReceived(nowNs);
        }
        if (job == null) {
            if (nowNs - nextSubmitNs < 0) {
                return false;
            }
            job = q.target.dhchapWork().submit(q.peerAddress, dhchap, nowNs);
            if (job == null) {
                nextSubmitNs = nowNs + 10_000_000L;
                return false;
            }
        }
        if (!job.done()) {
            return false;
        }
        if (job.error() != null) {
            dhchap.refuse(DhchapMessages.FAILED, "DH computation failed: " + job.error());
        }
        job = null;
        parked = false;
        return true;
    }

    /**
     * Logs the outcome once; a failed authentication ends the queue (after this response is posted, see
     * {@link #due}); the admin queue's first success begins the fence of the host's previous associations.
     */
    private Outcome after(Request r, FabricQueue q) {
        TargetController c = q.controller;
        if (dhchap.isAuthenticated() && !logged) {
            logged = true;
            LOG.info("queue authenticated: qid={}, cntlid={}, hostnqn={}, hash={}, dhgroup={}, peer={}", q.qid,
                    c.cntlid, c.hostnqn(), dhchap.hash().displayName(), dhchap.group().displayName, q.peer);
            if (qid == 0 && !c.admitted() && AssociationFence.afterAuthentication(r, c)) {
                fencing = true;
                return Outcome.AWAIT_FENCE;
            }
        } else if (dhchap.state() == DhchapController.State.FAILED && failedAtNs == 0) {
            failedAtNs = System.nanoTime() | 1;
            LOG.warn("authentication failed: qid={}, cntlid={}, hostnqn={}, peer={}, explanation={}: {}", q.qid,
                    c.cntlid, c.hostnqn(), q.peer, DhchapMessages.explanation(dhchap.failureExplanation()),
                    dhchap.failureDetail());
        }
        return Outcome.COMPLETE;
    }

    /**
     * The fence of the admin queue's first authentication is over: the controller is admitted and the command's
     * response (its data already in place) is posted; if the previous association did not drain within
     * {@link FabricQueue#DRAIN_TIMEOUT_NS} the new association is destroyed and the command answered Internal Error.
     */
    private Outcome fenceDone(Request r, FabricQueue q) {
        fencing = false;
        TargetController c = q.controller;
        if (!AssociationFence.drained(r)) {
            LOG.warn("authentication refused: previous association did not drain within {} ms: cntlid={}, hostnqn={}",
                    FabricQueue.DRAIN_TIMEOUT_NS / 1_000_000, c.cntlid, c.hostnqn());
            c.destroy("previous association of the host did not drain");
            return r.fail(NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
        }
        c.admit();
        return Outcome.COMPLETE;
    }
}
