package io.rdmablock.node.target;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DH-HMAC-CHAP over NVMe/TCP: the Authentication Send / Receive commands ride in capsules (Send: in-capsule data;
 * Receive: C2HData) and the queue's authentication is the RDMA queue's (FabricQueue): a host that must authenticate
 * gets nothing else done before it did, and everything after.
 */
@Timeout(60)
class TcpAuthTest extends TargetTestBase {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final DhchapSecret hostSecret = DhchapSecret.generate(1, 32, RANDOM);
    private TcpListener listener;

    @BeforeEach
    void listen() {
        f.target.hostSecrets(HostSecrets.of(Map.of(TargetFixture.HOSTNQN, new HostSecrets.Entry(hostSecret, null))));
        listener = TcpListener.start(f.target, new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void stopListening() {
        listener.close();
    }

    private static int auth(TcpTestHost h, int fctype, byte[] send, MemorySegment receive) throws IOException {
        MemorySegment sqe = h.arena.allocate(SqeDescriptor.LENGTH);
        SqeDescriptor.opcode(sqe, Opcodes.FABRICS);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, 40 + fctype);
        SqeDescriptor.fctype(sqe, fctype);
        int len = send != null ? send.length : (int) receive.byteSize();
        sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET, (byte) 1);
        sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET, (byte) 1);
        sqe.set(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET, (byte) DhchapMessages.SECP);
        sqe.set(ValueLayout.JAVA_INT_UNALIGNED, DhchapMessages.LENGTH_OFFSET, len);
        if (send != null) {
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, len);
            MemorySegment data = h.arena.allocate(len);
            MemorySegment.copy(send, 0, data, ValueLayout.JAVA_BYTE, 0, len);
            return h.command(sqe, data, true, 0, null);
        }
        TcpTestHost.transportSgl(sqe, len);
        return h.command(sqe, null, false, 0, receive);
    }

    @Test
    void aHostAuthenticatesOverTcpBeforeItsCommandsRun() throws IOException {
        try (TcpTestHost a = new TcpTestHost(listener.localAddress())) {
            a.icReq(true, true);
            assertEquals(0, a.connect(0, 31, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF), "admin Connect");
            a.identifyController();
            assertNotEquals(0, CqeDescriptor.status(a.cqe), "Identify before authentication");
            DhchapHost d = new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, hostSecret, null, 3, RANDOM);
            MemorySegment in = a.arena.allocate(DhchapMessages.MAX_LENGTH);
            assertEquals(0, auth(a, Opcodes.FCTYPE_AUTH_SEND, d.negotiate(), null), "negotiate");
            assertEquals(0, auth(a, Opcodes.FCTYPE_AUTH_RECEIVE, null, in), "receive challenge");
            byte[] reply = d.onChallenge(in.toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0, auth(a, Opcodes.FCTYPE_AUTH_SEND, reply, null), "reply");
            in.fill((byte) 0);
            assertEquals(0, auth(a, Opcodes.FCTYPE_AUTH_RECEIVE, null, in), "receive success1");
            d.onSuccess1(in.toArray(ValueLayout.JAVA_BYTE));
            a.identifyController();
            assertEquals(0, CqeDescriptor.status(a.cqe), "Identify after authentication");
        }
    }
}
