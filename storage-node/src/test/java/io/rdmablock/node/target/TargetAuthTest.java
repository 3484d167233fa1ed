package io.rdmablock.node.target;

import io.rdmablock.nvmf.host.AdminCommands;
import io.rdmablock.nvmf.host.NvmfStatusException;
import io.rdmablock.nvmf.host.QueueAuthenticator;
import io.rdmablock.nvmf.host.QueueConnection;
import io.rdmablock.nvmf.host.QueueMemory;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import io.rdmablock.nvme.auth.DhchapSecret;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NVMe in-band authentication (DH-HMAC-CHAP) on the target, with the nvmf-host queue code and raw hosts. */
@Timeout(60)
class TargetAuthTest {
    private static final long TIMEOUT_NS = 10_000_000_000L;
    private static final SecureRandom RANDOM = new SecureRandom();
    private final DhchapSecret hostSecret = DhchapSecret.generate(1, 32, RANDOM);
    private final DhchapSecret ctrlSecret = DhchapSecret.generate(2, 48, RANDOM);
    @TempDir
    Path dir;
    private TargetFixture f;
    private CmId route;
    private ProtectionDomain pd;
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void start() {
        f = new TargetFixture(dir);
        f.target.hostSecrets(HostSecrets.of(Map.of(TargetFixture.HOSTNQN,
                new HostSecrets.Entry(hostSecret, ctrlSecret))));
        route = f.provider.createId();
        route.resolve(f.target.localAddress(), TIMEOUT_NS);
        pd = route.device().allocPd();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        pd.close();
        route.close();
        f.close();
    }

    private QueueConnection connect(int qid, int cntlid, String hostnqn, DhchapSecret secret, DhchapSecret ctrl) {
        QueueMemory mem = qid == 0 ? QueueMemory.forAdminQueue(pd, 8) : new QueueMemory(pd, 7, 0, 8);
        open.add(mem);
        try {
            QueueConnection c = QueueConnection.connect(f.provider, f.target.localAddress(), pd, mem, qid, 8, cntlid,
                    new QueueConnection.ConnectParams(f.subnqn, hostnqn, new byte[16], 0).withDhchap(secret, ctrl),
                    TIMEOUT_NS);
            open.add(c);
            return c;
        } catch (RuntimeException e) {
            throw e;
        }
    }

