package io.rdmablock.rdma.verbs.ffm;

import static io.rdmablock.rdma.verbs.ffm.NativeStructs.RDMA_CM_ID;
import static io.rdmablock.rdma.verbs.ffm.NativeStructs.off;

import io.rdmablock.rdma.verbs.CmEventType;
import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.CmListener;
import io.rdmablock.rdma.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening {@code rdma_cm_id} ({@code rdma_bind_addr(3)}, {@code rdma_listen(3)}) on its own event channel. Each
 * CONNECT_REQUEST's new id is moved to a channel of its own ({@code rdma_migrate_id(3)}) before it is returned.
 */
final class FfmCmListener implements CmListener {
    private static final Logger LOG = LoggerFactory.getLogger(FfmCmListener.class);
    private static final long ID_SRC = off(RDMA_CM_ID, "route", "addr", "src_storage");

    private final FfmVerbsProvider provider;
    private final CmEventChannel channel;
    private final MemorySegment id;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean closed;

    private FfmCmListener(FfmVerbsProvider provider, CmEventChannel channel, MemorySegment id) {
        this.provider = provider;
        this.channel = channel;
        this.id = id.reinterpret(RDMA_CM_ID.byteSize());
    }

    static FfmCmListener create(FfmVerbsProvider provider, InetSocketAddress bindAddress, int backlog) {
        CmEventChannel ch = CmEventChannel.create();
        MemorySegment id = MemorySegment.NULL;
        try (Arena a = Arena.ofConfined()) {
            id = FfmCmId.createIdOn(ch);
            int rc = (int) Native.RDMA_BIND_ADDR.invokeExact(Native.errnoSegment(), id, SockAddr.of(bindAddress, a));
            if (rc != 0) {
                throw Native.fail("rdma_bind_addr", Native.errno(), "address=" + bindAddress);
            }
            rc = (int) Native.RDMA_LISTEN.invokeExact(Native.errnoSegment(), id, backlog);
            if (rc != 0) {
                throw Native.fail("rdma_listen", Native.errno(), "address=" + bindAddress + ", backlog=" + backlog);
            }
            return new FfmCmListener(provider, ch, id);
        } catch (Throwable t) {
            try {
                if (id.address() != 0) {
                    int ignored = (int) Native.RDMA_DESTROY_ID.invokeExact(Native.errnoSegment(), id);
                }
            } catch (Throwable s) {
                t.addSuppressed(s);
            }
            ch.close();
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new VerbsException("rdma_listen failed: " + t, 0, t);
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        return SockAddr.read(id.asSlice(ID_SRC, 128));
    }

    @Override
    public CmId getRequest(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        lock.lock();
        try {
            while (!closed) {
                long remaining = deadline - System.nanoTime();
                CmEventChannel.Event e = channel.next(Math.max(0, remaining)); // timeout 0: one non-blocking read
                if (e == null && remaining <= 0) {
                    return null;
                }
                if (e == null || closed) {
                    continue;
                }
                if (e.type() != CmEventType.CONNECT_REQUEST) {
                    LOG.debug("listener {}: ignoring {} (status {})", localAddress(), e.type(), e.status());
                    continue;
                }
                return migrate(e);
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    private CmId migrate(CmEventChannel.Event e) {
        CmEventChannel own;
        try {
            own = CmEventChannel.create();
        } catch (RuntimeException ex) {
            destroyQuietly(e.id());
            throw ex;
        }
        try {
            int rc = (int) Native.RDMA_MIGRATE_ID.invokeExact(Native.errnoSegment(), e.id(), own.channel);
            if (rc != 0) {
                throw Native.fail("rdma_migrate_id", Native.errno(), "listener=" + localAddress());
            }
        } catch (Throwable t) {
            destroyQuietly(e.id());
            own.close();
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new VerbsException("rdma_migrate_id failed: " + t, 0, t);
        }
        FfmCmId passive = FfmCmId.passive(provider, own, e.id(), e);
        provider.track(passive);
        return passive;
    }

    private static void destroyQuietly(MemorySegment id) {
        try {
            int ignored = (int) Native.RDMA_DESTROY_ID.invokeExact(Native.errnoSegment(), id);
        } catch (Throwable ignored) {
            // already failing
        }
    }

    /** Wakes a blocked {@link #getRequest}, then {@code rdma_destroy_id} and the channel; idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        channel.wakeup();
        lock.lock();
        try {
            int rc = (int) Native.RDMA_DESTROY_ID.invokeExact(Native.errnoSegment(), id);
            if (rc != 0) {
                throw Native.fail("rdma_destroy_id", Native.errno(), "listener");
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new VerbsException("rdma_destroy_id failed: " + t, 0, t);
        } finally {
            channel.close();
            lock.unlock();
            provider.untrack(this);
        }
    }
}
