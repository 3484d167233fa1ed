package io.rdmablock.tools.nbd;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens on a TCP address or a UNIX domain socket and serves one {@link NbdExport} to any number of connections
 * (each connection: handshake, then {@link NbdConnection}). Every connection shares the export's device; see
 * {@link NbdExport#transmissionFlags()} for why that makes CAN_MULTI_CONN true.
 *
 * <p>Listen syntax: {@code unix:/path/to.sock}, {@code host:port}, {@code [v6addr]:port} or {@code port} (which binds
 * 127.0.0.1: loopback by default). Port 0 picks a free port; {@link #localAddress()} tells which.
 *
 * <p>NBD has no authentication: whoever reaches a TCP listen address can read (and, unless read-only, write) the
 * export. A listen address that is not loopback is logged as a warning ({@link #exposed}). At most
 * {@code maxConnections} connections are open at once; a connection beyond that is closed at once, before the NBD
 * greeting, counted ({@link #refusedCount}) and logged (at most one line a second). A connection whose handshake
 * has not reached transmission within {@link #HANDSHAKE_TIMEOUT_MS} is closed, so clients that connect and say
 * nothing cannot hold the connections for good (an idle client in transmission may: NBD has no keep-alive). A
 * failed {@code accept()}
 * (EMFILE, ...) pauses accepting for 10 ms doubling up to 1 s, reset by the next successful accept.
 */
public final class NbdServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NbdServer.class);

    /** Requests in flight per connection (preallocated slots). */
    public static final int DEFAULT_DEPTH = 64;
    /** Payload buffer per slot; longer requests get a buffer of their own. */
    public static final int DEFAULT_SLOT_BYTES = 128 * 1024;
    /** Connections open at once, by default (each holds {@code depth} slots and two threads). */
    public static final int DEFAULT_MAX_CONNECTIONS = 16;
    /** Longest handshake (greeting to transmission), in milliseconds; then the connection is closed. */
    public static final long HANDSHAKE_TIMEOUT_MS = 30_000;
    /** Largest {@code maxConnections} accepted. */
    public static final int MAX_CONNECTIONS_LIMIT = 4096;

    private final NbdExport export;
    private final ServerSocketChannel server;
    private final SocketAddress localAddress;
    private final Path unixPath;
    private final int depth;
    private final int slotBytes;
    private final Set<SocketChannel> connections = ConcurrentHashMap.newKeySet();
    private final AtomicInteger connectionCount = new AtomicInteger();
    private final int maxConnections;
    private final long handshakeTimeoutMs;
    private final AtomicInteger open = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong refused = new java.util.concurrent.atomic.AtomicLong();
    private long lastRefusalLogNs;
    private final Thread acceptor;
    private volatile boolean closed;

    /** Binds and starts accepting, at most {@link #DEFAULT_MAX_CONNECTIONS} connections open at once. */
    public NbdServer(NbdExport export, String listen, int depth, int slotBytes) throws IOException {
        this(export, listen, depth, slotBytes, DEFAULT_MAX_CONNECTIONS);
    }

    /**
     * Binds and starts accepting.
     *
     * @param maxConnections connections open at once, 1..{@value #MAX_CONNECTIONS_LIMIT}; more are refused
     * @throws IllegalArgumentException on a malformed listen address or bad depth/slotBytes/maxConnections
     * @throws IOException              if the address cannot be bound
     */
    public NbdServer(NbdExport export, String listen, int depth, int slotBytes, int maxConnections)
            throws IOException {
        this(export, listen, depth, slotBytes, maxConnections, HANDSHAKE_TIMEOUT_MS);
    }

    /** As above with a handshake timeout of {@code handshakeTimeoutMs} (tests). */
    NbdServer(NbdExport export, String listen, int depth, int slotBytes, int maxConnections,
              long handshakeTimeoutMs) throws IOException {
        this.handshakeTimeoutMs = handshakeTimeoutMs;
        if (maxConnections < 1 || maxConnections > MAX_CONNECTIONS_LIMIT) {
            throw new IllegalArgumentException("invalid maxConnections: maxConnections=" + maxConnections
                    + ", min=1, max=" + MAX_CONNECTIONS_LIMIT);
        }
        this.maxConnections = maxConnections;
        if (depth < 1 || depth > 1024) {
            throw new IllegalArgumentException("invalid depth: depth=" + depth + ", min=1, max=1024");
        }
        int lba = export.device().lbaSize();
        if (slotBytes < lba || slotBytes % lba != 0) {
            throw new IllegalArgumentException("invalid slotBytes: slotBytes=" + slotBytes + ", multiple of " + lba);
        }
        this.export = export;
        this.depth = depth;
        this.slotBytes = slotBytes;
        SocketAddress addr = parseListen(listen);
        if (addr instanceof UnixDomainSocketAddress u) {
            this.unixPath = u.getPath();
            Files.deleteIfExists(unixPath);
            this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        } else {
            this.unixPath = null;
            this.server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        }
        server.bind(addr, 128);
        this.localAddress = server.getLocalAddress();
        this.acceptor = Thread.ofPlatform().name("nbd-accept").daemon().start(this::acceptLoop);
        LOG.info("nbd: serving export '{}' ({} bytes, lba {}) on {}, at most {} connections", export.name(),
                export.device().capacityBytes(), lba, describe(localAddress), maxConnections);
        if (exposed(localAddress)) {
            LOG.warn("nbd: listening on {}, which is not a loopback address: NBD has no authentication, anyone who "
                    + "can reach it can read{} export '{}'", describe(localAddress),
                    export.readOnly() ? "" : " and write", export.name());
        }
    }

    /**
     * True when {@code address} is a TCP address other than loopback (a wildcard address included): reachable from
     * other hosts, with no authentication. A UNIX socket is not exposed (file permissions guard it).
     */
    public static boolean exposed(SocketAddress address) {
        return address instanceof InetSocketAddress i && (i.getAddress() == null || !i.getAddress().isLoopbackAddress());
    }

    /** Parses the listen syntax documented on the class. */
    public static SocketAddress parseListen(String listen) {
        if (listen.startsWith("unix:")) {
            String p = listen.substring(5);
            if (p.isEmpty()) {
                throw new IllegalArgumentException("invalid listen address: '" + listen + "': unix: needs a path");
            }
            return UnixDomainSocketAddress.of(p);
        }
        try {
            if (listen.matches("\\d+")) {
                return new InetSocketAddress("127.0.0.1", Integer.parseInt(listen));
            }
            int colon = listen.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("invalid listen address: '" + listen + "': want host:port or unix:path");
            }
            String host = listen.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port = Integer.parseInt(listen.substring(colon + 1));
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("invalid listen port: port=" + port + ", min=0, max=65535");
            }
            return new InetSocketAddress(host, port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid listen address: '" + listen + "': " + e.getMessage(), e);
        }
    }

    public SocketAddress localAddress() {
        return localAddress;
    }

    /** TCP port bound, or -1 for a UNIX socket. */
    public int port() {
        return localAddress instanceof InetSocketAddress i ? i.getPort() : -1;
    }

    /** An NBD URI for clients (libnbd, nbdcopy, nbdinfo, fio's nbd engine). */
    public String uri() {
        String name = export.name();
        if (localAddress instanceof InetSocketAddress i) {
            String host = i.getAddress().isAnyLocalAddress() ? "127.0.0.1" : i.getAddress().getHostAddress();
            if (host.contains(":")) {
                host = "[" + host + "]";
            }
            return "nbd://" + host + ":" + i.getPort() + "/" + name;
        }
        return "nbd+unix:///" + name + "?socket=" + unixPath;
    }

    /** Connections accepted so far. */
    public int connectionCount() {
        return connectionCount.get();
    }

    /** Connections open now (accepted, not yet closed), at most {@code maxConnections}. */
    public int openConnections() {
        return open.get();
    }

    /** Connections refused so far because {@code maxConnections} were open. */
    public long refusedCount() {
        return refused.get();
    }

    private void acceptLoop() {
        long backoffMs = 0;
        while (!closed) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                backoffMs = backoffMs == 0 ? 10 : Math.min(1000, 2 * backoffMs);
                LOG.warn("nbd: accept failed, accepting again in {} ms: {}", backoffMs, e.toString());
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    return;
                }
                continue;
            }
            backoffMs = 0;
            if (open.get() >= maxConnections) {
                refuse(c);
                continue;
            }
            open.incrementAndGet(); // only this thread adds; serve() takes off
            int id = connectionCount.incrementAndGet();
            connections.add(c);
            Thread.ofPlatform().name("nbd-rx-" + id).daemon().start(() -> serve(c, id));
        }
    }

    private void serve(SocketChannel c, int id) {
        String peer = "#" + id;
        try {
            if (c.getLocalAddress() instanceof InetSocketAddress) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                peer = "#" + id + "(" + c.getRemoteAddress() + ")";
            }
            LOG.debug("nbd {}: connected", peer);
            if (handshake(c, peer) == NbdHandshake.Outcome.TRANSMISSION) {
                new NbdConnection(c, export, peer, depth, slotBytes).run();
            }
        } catch (IOException e) {
            LOG.debug("nbd {}: {}", peer, e.toString());
        } catch (RuntimeException e) {
            LOG.warn("nbd {}: failed", peer, e);
        } finally {
            connections.remove(c);
            open.decrementAndGet();
            try {
                c.close();
            } catch (IOException ignored) {
                // already closing
            }
        }
    }

    /** Runs the handshake; a watchdog closes {@code c} if it takes longer than {@code handshakeTimeoutMs}. */
    private NbdHandshake.Outcome handshake(SocketChannel c, String peer) throws IOException {
        java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().name("nbd-handshake-watchdog").start(() -> {
            try {
                Thread.sleep(handshakeTimeoutMs);
            } catch (InterruptedException e) {
                return; // the handshake ended in time
            }
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            LOG.info("nbd {}: no handshake within {} ms: closing", peer, handshakeTimeoutMs);
            try {
                c.close();
            } catch (IOException ignored) {
                // closing
            }
        });
        try {
            NbdHandshake.Outcome o = new NbdHandshake(c, export, peer).run();
            return settled.compareAndSet(false, true) ? o : NbdHandshake.Outcome.CLOSED;
        } finally {
            settled.set(true);
            watchdog.interrupt();
        }
    }

    private void refuse(SocketChannel c) {
        long n = refused.incrementAndGet();
        String peer = "";
        try {
            peer = String.valueOf(c.getRemoteAddress());
            c.close();
        } catch (IOException ignored) {
            // closing
        }
        long now = System.nanoTime();
        if (n == 1 || now - lastRefusalLogNs >= 1_000_000_000L) {
            lastRefusalLogNs = now;
            LOG.warn("nbd: refused connection from {}: {} connections open, max={} (--max-connections); {} refused "
                    + "so far", peer, open.get(), maxConnections, n);
        }
    }

    private static String describe(SocketAddress a) {
        return a instanceof UnixDomainSocketAddress u ? "unix:" + u.getPath() : String.valueOf(a);
    }

    /** Stops accepting and closes every connection (requests in flight finish first). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (SocketChannel c : connections) {
            try {
                c.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (unixPath != null) {
            try {
                Files.deleteIfExists(unixPath);
            } catch (IOException ignored) {
                // best effort
            }
        }
    }
}