    @Test
    void shouldAuthenticateAdminAndIoQueuesWithTheRightSecret() {
        QueueConnection admin = connect(0, 0xFFFF, TargetFixture.HOSTNQN, hostSecret, null);
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(admin, TIMEOUT_NS).status());
        QueueConnection io = connect(1, admin.cntlid(), TargetFixture.HOSTNQN, hostSecret, null);
        assertEquals(1, io.qid());
    }

    @Test
    void shouldAuthenticateBidirectionally() {
        QueueConnection admin = connect(0, 0xFFFF, TargetFixture.HOSTNQN, hostSecret, ctrlSecret);
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(admin, TIMEOUT_NS).status());
    }

    @Test
    void shouldRefuseAWrongSecretWithAuthenticationRequired() {
        NvmfStatusException e = assertThrows(NvmfStatusException.class, () -> connect(0, 0xFFFF,
                TargetFixture.HOSTNQN, DhchapSecret.generate(1, 32, RANDOM), null));
        assertEquals(1, e.sct());
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, e.sc());
        assertTrue(e.getMessage().contains("refused the host"), e.getMessage());
        assertTrue(e.getMessage().contains("01h authentication failed"), e.getMessage());
    }

    @Test
    void shouldRefuseAHostWithoutASecretOnASubsystemRequiringAuthWithConnectInvalidHost() {
        f.target.subsystem(f.subnqn).requireAuth(true);
        String other = "nqn.2026-11.io.example:no-secret";
        NvmfStatusException e = assertThrows(NvmfStatusException.class, () -> connect(0, 0xFFFF, other, null, null));
        assertEquals(NvmeStatus.SCT_COMMAND_SPECIFIC, e.sct());
        assertEquals(NvmeStatus.SC_CONNECT_INVALID_HOST, e.sc());
        // a host with a secret still authenticates and connects
        QueueConnection admin = connect(0, 0xFFFF, TargetFixture.HOSTNQN, hostSecret, null);
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(admin, TIMEOUT_NS).status());
        f.target.subsystem(f.subnqn).requireAuth(false);
        QueueConnection plain = connect(0, 0xFFFF, other, null, null); // no longer required: admitted
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(plain, TIMEOUT_NS).status());
    }

    @Test
    void shouldEndTheAssociationOfAHostWithoutASecretWhenAuthenticationBecomesRequired() throws Exception {
        String other = "nqn.2026-11.io.example:no-secret";
        QueueConnection plain = connect(0, 0xFFFF, other, null, null);
        QueueConnection authed = connect(0, 0xFFFF, TargetFixture.HOSTNQN, hostSecret, null);
        Subsystem s = f.target.subsystem(f.subnqn);
        s.requireAuth(true);
        s.revokeHostsWithoutSecrets(f.target.hostSecrets());
        TargetController gone = f.target.controller(plain.cntlid());
        assertTrue(gone == null || gone.isDestroyed(), "the host without a secret is revoked");
        assertTrue(!f.target.controller(authed.cntlid()).isDestroyed(), "the authenticated host stays");
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(authed, TIMEOUT_NS).status());
    }

    @Test
    void shouldRefuseAHostWithoutSecret() {
        NvmfStatusException e = assertThrows(NvmfStatusException.class, () -> connect(0, 0xFFFF,
                TargetFixture.HOSTNQN, null, null));
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, e.sc());
        assertTrue(e.getMessage().contains("no host secret"), e.getMessage());
    }

    @Test
    void shouldRefuseAControllerThatCannotProveItself() {
        NvmfStatusException e = assertThrows(NvmfStatusException.class, () -> connect(0, 0xFFFF,
                TargetFixture.HOSTNQN, hostSecret, DhchapSecret.generate(2, 48, RANDOM)));
        assertEquals(NvmeStatus.SC_AUTHENTICATION_REQUIRED, e.sc());
        assertTrue(e.getMessage().contains("refused the node"), e.getMessage());
    }

    @Test
    void shouldAskForAuthenticationAndRefuseOtherCommandsUntilThen() {
        try (RawHost h = f.host(0, 8)) {
            RawHost.Cqe c = h.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            assertEquals(0, c.status());
            assertEquals(QueueAuthenticator.CONNECT_AUTHREQ_ATR, c.dw0() & QueueAuthenticator.CONNECT_AUTHREQ_ATR);
            RawHost.Cqe p = h.propertyGet(2, Opcodes.PROP_CAP);
            assertEquals(QueueAuthentication.AUTH_REQUIRED, p.status());
            RawHost.Cqe k = h.exec(h.keepAlive(0, 3));
            assertEquals(QueueAuthentication.AUTH_REQUIRED, k.status());
        }
    }

    @Test
    void shouldLetUnlistedHostsConnectWithoutAuthentication() {
        String other = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000ff";
        try (RawHost h = f.host(0, 8)) {
            RawHost.Cqe c = h.fabricConnect(7, 0, f.subnqn, other, 0xFFFF);
            assertEquals(0, c.status());
            assertEquals(0, c.dw0() & QueueAuthenticator.CONNECT_AUTHREQ_ATR);
            assertEquals(0, h.propertyGet(2, Opcodes.PROP_CAP).status());
        }
        QueueConnection admin = connect(0, 0xFFFF, other, null, null);
        assertEquals(NvmeStatus.SUCCESS, AdminCommands.keepAlive(admin, TIMEOUT_NS).status());
    }

    @Test
    void shouldLoadTheSecretsFile() throws Exception {
        Path file = dir.resolve("secrets");
        Files.writeString(file, "# hosts\n" + TargetFixture.HOSTNQN + " " + hostSecret.encoded() + " "
                + ctrlSecret.encoded() + "  # bidirectional\n\nnqn.b " + hostSecret.encoded() + "\n");
        HostSecrets s = HostSecrets.load(file);
        assertEquals(2, s.size());
        assertTrue(s.lookup(TargetFixture.HOSTNQN).ctrlSecret().sameAs(ctrlSecret));
        assertEquals(null, s.lookup("nqn.b").ctrlSecret());
        Files.writeString(file, "nqn.c DHHC-1:01:AAAA:\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HostSecrets.load(file));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    }

    /** Authentication Send (FCTYPE 05h) or Receive (06h) on a raw host, message at host data offset 0. */
    private static RawHost.Cqe rawAuth(RawHost h, int fctype, int cid, byte[] send, int secp) {
        MemorySegment c = h.command(0, Opcodes.FABRICS, cid, 0);
        SqeDescriptor.fctype(c, fctype);
        int len = send != null ? send.length : DhchapMessages.MAX_LENGTH;
        if (send != null) {
            MemorySegment.copy(send, 0, h.data(), ValueLayout.JAVA_BYTE, 0, send.length);
        }
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), h.dataAddress(0), len, h.rkey());
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET, (byte) secp);
        c.set(ValueLayout.JAVA_INT_UNALIGNED, DhchapMessages.LENGTH_OFFSET, len);
        return h.exec(c);
    }

    private static byte[] received(RawHost h) {
        return h.data().asSlice(0, DhchapMessages.MAX_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }

    /** Runs DH-HMAC-CHAP with {@code d} on raw host {@code h}; returns the last Authentication Receive data. */
    private static byte[] rawTransaction(RawHost h, DhchapHost d) {
        assertEquals(0, rawAuth(h, Opcodes.FCTYPE_AUTH_SEND, 10, d.negotiate(), DhchapMessages.SECP).status());
        assertEquals(0, rawAuth(h, Opcodes.FCTYPE_AUTH_RECEIVE, 11, null, DhchapMessages.SECP).status());
        byte[] challenge = received(h);
        byte[] reply = d.onChallenge(challenge);
        if (reply == null) {
            return challenge;
        }
        assertEquals(0, rawAuth(h, Opcodes.FCTYPE_AUTH_SEND, 12, reply, DhchapMessages.SECP).status());
        assertEquals(0, rawAuth(h, Opcodes.FCTYPE_AUTH_RECEIVE, 13, null, DhchapMessages.SECP).status());
        byte[] last = received(h);
        d.onSuccess1(last);
        return last;
    }

    @Test
    void shouldRefuseAReplayedTransactionIdOnAnotherQueueOfTheAssociation() {
        try (RawHost admin = f.host(0, 8)) {
            RawHost.Cqe c = admin.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            DhchapHost d = new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, hostSecret, null, 5, RANDOM);
            rawTransaction(admin, d);
            assertEquals(DhchapHost.State.AUTHENTICATED, d.state(), d.failureDetail());
            assertEquals(0, admin.propertyGet(20, Opcodes.PROP_CAP).status());
            try (RawHost io = f.host(1, 8)) {
                assertEquals(0, io.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, c.dw0() & 0xFFFF).status());
                DhchapHost replay = new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, hostSecret, null, 5, RANDOM);
                byte[] failure1 = rawTransaction(io, replay);
                assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(failure1));
                assertEquals(DhchapMessages.INCORRECT_PAYLOAD, replay.failureExplanation());
            }
        }
    }

    @Test
    void shouldAnswerAWrongSecretWithFailure1AndEndTheAssociation() {
        try (RawHost admin = f.host(0, 8)) {
            admin.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            DhchapHost d = new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, DhchapSecret.generate(1, 32, RANDOM),
                    null, 0, RANDOM);
            byte[] m = rawTransaction(admin, d);
            assertEquals(DhchapMessages.ID_FAILURE1, DhchapMessages.id(m));
            assertEquals(DhchapMessages.FAILED, m[7]);
            long deadline = System.nanoTime() + TIMEOUT_NS;
            while (f.target.controllerCount() > 0 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
            }
            assertEquals(0, f.target.controllerCount());
        }
    }

    @Test
    void shouldRejectABadSecpWithInvalidField() {
        try (RawHost admin = f.host(0, 8)) {
            admin.fabricConnect(7, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF);
            RawHost.Cqe c = rawAuth(admin, Opcodes.FCTYPE_AUTH_SEND, 30,
                    new DhchapHost(TargetFixture.HOSTNQN, f.subnqn, hostSecret, null, 0, RANDOM).negotiate(), 0xEA);
            assertEquals(NvmeStatus.of(0, NvmeStatus.SC_INVALID_FIELD, true), c.status());
        }
    }
}
