package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.auth.DhGroup;
import io.rdmablock.nvme.auth.DhchapHash;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.nvme.auth.NodeLinkKeys;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attacks on a secondary copy of issue "Node identities are proven" (docs/authentication.md, "Node
 * identities"), each refused: a peer that only claims a node's host NQN (the cluster's prefix, or even the primary's
 * exact NQN) without its link secret, a node the management plane does not name for the volume, and a named,
 * authenticated node that sends an epoch far above what the management plane told this node (2^63-1). In each case
 * nothing is read, nothing is written and the persisted epoch is unchanged.
 */
class NodeIdentityTest extends TargetTestBase {
    static final String PRIMARY = "nqn.2026-11.io.rdmablock:node:primary-1";
    static final String SUCCESSOR = "nqn.2026-11.io.rdmablock:node:secondary-2";
    static final String INTRUDER = "nqn.2026-11.io.rdmablock:node:intruder";
    static final int INVALID_HOST = NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_HOST);
    static final long SLBA = 64;
    Subsystem s;

    @BeforeEach
    void setUp() {
        s = f.target.subsystemOfVolume("vol1");
        f.store.setAllowedHosts("vol1", Set.of(TargetFixture.HOSTNQN)); // the volume's allow-list names one host
        NodeAuth.install(f.target);
        f.store.raiseEpoch("vol1", 4);
        s.managedEpoch(4);
        s.secondaryOf(PRIMARY, Set.of(SUCCESSOR));
    }

    /** The admin Connect status of {@code hostnqn}, the queue closed afterwards. */
    private int connectStatus(String hostnqn) {
        try (RawHost h = f.host(0, 32)) {
            return h.fabricConnect(31, 0, f.subnqn, hostnqn, 0xFFFF).status();
        }
    }

    private void assertUntouched() {
        assertEquals(4, f.store.epoch("vol1"), "the persisted epoch is unchanged");
        assertTrue(f.target.connectedHosts("vol1").isEmpty(), "no association: " + f.target.connectedHosts("vol1"));
    }

    @Test
    void aPeerClaimingANodeNqnNotNamedForTheVolumeIsRefusedAtConnect() {
        int st = connectStatus(INTRUDER);
        assertEquals(INVALID_HOST, st, "a node NQN prefix admits nobody: " + NvmeStatus.describe(st));
        assertUntouched();
    }

    @Test
    void aPeerClaimingThePrimarysNqnWithoutItsSecretReadsAndWritesNothing() {
        try (RawHost admin = f.host(0, 32)) {
            RawHost.Cqe c = admin.fabricConnect(31, 0, f.subnqn, PRIMARY, 0xFFFF);
            assertEquals(0, c.status(), "the Connect itself completes, with AUTHREQ.ATR: "
                    + NvmeStatus.describe(c.status()));
            assertTrue((c.dw0() & QueueAuthentication.CONNECT_AUTHREQ_ATR) != 0, "authentication required");
            int cntlid = c.dw0() & 0xFFFF;
            RawHost.Cqe id = admin.identify(Opcodes.CNS_CONTROLLER, 0);
            assertEquals(NvmeStatus.commandSpecific(0x91), id.status(), "no command before authentication: "
                    + NvmeStatus.describe(id.status()));
            try (RawHost q = f.host(1, 8)) {
                RawHost.Cqe ioc = q.fabricConnect(7, 0, f.subnqn, PRIMARY, cntlid);
                if (ioc.status() == 0) {
                    int w = q.writeBlocks(1, SLBA, 0x66, Long.MAX_VALUE).status();
                    assertTrue(w != 0, "an unauthenticated WRITE is refused");
                    int r = q.readBlocks(1, 2, SLBA).status();
                    assertTrue(r != 0, "an unauthenticated READ is refused");
                }
            }
            // a wrong secret (another node key's derivation) fails the transaction
            byte[] wrong = NodeLinkKeys.newKey(new java.security.SecureRandom());
            DhchapHost.State st = NodeAuth.authenticate(admin, wrong, PRIMARY, f.subnqn, 0).state();
            assertTrue(st != DhchapHost.State.AUTHENTICATED,
                    "a wrong link secret is refused: " + st);
        }
        assertEquals(4, f.store.epoch("vol1"), "the persisted epoch is unchanged");
        disconnect();
        connect(PRIMARY, 0); // the real primary (right secret) reads zeros: nothing was written
        RawHost.Cqe r = io.readBlocks(1, 3, SLBA);
        assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
        assertEquals((byte) 0, io.data().get(ValueLayout.JAVA_BYTE, 8192), "nothing written");
    }

    @Test
    void aPeerNodeAuthenticatesBidirectionallyWithoutADiffieHellmanExchange() {
        try (RawHost admin = f.host(0, 32)) {
            RawHost.Cqe c = admin.fabricConnect(31, 0, f.subnqn, PRIMARY, 0xFFFF);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            DhchapHost d = NodeAuth.authenticate(admin, NodeAuth.KEY, PRIMARY, f.subnqn, 0);
            assertEquals(DhchapHost.State.AUTHENTICATED, d.state(), d.failureDetail());
            assertEquals(DhGroup.NULL, d.group(), "node links: the NULL DH group");
            assertEquals(DhchapHash.SHA_256, d.hash());
        }
    }

    @Test
    void aSecondaryWithoutANodeKeyAdmitsNoPeerNode() {
        f.target.hostSecrets(HostSecrets.NONE);
        assertEquals(INVALID_HOST, connectStatus(PRIMARY), "no node key: the primary cannot prove itself");
        assertUntouched();
    }

    @Test
    void anAuthenticatedNamedNodeCannotRaiseTheEpochAboveTheManagedCeiling() {
        connect(SUCCESSOR, 0); // authenticated: a node the management plane names for the volume
        int st = io.writeBlocks(1, SLBA, 0x77, Long.MAX_VALUE).status();
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), st, "epoch 2^63-1: " + NvmeStatus.describe(st));
        assertEquals(4, f.store.epoch("vol1"), "nothing persisted");
        st = io.writeBlocks(2, SLBA, 0x77, 4 + TargetTuning.DEFAULT_EPOCH_WINDOW + 1).status();
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), st, "just above the window");
        assertEquals(4, f.store.epoch("vol1"), "nothing persisted");
        assertEquals(0, io.writeBlocks(3, SLBA, 0x55, 5).status(), "a promotion's epoch + 1 is taken");
        assertEquals(5, f.store.epoch("vol1"));
        RawHost.Cqe r = io.readBlocks(1, 4, SLBA);
        assertEquals(0, r.status());
        assertEquals((byte) 0x55, io.data().get(ValueLayout.JAVA_BYTE, 8192), "only the in-window write landed");
    }

    @Test
    void theAllowListedHostStillSeesTheSecondaryAsInaccessible() {
        connect(TargetFixture.HOSTNQN, 0);
        assertEquals(Subsystem.ANA_INACCESSIBLE, io.readBlocks(1, 1, SLBA).status());
    }
}
