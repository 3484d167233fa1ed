package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.SecureRandom;

/**
 * The host side of NVMe in-band authentication on one queue, right after its Fabrics Connect (Linux
 * {@code drivers/nvme/host/fabrics.c} {@code nvmf_connect_admin_queue} / {@code _io_queue}, {@code host/auth.c}):
 * DH-HMAC-CHAP ({@link DhchapHost}) over Authentication Send (FCTYPE 05h, TL = the message length) and
 * Authentication Receive (FCTYPE 06h, AL = {@link DhchapMessages#MAX_LENGTH}), SECP E9h, SPSP0 = SPSP1 = 01h, each
 * with a keyed SGL on the queue's 4096-byte registered buffer ({@link QueueMemory#identify}). T_ID is the qid, unique
 * within the association as the target requires. Runs synchronously on the connecting thread.
 *
 * <p>Errors, each an {@link NvmfStatusException} with status Authentication Required (SCT 1, SC 91h, DNR) unless the
 * target answered a command with another status: the node requires authentication (Connect AUTHREQ.ATR, dw0 bit 17)
 * and no host secret was given; the node refused the host (AUTH_Failure1: wrong secret, no common hash or group, ...);
 * the host refused the node (bidirectional: wrong controller response). The message names the reason code
 * explanation and never a key.
 */
public final class QueueAuthenticator {
    /** AUTHREQ.ATR of the Connect response dw0 (Linux NVME_CONNECT_AUTHREQ_ATR). */
    public static final int CONNECT_AUTHREQ_ATR = 1 << 17;
    /** AUTHREQ.ASCR (secure channel concatenation required): not supported. */
    public static final int CONNECT_AUTHREQ_ASCR = 1 << 18;
    /** Authentication Required, DNR: what every failure here carries. */
    public static final int AUTH_REQUIRED = NvmeStatus.of(NvmeStatus.SCT_COMMAND_SPECIFIC,
            NvmeStatus.SC_AUTHENTICATION_REQUIRED, true);
    private static final SecureRandom RANDOM = new SecureRandom();

    private QueueAuthenticator() {
    }

    /**
     * Authenticates queue {@code c} with the secrets of {@code p}.
     *
     * @throws NvmfStatusException as the class says; {@link NvmfHostException} when a command times out
     */
    public static void authenticate(QueueConnection c, QueueConnection.ConnectParams p, long timeoutNs) {
        String where = "qid=" + c.qid() + ", subnqn=" + p.subnqn() + ", hostnqn=" + p.hostnqn();
        if (p.dhchapSecret() == null) {
            throw NvmfStatusException.of("in-band authentication failed: " + where + ": the node requires "
                    + "DH-HMAC-CHAP (Connect AUTHREQ.ATR) and no host secret was given (--dhchap-secret)", AUTH_REQUIRED);
        }
        DhchapHost h = new DhchapHost(p.hostnqn(), p.subnqn(), p.dhchapSecret(), p.dhchapCtrlSecret(), c.qid(),
                RANDOM);
        send(c, h.negotiate(), where, timeoutNs);
        byte[] reply = h.onChallenge(receive(c, where, timeoutNs));
        if (reply != null) {
            send(c, reply, where, timeoutNs);
        }
        if (h.state() == DhchapHost.State.AWAIT_SUCCESS1) {
            byte[] last = h.onSuccess1(receive(c, where, timeoutNs));
            if (last != null) {
                send(c, last, where, timeoutNs);
            }
        }
        if (h.state() != DhchapHost.State.AUTHENTICATED) {
            throw NvmfStatusException.of("in-band authentication failed: " + where + ": "
                    + (h.failedByController() ? "the node refused the host (wrong or missing secret?): "
                    : "the host refused the node: ") + h.failureDetail(), AUTH_REQUIRED);
        }
    }

    private static void send(QueueConnection c, byte[] m, String where, long timeoutNs) {
        MemorySegment buf = c.memory().identify();
        MemorySegment.copy(m, 0, buf, ValueLayout.JAVA_BYTE, 0, m.length);
        exec(c, Opcodes.FCTYPE_AUTH_SEND, m.length, where, timeoutNs);
    }

    private static byte[] receive(QueueConnection c, String where, long timeoutNs) {
        MemorySegment buf = c.memory().identify();
        buf.asSlice(0, DhchapMessages.MAX_LENGTH).fill((byte) 0);
        exec(c, Opcodes.FCTYPE_AUTH_RECEIVE, DhchapMessages.MAX_LENGTH, where, timeoutNs);
        return buf.asSlice(0, DhchapMessages.MAX_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }

    private static void exec(QueueConnection c, int fctype, int lengthBytes, String where, long timeoutNs) {
        QueueMemory mem = c.memory();
        QueueConnection.Completion r = c.execSync(sqe -> {
            SqeDescriptor.clear(sqe);
            SqeDescriptor.opcode(sqe, Opcodes.FABRICS);
            SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
            SqeDescriptor.fctype(sqe, fctype);
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), mem.mr().address() + mem.identifyOffset(), lengthBytes,
                    mem.mr().rkey());
            sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET, (byte) DhchapMessages.SPSP);
            sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET, (byte) DhchapMessages.SPSP);
            sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET, (byte) DhchapMessages.SECP);
            sqe.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN),
                    DhchapMessages.LENGTH_OFFSET, lengthBytes);
        }, timeoutNs);
        if (r.status() != NvmeStatus.SUCCESS) {
            throw NvmfStatusException.of("in-band authentication failed: " + where + ": Authentication "
                    + (fctype == Opcodes.FCTYPE_AUTH_SEND ? "Send" : "Receive") + " answered with an error", r.status());
        }
    }
}
