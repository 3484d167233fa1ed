package io.rdmablock.rdma.verbs.soft;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeoutException;

/**
 * The connection-manager handshake of the soft provider, run on the queue pair's own TCP connection before any
 * queue-pair frame (like the MPA request/reply of iWARP, RFC 5044 §7, carrying the rdma_cm private data).
 *
 * <p>Every message is {@link #MSG_LENGTH} bytes, big-endian:
 * <pre>
 *  0      4    5    6       7     8        12      13      14     24                                 80
 *  +------+----+----+-------+-----+--------+-------+-------+------+----------------------------------+
 *  |magic |ver |type|pdLen  |rsvd | qpNum  | initD | respR | rsvd | private data (56, zero padded)   |
 *  +------+----+----+-------+-----+--------+-------+-------+------+----------------------------------+
 * </pre>
 * Active: REQ -> (ACCEPT | REJECT) -> RTU. The passive side reports ESTABLISHED on RTU; only then does queue-pair
 * traffic start, so neither side ever reads past the handshake.
 */
final class CmWire {
    static final int MSG_LENGTH = 80;
    static final int MAGIC = 0x52424B56; // "RBKV"
    static final byte VERSION = 1;
    static final byte REQ = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;
    static final byte RTU = 4;
    static final int PRIVATE_DATA_OFFSET = 24;

    private CmWire() {
    }

    record Msg(byte type, int qpNum, int initiatorDepth, int responderResources, byte[] privateData) {
    }

    static ByteBuffer encode(byte type, int qpNum, int initiatorDepth, int responderResources, byte[] pd) {
        ByteBuffer b = ByteBuffer.allocate(MSG_LENGTH);
        b.putInt(0, MAGIC);
        b.put(4, VERSION);
        b.put(5, type);
        b.put(6, (byte) (pd == null ? 0 : pd.length));
        b.putInt(8, qpNum);
        b.put(12, (byte) initiatorDepth);
        b.put(13, (byte) responderResources);
        if (pd != null) {
            b.put(PRIVATE_DATA_OFFSET, pd);
        }
        return b;
    }

    static Msg decode(ByteBuffer b) throws IOException {
        if (b.getInt(0) != MAGIC || b.get(4) != VERSION) {
            throw new IOException("bad handshake: magic=0x" + Integer.toHexString(b.getInt(0)) + ", version="
                    + b.get(4));
        }
        int pdLen = b.get(6) & 0xFF;
        if (pdLen > MSG_LENGTH - PRIVATE_DATA_OFFSET) {
            throw new IOException("bad handshake: privateDataLength=" + pdLen + ", max=56");
        }
        byte[] pd = new byte[pdLen];
        b.get(PRIVATE_DATA_OFFSET, pd);
        return new Msg(b.get(5), b.getInt(8), b.get(12) & 0xFF, b.get(13) & 0xFF, pd);
    }

    static void configure(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    static void connect(SocketChannel ch, InetSocketAddress remote, long deadlineNs)
            throws IOException, TimeoutException {
        if (ch.connect(remote)) {
            return;
        }
        try (Selector s = Selector.open()) {
            ch.register(s, SelectionKey.OP_CONNECT);
            while (!ch.finishConnect()) {
                s.select(remainingMs(deadlineNs));
                s.selectedKeys().clear();
            }
        }
    }

    static void writeFully(SocketChannel ch, ByteBuffer b, long deadlineNs) throws IOException, TimeoutException {
        ch.write(b);
        if (!b.hasRemaining()) {
            return;
        }
        try (Selector s = Selector.open()) {
            ch.register(s, SelectionKey.OP_WRITE);
            while (b.hasRemaining()) {
                s.select(remainingMs(deadlineNs));
                s.selectedKeys().clear();
                ch.write(b);
            }
        }
    }

    /** Reads one message; EOFException when the peer closed first. */
    static Msg read(SocketChannel ch, long deadlineNs) throws IOException, TimeoutException {
        ByteBuffer b = ByteBuffer.allocate(MSG_LENGTH);
        if (ch.read(b) < 0) {
            throw new EOFException("peer closed the connection during the handshake");
        }
        if (b.hasRemaining()) {
            try (Selector s = Selector.open()) {
                ch.register(s, SelectionKey.OP_READ);
                while (b.hasRemaining()) {
                    s.select(remainingMs(deadlineNs));
                    s.selectedKeys().clear();
                    if (ch.read(b) < 0) {
                        throw new EOFException("peer closed the connection during the handshake");
                    }
                }
            }
        }
        return decode(b);
    }

    private static long remainingMs(long deadlineNs) throws TimeoutException {
        long left = deadlineNs - System.nanoTime();
        if (left <= 0) {
            throw new TimeoutException();
        }
        return Math.max(1, left / 1_000_000);
    }
}
