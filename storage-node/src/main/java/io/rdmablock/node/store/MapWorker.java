package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread of a {@link VolumeStore} that changes cluster maps on disk, so no poller waits on RocksDB or on a
 * copy: it copies the kept part of a redirected cluster ({@code copy_file_range(2)}, inside the kernel), writes live
 * map changes in group commits, syncs them for FLUSH and FUA, and punches freed clusters before they are reused.
 *
 * <p>Ordering (docs/snapshots.md, "Crash safety"): a durable map entry never points at data that is not durable. A
 * redirect's copy and write are {@code RWF_DSYNC}, so its entry is written unsynced (it survives {@code kill -9} at
 * once, a power loss after the next sync); a first write into an unallocated cluster is committed unsynced too
 * (after a power loss without FLUSH its cluster may read zero, which is what the block held before); a FUA write's
 * entry is synced before the write completes, and a FLUSH syncs every entry written before it. A finished task is
 * handed back to its queue ({@link MappedBlockQueue#workerDone}) with {@code 0} or {@code -errno}.
 */
final class MapWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MapWorker.class);
    private static final long IDLE_PARK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Freed clusters wait at most about this long for a synced commit. */
    private static final long FREE_SYNC_NS = TimeUnit.SECONDS.toNanos(1);

    private static final int COPY = 1;
    private static final int COMMIT = 2;
    private static final int SYNC = 3;
    private static final int BARRIER = 4;

    private record Task(int kind, StoreVolume v, MappedBlockQueue q, int piece, long a, long b, long c, long d,
                        boolean sync) {
    }

    private final MetadataDb meta;
    private final Supplier<Collection<StoreVolume>> volumes;
    private final ConcurrentLinkedQueue<Task> tasks = new ConcurrentLinkedQueue<>();
    /** Callers waiting in {@link #barrier}: released after the round that ran their task. */
    private final java.util.concurrent.ConcurrentHashMap<java.util.concurrent.CountDownLatch, Boolean> barriers =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closing;
    private long lastSyncStartNs = System.nanoTime();
    /** Unsynced map batches written, and how many of them the last sync covered (the worker thread writes both). */
    private volatile long writtenSeq;
    private volatile long syncedSeq;
    /**
     * Copies run on {@link #COPIERS} threads of their own: each waits for its device write ({@code RWF_DSYNC}), so
     * copies of different clusters overlap instead of queueing behind each other and behind commits.
     */
    private final java.util.concurrent.ExecutorService copiers;
    /** Per copier thread: a page-aligned copy buffer (for O_DIRECT) and its iovec. */
    private static final ThreadLocal<MemorySegment[]> COPY_BUF = ThreadLocal.withInitial(() -> new MemorySegment[] {
        Arena.global().allocate(1 << 20, 4096), Arena.global().allocate(16, 8)});
    private final java.util.concurrent.atomic.AtomicLong copiedBytes = new java.util.concurrent.atomic.AtomicLong();
    /** Copier threads per store. */
    static final int COPIERS = 8;

    MapWorker(MetadataDb meta, Supplier<Collection<StoreVolume>> volumes, String name) {
        this.meta = meta;
        this.volumes = volumes;
        this.thread = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
        this.copiers = java.util.concurrent.Executors.newFixedThreadPool(COPIERS,
                Thread.ofPlatform().daemon().name(name + "-copy-", 0).factory());
        thread.start();
    }

    /**
     * Copies {@code [lo, lo + loLen)} and {@code [hi, hi + hiLen)} (offsets inside a cluster) from physical byte
     * {@code src} to physical byte {@code dst} of {@code v}'s data file.
     */
    void copy(StoreVolume v, MappedBlockQueue q, int piece, long src, long dst, long loLen, long hi, long hiLen) {
        Task t = new Task(COPY, v, q, piece, src, dst, loLen, hi | (hiLen << 32), false);
        copiers.execute(() -> q.workerDone(piece, copy(t)));
    }

    /** Records logical cluster {@code c} of {@code v} as physical {@code phys} ({@code -1} = unallocated). */
    void commit(StoreVolume v, MappedBlockQueue q, int piece, long c, long phys, boolean sync) {
        post(new Task(COMMIT, v, q, piece, c, phys, 0, 0, sync));
    }

    /** Makes every map change committed so far durable (after the caller's data FLUSH). */
    void sync(MappedBlockQueue q, int piece) {
        post(new Task(SYNC, null, q, piece, 0, 0, 0, 0, true));
    }

    /**
     * Waits (bounded, 30 s) until every task posted before this call was run: a caller that then deletes a
     * volume's map keys knows no batch of it is still being written.
     */
    void barrier() {
        if (Thread.currentThread() == thread) {
            return;
        }
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        barriers.put(done, Boolean.TRUE);
        post(new Task(BARRIER, null, null, 0, 0, 0, 0, 0, false));
        try {
            if (!done.await(30, TimeUnit.SECONDS)) {
                LOG.warn("cluster-map worker barrier not passed within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            barriers.remove(done);
        }
    }

    private void post(Task t) {
        tasks.offer(t);
        LockSupport.unpark(thread);
    }

    private void run() {
        while (!closing) {
            try {
                if (!round()) {
                    reclaim();
                    LockSupport.parkNanos(this, IDLE_PARK_NS);
                }
            } catch (RuntimeException e) {
                LOG.error("cluster-map worker round failed: {}", e.toString(), e);
                LockSupport.parkNanos(this, IDLE_PARK_NS);
            }
        }
        round();
    }

    /** Runs every task posted so far; true when there was one. */
    private boolean round() {
        List<Task> commits = new ArrayList<>();
        boolean any = false;
        Task t;
        List<java.util.concurrent.CountDownLatch> passed = new ArrayList<>();
        while ((t = tasks.poll()) != null) {
            any = true;
            if (t.kind() == BARRIER) {
                passed.addAll(barriers.keySet()); // registered before their task was posted
            } else {
                commits.add(t);
            }
        }
        if (!commits.isEmpty()) {
            commit(commits);
        }
        passed.forEach(java.util.concurrent.CountDownLatch::countDown);
        return any;
    }

    /**
     * Copies the kept ranges of a redirected cluster, durably ({@code RWF_DSYNC}): the map entry that will point at
     * the new cluster is then written without waiting for a sync, yet can never be durable before the data it
     * points to. Through the O_DIRECT descriptor when the ranges meet its alignment, else the buffered one.
     */
    private int copy(Task t) {
        if (closing) {
            return -Syscalls.ENXIO;
        }
        StoreVolume v = t.v();
        long loLen = t.c();
        long hi = t.d() & 0xffffffffL;
        long hiLen = t.d() >>> 32;
        int r = loLen == 0 ? 0 : copyDurably(v, t.a(), t.b(), loLen);
        if (r == 0 && hiLen > 0) {
            r = copyDurably(v, t.a() + hi, t.b() + hi, hiLen);
        }
        return r;
    }

    private int copyDurably(StoreVolume v, long src, long dst, long len) {
        boolean direct = ((src | dst | len) & v.dioOffsetMask) == 0;
        int fd = direct ? v.directFd : v.bufferedFd;
        MemorySegment err = Syscalls.threadErrState();
        MemorySegment[] bufs = COPY_BUF.get();
        MemorySegment copyBuf = bufs[0];
        MemorySegment iov = bufs[1];
        for (long done = 0; done < len; ) {
            long n = Math.min(len - done, copyBuf.byteSize());
            long r = Syscalls.pread(err, fd, copyBuf.address(), n, src + done);
            if (r < 0) {
                int e = Syscalls.errno(err);
                if (e == Syscalls.EINTR) {
                    continue;
                }
                return -e;
            }
            if (r == 0) { // past the end of the file: the rest of the source reads zero, as the new hole does
                return 0;
            }
            iov.set(ValueLayout.JAVA_LONG, 0, copyBuf.address());
            iov.set(ValueLayout.JAVA_LONG, 8, r);
            long w = Syscalls.pwritev2(err, fd, iov.address(), dst + done, Syscalls.RWF_DSYNC);
            if (w < 0) {
                int e = Syscalls.errno(err);
                if (e == Syscalls.EINTR) {
                    continue;
                }
                return -e;
            }
            if (w != r) {
                return -Syscalls.EIO;
            }
            done += r;
            copiedBytes.addAndGet(r);
        }
        return 0;
    }

    /**
     * One group commit of every map change posted so far: one RocksDB batch, synced when a FUA write or a FLUSH
     * asked for it. The data behind every change is already durable where it must be (a redirect's copy and write
     * are {@code RWF_DSYNC}), so the batch needs no {@code fdatasync} first.
     */
    private void commit(List<Task> commits) {
        boolean sync = false;
        for (Task t : commits) {
            sync |= t.sync();
        }
        long start = System.nanoTime();
        int result = 0;
        try (WriteBatch b = new WriteBatch()) {
            for (Task t : commits) {
                if (t.kind() == COMMIT && !t.v().isDeleted()) { // a deleted volume's keys are gone for good
                    MetadataDb.putLive(b, t.v().id(), t.a(), t.b());
                }
            }
            long seq = writtenSeq;
            if (b.count() > 0) {
                meta.write(b, sync);
                if (!sync) {
                    writtenSeq = ++seq;
                }
            } else if (sync) {
                meta.syncWal();
            }
            if (sync) {
                lastSyncStartNs = start;
                syncedSeq = seq;
            }
        } catch (RocksDBException | RuntimeException e) {
            LOG.warn("cluster-map commit failed: tasks={}: {}", commits.size(), e.toString());
            result = -Syscalls.EIO;
        }
        for (Task t : commits) {
            t.q().workerDone(t.piece(), result);
        }
    }

    /**
     * True when a map entry was written without a sync since the last sync: a FUA write in place must then have the
     * worker {@link #sync} before it completes (its cluster's entry may be one of them). Any thread.
     */
    boolean mapUnsynced() {
        return writtenSeq != syncedSeq;
    }

    /** Bytes copied for redirects since the store opened (the cost of first writes after a snapshot). */
    long copiedBytes() {
        return copiedBytes.get();
    }

    /** Punches freed clusters whose freeing is durable, then makes them reusable. */
    private void reclaim() {
        boolean waiting = false;
        for (StoreVolume v : volumes.get()) {
            ClusterMap m = v.map();
            if (m == null || m.pendingFreeCount() == 0) {
                continue;
            }
            waiting = true;
            long[] phys = m.takeReclaimable(lastSyncStartNs);
            if (phys.length > 0) {
                v.punchClusters(phys);
                // the punch durable before the cluster is reused: a new entry made durable by a later sync must
                // not point at the old data again after a power loss
                Syscalls.fdatasyncRaw(Syscalls.threadErrState(), v.bufferedFd);
                m.addFree(phys);
            }
        }
        if (waiting && System.nanoTime() - lastSyncStartNs > FREE_SYNC_NS) {
            long start = System.nanoTime();
            long seq = writtenSeq;
            meta.syncWal();
            lastSyncStartNs = start;
            syncedSeq = seq;
        }
    }

    /** Runs what was posted, then stops the thread (before the database closes). */
    @Override
    public void close() {
        closing = true;
        copiers.shutdown();
        try {
            copiers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
