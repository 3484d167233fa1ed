package io.rdmablock.node.nvmf;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.fabric.auth.DhchapHost;
import io.rdmablock.rdma.fabric.auth.DhchapMessages;
import io.rdmablock.rdma.fabric.auth.NodeLinkKeys;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.security.SecureRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Test help for peer nodes (docs/authentication.md, "Node identities"): gives a target a node key and runs a peer
 * node's DH-HMAC-CHAP transaction (bidirectional, with the link secrets derived from that key) on a raw queue.
 */
final class NodeAuth {
    /** The node key tests give a target. */
    static final byte[] KEY = new byte[NodeLinkKeys.KEY_BYTES];
    private static final SecureRandom RANDOM = new SecureRandom();

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
     * {@code key}, transaction id {@code tid}, asserting every step's status; returns the final state.
     */
    static DhchapHost.State authenticate(RawHost h, byte[] key, String hostnqn, String subnqn, int tid) {
        DhchapHost d = new DhchapHost(hostnqn, subnqn, NodeLinkKeys.hostSecret(key, hostnqn),
                NodeLinkKeys.ctrlSecret(key, hostnqn), tid, RANDOM);
        assertEquals(0, auth(h, Opcodes.FCTYPE_AUTH_SEND, 10, d.negotiate()), "Negotiate");
        assertEquals(0, auth(h, Opcodes.FCTYPE_AUTH_RECEIVE, 11, null), "Challenge");
        byte[] reply = d.onChallenge(received(h));
        if (reply == null) {
            return d.state();
        }
        assertEquals(0, auth(h, Opcodes.FCTYPE_AUTH_SEND, 12, reply), "Reply");
        assertEquals(0, auth(h, Opcodes.FCTYPE_AUTH_RECEIVE, 13, null), "Success1");
        byte[] success2 = d.onSuccess1(received(h));
        if (success2 != null) {
            assertEquals(0, auth(h, Opcodes.FCTYPE_AUTH_SEND, 14, success2), "Success2");
        }
        return d.state();
    }

    /** Authentication Send (FCTYPE 05h) or Receive (06h), message at the host's data offset 0; the status. */
    private static int auth(RawHost h, int fctype, int cid, byte[] send) {
        MemorySegment c = h.command(0, Opcodes.FABRICS, cid, 0);
        SqeDescriptor.fctype(c, fctype);
        int len = send != null ? send.length : DhchapMessages.MAX_LENGTH;
        if (send != null) {
            MemorySegment.copy(send, 0, h.data(), ValueLayout.JAVA_BYTE, 0, send.length);
        }
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), h.dataAddress(0), len, h.rkey());
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP0_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SPSP1_OFFSET, (byte) 1);
        c.set(ValueLayout.JAVA_BYTE, DhchapMessages.SECP_OFFSET, (byte) DhchapMessages.SECP);
        c.set(ValueLayout.JAVA_INT_UNALIGNED, DhchapMessages.LENGTH_OFFSET, len);
        int status = h.exec(c).status();
        if (status != 0) {
            throw new AssertionError("authentication command refused: " + NvmeStatus.describe(status));
        }
        return status;
    }

    private static byte[] received(RawHost h) {
        return h.data().asSlice(0, DhchapMessages.MAX_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }
}
