package io.rdmablock.tools.nbd;

import static io.rdmablock.tools.nbd.NbdProtocol.*;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A byte-level NBD client for protocol tests: sends exactly what the test says, reads replies field by field. Part
 * of the tools test-jar, public so tests in other modules (the e2e module) can drive an {@link NbdServer} with it.
 */
public final class RawNbdClient implements AutoCloseable {
    final SocketChannel ch;
    int handshakeFlags;

    public RawNbdClient(SocketAddress addr) throws IOException {
        ch = SocketChannel.open(addr);
        if (addr instanceof InetSocketAddress) {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
        ch.socket().setSoTimeout(10_000);
    }

    /** Reads the greeting and sends client flags. */
    public RawNbdClient greet(int clientFlags) throws IOException {
        ByteBuffer g = read(18);
        if (g.getLong() != NBDMAGIC || g.getLong() != IHAVEOPT) {
            throw new IOException("bad greeting");
        }
        handshakeFlags = Short.toUnsignedInt(g.getShort());
        write(ByteBuffer.allocate(4).putInt(clientFlags).flip());
        return this;
    }

    public void option(int option, ByteBuffer data) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(16).putLong(IHAVEOPT).putInt(option).putInt(data.remaining()).flip();
        write(h);
        write(data);
    }

    public record OptReply(int option, int type, ByteBuffer data) {
    }

    public OptReply optionReply() throws IOException {
        ByteBuffer h = read(20);
        if (h.getLong() != OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic");
        }
        int opt = h.getInt();
        int type = h.getInt();
        int len = h.getInt();
        return new OptReply(opt, type, read(len));
    }

    public static ByteBuffer goData(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length).putInt(n.length).put(n)
                .putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.flip();
    }

    /** Sends GO for {@code name}, reads replies up to ACK; returns the export size. */
    public long go(String name) throws IOException {
        option(OPT_GO, goData(name, INFO_BLOCK_SIZE));
        long size = -1;
        while (true) {
            OptReply r = optionReply();
            if (r.type() == REP_ACK) {
                return size;
            }
            if (r.type() != REP_INFO) {
                throw new IOException("GO failed: reply type 0x" + Integer.toHexString(r.type()));
            }
            if (r.data().getShort(0) == INFO_EXPORT) {
                size = r.data().getLong(2);
            }
        }
    }

    public void request(int flags, int type, long cookie, long offset, int length) throws IOException {
        ByteBuffer r = ByteBuffer.allocate(REQUEST_BYTES).putInt(REQUEST_MAGIC).putShort((short) flags)
                .putShort((short) type).putLong(cookie).putLong(offset).putInt(length).flip();
        write(r);
    }

    public record Reply(int error, long cookie) {
    }

    public Reply reply() throws IOException {
        ByteBuffer r = read(SIMPLE_REPLY_BYTES);
        if (r.getInt() != SIMPLE_REPLY_MAGIC) {
            throw new IOException("bad reply magic");
        }
        return new Reply(r.getInt(), r.getLong());
    }

    public ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        var in = ch.socket().getInputStream();
        while (b.hasRemaining()) {
            int k = in.read(b.array(), b.position(), b.remaining());
            if (k < 0) {
                throw new EOFException("server closed");
            }
            b.position(b.position() + k);
        }
        return b.flip();
    }

    public void write(ByteBuffer b) throws IOException {
        var out = ch.socket().getOutputStream();
        out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
        b.position(b.limit());
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
