package io.rdmablock.node.target;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The NVMe/TCP listener of a {@link Target} ({@code rdmablock node --tcp-listen HOST:PORT}; 4420 is the IANA port):
 * one acceptor thread blocked in {@link ServerSocketChannel#accept}, which makes each connection a non-blocking
 * {@link TcpQueue} (TCP_NODELAY) and hands it to the target's pollers as the RDMA acceptor does with its queues
 * ({@link Target#adopt}: pending until a Fabrics Connect, the same pending limits and eviction). No thread per
 * connection. Start it after {@link Target#start}; close it before {@link Target#close}.
 */
public final class TcpListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpListener.class);

    private final Target target;
    private final ServerSocketChannel server;
    private final Thread acceptor;
    private final InetSocketAddress address;

    private TcpListener(Target target, ServerSocketChannel server) throws IOException {
        this.target = target;
        this.server = server;
        this.address = (InetSocketAddress) server.getLocalAddress();
        this.acceptor = new Thread(this::acceptLoop, "rdmablock-tcp-acceptor");
        acceptor.setDaemon(true);
    }

    /**
     * Binds {@code listen} (port 0: a free port, see {@link #localAddress}) and starts accepting.
     *
     * @throws java.io.UncheckedIOException when the address cannot be bound
     */
    public static TcpListener start(Target target, InetSocketAddress listen) {
        ServerSocketChannel s = null;
        try {
            s = ServerSocketChannel.open();
            s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            s.bind(listen, 128);
            TcpListener l = new TcpListener(target, s);
            target.tcpAddress = l.address;
            l.acceptor.start();
            LOG.info("target listening (tcp): address={}, maxH2cDataBytes={}, inCapsuleDataBytes={}", l.address,
                    Math.max(4096, target.options().mdtsBytes()), target.options().inCapsuleDataBytes());
            return l;
        } catch (IOException e) {
            TargetQueueMemory.closeQuietly(s);
            throw new java.io.UncheckedIOException("NVMe/TCP listen failed: address=" + listen + ": " + e.getMessage(),
                    e);
        }
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress localAddress() {
        return address;
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                LOG.warn("NVMe/TCP accept failed: {}", e.toString());
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L); // e.g. out of file descriptors
                continue;
            }
            TcpQueue q;
            try {
                ch.configureBlocking(false);
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                q = new TcpQueue(target, ch);
            } catch (IOException | RuntimeException e) {
                LOG.warn("NVMe/TCP queue allocation failed: peer={}: {}", remote(ch), e.toString());
                TargetQueueMemory.closeQuietly(ch);
                continue;
            }
            if (!target.adopt(q)) {
                q.fail("shutdown", "target stopping: no poller takes the queue");
                q.close();
            }
        }
    }

    private static String remote(SocketChannel ch) {
        try {
            return String.valueOf(ch.getRemoteAddress());
        } catch (IOException e) {
            return "?";
        }
    }

    /** Stops accepting (queues already accepted stay, served by the pollers). Idempotent. */
    @Override
    public void close() {
        if (target.tcpAddress == address) {
            target.tcpAddress = null;
        }
        TargetQueueMemory.closeQuietly(server);
        try {
            acceptor.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
