package io.rdmablock.node.store;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The backend of one store: which one, why, and (thread pool) the shared workers. */
final class IoEngine implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(IoEngine.class);

    private final IoBackend kind;
    private final int poolThreads;
    private ExecutorService pool;

    private IoEngine(IoBackend kind, int poolThreads) {
        this.kind = kind;
        this.poolThreads = poolThreads;
    }

    /** Chooses the backend per {@link StoreOptions#backend()} and logs one line saying which and why. */
    static IoEngine select(StoreOptions options) {
        return select(options, options.backend() == IoBackend.THREAD_POOL || options.backend() == IoBackend.NULL
                ? null : IoUring.probe());
    }

    /** As {@link #select(StoreOptions)} with the io_uring probe's answer given ({@code null} = usable). */
    static IoEngine select(StoreOptions options, String why) {
        IoBackend requested = options.backend();
        if (requested == IoBackend.NULL) {
            LOG.warn("store I/O backend: NULL (requested) - writes are DISCARDED and reads return zeros; benchmark "
                    + "only, no durability");
            return new IoEngine(IoBackend.NULL, options.poolThreads());
        }
        if (requested == IoBackend.THREAD_POOL) {
            LOG.info("store I/O backend: threadpool (requested), threads={}", options.poolThreads());
            return new IoEngine(IoBackend.THREAD_POOL, options.poolThreads());
        }
        if (why == null) {
            LOG.info("store I/O backend: io_uring ({})", requested == null ? "auto: io_uring_setup and opcode probe ok"
                    : "requested");
            return new IoEngine(IoBackend.IO_URING, options.poolThreads());
        }
        if (requested == IoBackend.IO_URING) {
            throw new StoreException("io_uring backend requested but unavailable: " + why, 0);
        }
        LOG.info("store I/O backend: threadpool (auto: {}), threads={}", why, options.poolThreads());
        return new IoEngine(IoBackend.THREAD_POOL, options.poolThreads());
    }

    IoBackend kind() {
        return kind;
    }

    synchronized BlockQueue newQueue(VolumeStore store, int capacity) {
        if (kind == IoBackend.IO_URING) {
            return new UringBlockQueue(store, capacity);
        }
        if (kind == IoBackend.NULL) {
            return new NullBlockQueue(capacity);
        }
        if (pool == null) {
            AtomicInteger n = new AtomicInteger();
            pool = Executors.newFixedThreadPool(poolThreads, r -> {
                Thread t = new Thread(r, "store-io-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
        return new PoolBlockQueue(store, capacity, pool);
    }

    @Override
    public synchronized void close() {
        if (pool != null) {
            pool.shutdown();
            pool = null;
        }
    }
}
