package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import io.rdmablock.nvme.auth.DhchapSecret;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.SecureRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** DH-HMAC-CHAP on a {@link RawHost}: Authentication Send / Receive (NVMe Base 2.0 sections 6.1, 6.2, 8.13). */
final class RawAuth {
    static final SecureRandom RANDOM = new SecureRandom();

    private RawAuth() {
    }

    /** Authentication Send of {@code m} (keyed SGL over host data offset 0); returns the response. */
    static RawHost.Cqe send(RawHost h, int cid, byte[] m) {
        MemorySegment.copy(m, 0, h.data(), ValueLayout.JAVA_BYTE, 0, m.length);
        return exec(h, Opcodes.FCTYPE_AUTH_SEND, cid, m.length);
    }

    /** Authentication Receive of {@link DhchapMessages#MAX_LENGTH} bytes into host data offset 0; its status. */
    static RawHost.Cqe receive(RawHost h, int cid) {
        h.data().asSlice(0, DhchapMessages.MAX_LENGTH).fill((byte) 0);
        return exec(h, Opcodes.FCTYPE_AUTH_RECEIVE, cid, DhchapMessages.MAX_LENGTH);
    }

    /** What the last {@link #receive} brought. */
    static byte[] received(RawHost h) {
        return h.data().asSlice(0, DhchapMessages.MAX_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }

    private static RawHost.Cqe exec(RawHost h, int fctype, int cid, int len) {
        MemorySegment c = h.command(0, Opcodes.FABRICS, cid, 0);
        SqeDescriptor.fctype(c, fctype);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), h.dataAddress(0), len, h.rkey());
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET, (byte) DhchapMessages.SECP);
        c.set(ValueLayout.JAVA_INT_UNALIGNED, DhchapMessages.LENGTH_OFFSET, len);
        return h.exec(c);
    }

    /** Runs one transaction of {@code d}, asserting status 0 on each command; the last message received. */
    static byte[] transaction(RawHost h, DhchapHost d) {
        assertEquals(0, send(h, 10, d.negotiate()).status(), "negotiate");
        assertEquals(0, receive(h, 11).status(), "receive challenge");
        byte[] reply = d.onChallenge(received(h));
        if (reply == null) {
            return received(h);
        }
        assertEquals(0, send(h, 12, reply).status(), "reply");
        assertEquals(0, receive(h, 13).status(), "receive success1");
        byte[] last = received(h);
        d.onSuccess1(last);
        return last;
    }

    /** Authenticates {@code h} (connected as {@code hostnqn}) with {@code secret}, T_ID {@code tid}; the host state. */
    static DhchapHost authenticate(RawHost h, String hostnqn, String subnqn, DhchapSecret secret, int tid) {
        DhchapHost d = new DhchapHost(hostnqn, subnqn, secret, null, tid, RANDOM);
        transaction(h, d);
        return d;
    }

    /** AUTH_Negotiate with T_ID {@code tid} offering SHA-256 and only DH group {@code group}. */
    static byte[] negotiate(String hostnqn, String subnqn, DhchapSecret anySecret, int tid, DhGroup group) {
        byte[] m = new DhchapHost(hostnqn, subnqn, anySecret, null, tid, RANDOM).negotiate();
        m[11] = 1; // DHLEN of the first (DH-HMAC-CHAP) descriptor
        m[12 + 30] = (byte) group.id; // its first DH group id
        return m;
    }

    /** AUTH_Failure2 (host to controller) with T_ID {@code tid} and explanation 01h (authentication failed). */
    static byte[] failure2(int tid) {
        return new byte[] {0, (byte) DhchapMessages.ID_FAILURE2, 0, 0, (byte) tid, (byte) (tid >>> 8),
                (byte) DhchapMessages.REASON_FAILURE, (byte) DhchapMessages.FAILED};
    }
}
