package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.CmPrivateData;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A peer that speaks the soft provider's connection handshake over a plain socket and may stop at any step, as a
 * stopped process or a hostile client would: 80-byte messages, magic "RBKV", version 1, type REQ 1 / ACCEPT 2 /
 * REJECT 3 / RTU 4 at byte 5, private data length at 6, QP number at 8, depths at 12-13, private data at 24.
 */
final class SoftHandshakePeer implements AutoCloseable {
    static final byte REQ = 1;
    static final byte ACCEPT = 2;
    static final byte RTU = 4;

    final SocketChannel channel;

    private SoftHandshakePeer(SocketChannel channel) {
        this.channel = channel;
    }

    /** A TCP connection to {@code target} that has said nothing yet. */
    static SoftHandshakePeer open(InetSocketAddress target) throws IOException {
        return new SoftHandshakePeer(SocketChannel.open(target));
    }

    /** Sends the connect request of queue {@code qid} with {@code entries} (HSQSIZE entries - 1). */
    void request(int qid, int entries) throws IOException {
        write(msg(REQ, new CmPrivateData.Request(0, qid, entries, entries - 1, 0).encode()));
    }

    /** Reads the node's 80-byte answer; its type (ACCEPT 2, REJECT 3), or -1 at end of stream. */
    int readAnswer() throws IOException {
        ByteBuffer reply = ByteBuffer.allocate(80);
        while (reply.hasRemaining()) {
            if (channel.read(reply) < 0) {
                return -1;
            }
        }
        return reply.get(5);
    }

    /** Sends the RTU that ends the handshake. */
    void readyToUse() throws IOException {
        write(msg(RTU, null));
    }

    /** Blocks until the node closes the connection (true) or {@code timeoutMs} passes (false). */
    boolean awaitClosedByNode(long timeoutMs) throws IOException {
        channel.configureBlocking(true);
        channel.socket().setSoTimeout((int) timeoutMs);
        byte[] b = new byte[4096];
        try (var in = channel.socket().getInputStream()) {
            int n;
            do {
                n = in.read(b);
            } while (n > 0);
            return n < 0;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset by the node
        }
    }

    /** A soft-provider CM message (80 bytes) of {@code type} with private data {@code pd} (or none). */
    static ByteBuffer msg(byte type, byte[] pd) {
        ByteBuffer b = ByteBuffer.allocate(80);
        b.putInt(0, 0x52424B56);
        b.put(4, (byte) 1);
        b.put(5, type);
        b.put(6, (byte) (pd == null ? 0 : pd.length));
        b.putInt(8, 4242);
        b.put(12, (byte) 16);
        b.put(13, (byte) 16);
        if (pd != null) {
            b.put(24, pd);
        }
        return b;
    }

    private void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
