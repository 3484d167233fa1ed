package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.nvme.auth.NodeLinkKeys;


import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Test help for peer nodes (docs/authentication.md, "Node identities"): gives a target a node key and runs a peer
 * node's DH-HMAC-CHAP transaction (bidirectional, with the link secrets derived from that key) on a raw queue.
 */
final class NodeAuth {
    /** The node key tests give a target. */
    static final byte[] KEY = new byte[NodeLinkKeys.KEY_BYTES];

    static {
        for (int i = 0; i < KEY.length; i++) {
            KEY[i] = (byte) (0x5A ^ i);
        }
    }

    private NodeAuth() {
    }

    /** Gives {@code t} the test node key (peer nodes are then checked with secrets derived from it). */
    static void install(Target t) {
        t.hostSecrets(t.hostSecrets().withNodeKey(KEY));
    }

    /**
     * Authenticates raw queue {@code h} (connected as {@code hostnqn}) with the link secrets derived from
     * {@code key}, transaction id {@code tid}, asserting every step's status; returns the host side (its state, the
     * group the node chose).
     */
    static DhchapHost authenticate(RawHost h, byte[] key, String hostnqn, String subnqn, int tid) {
        DhchapHost d = new DhchapHost(hostnqn, subnqn, NodeLinkKeys.hostSecret(key, hostnqn),
                NodeLinkKeys.ctrlSecret(key, hostnqn), tid, RawAuth.RANDOM);
        assertEquals(0, RawAuth.send(h, 10, d.negotiate()).status(), "Negotiate");
        assertEquals(0, RawAuth.receive(h, 11).status(), "Challenge");
        byte[] reply = d.onChallenge(RawAuth.received(h));
        if (reply == null) {
            return d;
        }
        assertEquals(0, RawAuth.send(h, 12, reply).status(), "Reply");
        assertEquals(0, RawAuth.receive(h, 13).status(), "Success1");
        byte[] success2 = d.onSuccess1(RawAuth.received(h));
        if (success2 != null) {
            assertEquals(0, RawAuth.send(h, 14, success2).status(), "Success2");
        }
        return d;
    }
}
