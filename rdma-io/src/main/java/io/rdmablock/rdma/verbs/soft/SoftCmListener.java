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
 */
final class SoftCmListener implements CmListener, Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(SoftCmListener.class);
    static final long REQUEST_TIMEOUT_NS = 5_000_000_000L;
    private static final Object CLOSED = new Object();

    private final SoftVerbsProvider provider;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final InetSocketAddress local;
    private final int backlog;
    private final LinkedBlockingQueue<Object> requests = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    private static final class Pending {
        final ByteBuffer buf = ByteBuffer.allocate(CmWire.MSG_LENGTH);
        final long deadlineNs = System.nanoTime() + REQUEST_TIMEOUT_NS;
    }

    SoftCmListener(SoftVerbsProvider provider, InetSocketAddress bindAddress, int backlog) throws IOException {
        this.provider = provider;
        this.backlog = backlog;
        server = ServerSocketChannel.open();
        try {
            server.bind(bindAddress, Math.max(backlog, 16));
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
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
                selector.select(100);
                for (SelectionKey k : selector.selectedKeys()) {
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        SocketChannel c;
                        while ((c = server.accept()) != null) {
                            CmWire.configure(c);
                            c.register(selector, SelectionKey.OP_READ, new Pending());
                        }
                    } else if (k.isReadable()) {
                        readRequest(k);
                    }
                }
                selector.selectedKeys().clear();
                long now = System.nanoTime();
                for (SelectionKey k : selector.keys()) {
                    if (k.attachment() instanceof Pending p && now - p.deadlineNs > 0) {
                        drop(k);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.warn("soft listener on {} failed", local, e);
            }
        } finally {
            for (SelectionKey k : selector.keys()) {
                if (k.attachment() instanceof Pending) {
                    drop(k);
                }
            }
            try {
                selector.close();
                server.close();
            } catch (IOException ignored) {
                // closing
            }
        }
    }

    private void readRequest(SelectionKey k) {
        SocketChannel c = (SocketChannel) k.channel();
        Pending p = (Pending) k.attachment();
        try {
            if (c.read(p.buf) < 0) {
                drop(k);
                return;
            }
            if (p.buf.hasRemaining()) {
                return;
            }
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
        } catch (IOException e) {
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
