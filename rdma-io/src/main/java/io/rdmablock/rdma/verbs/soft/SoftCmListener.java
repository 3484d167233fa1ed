package io.rdmablock.rdma.verbs.soft;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening soft id: a thread accepts TCP connections and reads each one's connect request (within
 * {@link #REQUEST_TIMEOUT_NS}); complete requests wait in a queue of {@code backlog} entries for
 * {@link #getRequest}. Requests beyond the backlog are rejected (no private data).
 *
 * <p>A failed {@code accept()} (EMFILE, ENFILE, ENOBUFS, ...) never stops the listener: it is counted
 * ({@link #acceptErrors}, and process-wide {@link SoftVerbsProvider#acceptErrorsTotal}), logged, and accepting pauses
 * for a back-off of {@value #ACCEPT_BACKOFF_MIN_MS} ms doubling up to {@value #ACCEPT_BACKOFF_MAX_MS} ms, reset by the
 * next successful accept; meanwhile requests already being read keep being read and timed out. The connection the
 * kernel could not hand over stays in its backlog and is taken once accepting resumes.
 *
 * <p>At most {@value #MAX_PENDING_CONNECTIONS} accepted connections wait for their request at once; a new one beyond
 * that closes the one waiting longest ({@link #pendingEvictions}), so silent connections cost at most that many
 * descriptors and cannot keep a prompt peer out for their whole timeout.
 */
final class SoftCmListener implements CmListener, Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SoftCmListener.class);
    static final long REQUEST_TIMEOUT_NS = 5_000_000_000L;
    /** First pause of accepting after a failed {@code accept()}, in milliseconds. */
    static final long ACCEPT_BACKOFF_MIN_MS = 10;
    /** Longest pause of accepting after failed {@code accept()}s in a row, in milliseconds. */
    static final long ACCEPT_BACKOFF_MAX_MS = 1000;

    /** Accepted connections whose connect request is not complete yet, at most. */
    static final int MAX_PENDING_CONNECTIONS = 256;

    /** How the listener takes the next connection: {@code ServerSocketChannel::accept}; tests inject failures. */
    @FunctionalInterface
    interface Acceptor {
        /** The next connection, or null when none is waiting; throws what {@code accept()} throws. */
        SocketChannel accept(ServerSocketChannel server) throws IOException;
    }
    private static final Object CLOSED = new Object();

    private final SoftVerbsProvider provider;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final InetSocketAddress local;
    private final int backlog;
    private final LinkedBlockingQueue<Object> requests = new LinkedBlockingQueue<>();
    private final Thread thread;
    private final Acceptor acceptor;
    private final java.util.concurrent.atomic.LongAdder acceptErrors = new java.util.concurrent.atomic.LongAdder();
    private SelectionKey acceptKey;
    private long backoffMs;
    private long acceptPausedUntilNs;
    private final int maxPending;
    /** Keys of connections reading their request, oldest (earliest deadline) first. Listener thread only. */
    private final java.util.LinkedHashSet<SelectionKey> pending = new java.util.LinkedHashSet<>();
    private final java.util.concurrent.atomic.AtomicLong pendingEvictions = new java.util.concurrent.atomic.AtomicLong();
    private long lastEvictionLogNs;
    private volatile boolean closed;

    private static final class Pending {
        final ByteBuffer buf = ByteBuffer.allocate(CmWire.MSG_LENGTH);
        final long deadlineNs = System.nanoTime() + REQUEST_TIMEOUT_NS;
    }

    SoftCmListener(SoftVerbsProvider provider, InetSocketAddress bindAddress, int backlog) throws IOException {
        this(provider, bindAddress, backlog, ServerSocketChannel::accept, MAX_PENDING_CONNECTIONS);
    }

    /** With {@code acceptor} instead of {@code accept()} and at most {@code maxPending} requests being read (tests). */
    SoftCmListener(SoftVerbsProvider provider, InetSocketAddress bindAddress, int backlog, Acceptor acceptor,
                   int maxPending) throws IOException {
        this.maxPending = maxPending;
        this.provider = provider;
        this.backlog = backlog;
        this.acceptor = acceptor;
        server = ServerSocketChannel.open();
        try {
            server.bind(bindAddress, Math.max(backlog, 16));
            server.configureBlocking(false);
            selector = Selector.open();
            acceptKey = server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            throw e;
        }
        local = (InetSocketAddress) server.getLocalAddress();
        thread = new Thread(this, "soft-cm-listen-" + local.getPort());
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    /** Failed {@code accept()} calls of this listener so far (each one paused accepting, see the class comment). */
    long acceptErrors() {
        return acceptErrors.sum();
    }

    @Override
    public CmId getRequest(long timeoutNs) {
        if (closed) {
            return null;
        }
        try {
            Object o = requests.poll(Math.max(0, timeoutNs), TimeUnit.NANOSECONDS);
            if (o == CLOSED) {
                requests.offer(CLOSED);
                return null;
            }
            return o == null ? null : provider.track((SoftCmId) o);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public void run() {
        try {
            while (!closed) {
                long pausedMs = acceptPausedUntilNs == 0 ? 100
                        : Math.max(1, Math.min(100, (acceptPausedUntilNs - System.nanoTime() + 999_999) / 1_000_000));
                selector.select(pausedMs);
                if (acceptPausedUntilNs != 0 && System.nanoTime() - acceptPausedUntilNs >= 0) {
                    acceptPausedUntilNs = 0;
                    acceptKey.interestOps(SelectionKey.OP_ACCEPT);
                }
                for (SelectionKey k : selector.selectedKeys()) {
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k == acceptKey) {
                        if (k.isAcceptable()) {
                            acceptAll();
                        }
                    } else if (k.isReadable()) {
                        readRequest(k);
                    }
                }
                selector.selectedKeys().clear();
                long now = System.nanoTime();
                for (var it = pending.iterator(); it.hasNext(); ) {
                    SelectionKey k = it.next();
                    if (now - ((Pending) k.attachment()).deadlineNs <= 0) {
                        break; // the rest were accepted later
                    }
                    it.remove();
                    drop(k);
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.warn("soft listener on {} failed", local, e);
            }
        } finally {
            for (SelectionKey k : pending) {
                drop(k);
            }
            pending.clear();
            try {
                selector.close();
                server.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    /** Accepts every waiting connection; a failed accept pauses accepting (back-off, class comment). */
    private void acceptAll() throws IOException {
        while (acceptPausedUntilNs == 0) {
            SocketChannel c;
            try {
                c = acceptor.accept(server);
            } catch (java.nio.channels.ClosedChannelException e) {
                throw e; // the listener is being closed
            } catch (IOException e) {
                acceptFailed(e);
                return;
            }
            if (c == null) {
                return;
            }
            backoffMs = 0;
            if (pending.size() >= maxPending) {
                evictOldest();
            }
            try {
                CmWire.configure(c);
                pending.add(c.register(selector, SelectionKey.OP_READ, new Pending()));
            } catch (IOException e) {
                LOG.debug("soft listener on {}: dropping a connection that cannot be set up: {}", local, e.toString());
                c.close();
            }
        }
    }

    private void evictOldest() {
        var it = pending.iterator();
        SelectionKey k = it.next();
        it.remove();
        drop(k);
        long n = pendingEvictions.incrementAndGet();
        long now = System.nanoTime();
        if (n == 1 || now - lastEvictionLogNs >= 1_000_000_000L) {
            lastEvictionLogNs = now;
            LOG.warn("soft listener on {}: {} connections without a complete connect request, max={}: closed the "
                    + "oldest ({} so far)", local, maxPending, maxPending, n);
        }
    }

    /** Connections closed so far because {@code maxPending} others were still reading their request. */
    long pendingEvictions() {
        return pendingEvictions.get();
    }

    private void acceptFailed(IOException e) {
        acceptErrors.increment();
        SoftVerbsProvider.ACCEPT_ERRORS.increment();
        backoffMs = backoffMs == 0 ? ACCEPT_BACKOFF_MIN_MS : Math.min(ACCEPT_BACKOFF_MAX_MS, 2 * backoffMs);
        acceptPausedUntilNs = System.nanoTime() + backoffMs * 1_000_000L;
        acceptKey.interestOps(0);
        LOG.warn("soft listener on {}: accept failed ({} so far), accepting again in {} ms: {}", local,
                acceptErrors.sum(), backoffMs, e.toString());
    }

    private void readRequest(SelectionKey k) {
        SocketChannel c = (SocketChannel) k.channel();
        Pending p = (Pending) k.attachment();
        try {
            if (c.read(p.buf) < 0) {
                pending.remove(k);
                drop(k);
                return;
            }
            if (p.buf.hasRemaining()) {
                return;
            }
            pending.remove(k);
            CmWire.Msg m = CmWire.decode(p.buf);
            k.cancel();
            if (m.type() != CmWire.REQ) {
                c.close();
                return;
            }
            SoftCmId id = new SoftCmId(provider, c, m);
            if (requests.size() >= backlog || closed) {
                id.reject(null);
                return;
            }
            requests.offer(id);
        } catch (IOException | RuntimeException e) {
            LOG.debug("soft listener on {}: dropping a malformed connect request: {}", local, e.toString());
            pending.remove(k);
            drop(k);
        }
    }

    private static void drop(SelectionKey k) {
        k.cancel();
        try {
            k.channel().close();
        } catch (IOException ignored) {
            // dropping
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Object o;
        while ((o = requests.poll()) != null) {
            if (o instanceof SoftCmId id) {
                id.close();
            }
        }
        requests.offer(CLOSED);
        provider.untrack(this);
    }
}
