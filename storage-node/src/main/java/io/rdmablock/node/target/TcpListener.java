package io.rdmablock.node.target;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.DeviceContext;
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
 *
 * <p>Each queue gets this node's RDMA device for the local address its host connected to (the RDMA listener's
 * address when that is not a wildcard), resolved through the target's provider once per address on the acceptor
 * thread: the queue registers its I/O data buffers there, so a replicated primary forwards a TCP host's writes by
 * RDMA from them (docs/data-path.md, "NVMe/TCP queues"). No device for the address (logged at INFO once): the buffers
 * stay unregistered, plain volumes are served, a replicated primary refuses the I/O Connect.
 */
public final class TcpListener implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpListener.class);

    private final Target target;
    private final ServerSocketChannel server;
    private final Thread acceptor;
    private final InetSocketAddress address;
    /** Resolved routes to this node's RDMA device by local address, null values for none (acceptor thread). */
    private final java.util.Map<java.net.InetAddress, CmId> routes = new java.util.HashMap<>();
    /** Bound of resolving the route of a local address. */
    private static final long ROUTE_TIMEOUT_NS = 2_000_000_000L;

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
                q = new TcpQueue(target, ch, device(ch));
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

    /**
     * This node's RDMA device serving the local address of {@code ch} (or the RDMA listener's specific address), or
     * null when none; resolved once per address. Acceptor thread.
     */
    private DeviceContext device(SocketChannel ch) throws IOException {
        InetSocketAddress rdma = target.localAddress();
        java.net.InetAddress local = rdma.getAddress().isAnyLocalAddress()
                ? ((InetSocketAddress) ch.getLocalAddress()).getAddress() : rdma.getAddress();
        if (!routes.containsKey(local)) {
            CmId id = null;
            try {
                id = target.provider().createId();
                id.resolve(new InetSocketAddress(local, rdma.getPort()), ROUTE_TIMEOUT_NS);
                LOG.info("NVMe/TCP queues on {} register their I/O buffers on RDMA device {}", local,
                        id.device().name());
            } catch (RuntimeException e) {
                TargetQueueMemory.closeQuietly(id);
                id = null;
                LOG.info("NVMe/TCP queues on {} have no RDMA device, their buffers stay unregistered (a replicated "
                        + "volume's primary refuses their I/O Connect): {}", local, e.toString());
            }
            routes.put(local, id);
        }
        CmId id = routes.get(local);
        return id == null ? null : id.device();
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
        if (!acceptor.isAlive()) {
            routes.values().forEach(TargetQueueMemory::closeQuietly); // the devices stay the provider's
        }
    }
}
