package io.rdmablock.node.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
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
 * <p>Ordering (docs/snapshots.md, "Crash safety"): a change that redirects a cluster, or that a FUA write or a FLUSH
 * needs durable, is committed with {@code fdatasync} of the volume's data file first and a synced RocksDB write
 * after, so a durable map entry never points at data that is not durable. A first write into an unallocated
 * cluster is committed unsynced (it survives {@code kill -9}; after a power loss without FLUSH its cluster may read
 * zero, which is what the block held before). A finished task is handed back to its queue
 * ({@link MappedBlockQueue#workerDone}) with {@code 0} or {@code -errno}.
 */
final class MapWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MapWorker.class);
    private static final long IDLE_PARK_NS = TimeUnit.MILLISECONDS.toNanos(50);
    /** Freed clusters wait at most about this long for a synced commit. */
    private static final long FREE_SYNC_NS = TimeUnit.SECONDS.toNanos(1);

    private static final int COPY = 1;
    private static final int COMMIT = 2;
    private static final int SYNC = 3;

    private record Task(int kind, StoreVolume v, MappedBlockQueue q, int piece, long a, long b, long c, long d,
                        boolean sync) {
    }

    private final MetadataDb meta;
    private final Supplier<Collection<StoreVolume>> volumes;
    private final ConcurrentLinkedQueue<Task> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closing;
    private long lastSyncStartNs = System.nanoTime();

    MapWorker(MetadataDb meta, Supplier<Collection<StoreVolume>> volumes, String name) {
        this.meta = meta;
        this.volumes = volumes;
        this.thread = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
        thread.start();
    }

    /**
     * Copies {@code [lo, lo + loLen)} and {@code [hi, hi + hiLen)} (offsets inside a cluster) from physical byte
     * {@code src} to physical byte {@code dst} of {@code v}'s data file.
     */
    void copy(StoreVolume v, MappedBlockQueue q, int piece, long src, long dst, long loLen, long hi, long hiLen) {
        post(new Task(COPY, v, q, piece, src, dst, loLen, hi | (hiLen << 32), false));
    }

    /** Records logical cluster {@code c} of {@code v} as physical {@code phys} ({@code -1} = unallocated). */
    void commit(StoreVolume v, MappedBlockQueue q, int piece, long c, long phys, boolean sync) {
        post(new Task(COMMIT, v, q, piece, c, phys, 0, 0, sync));
    }

    /** Makes every map change committed so far durable (after the caller's data FLUSH). */
    void sync(MappedBlockQueue q, int piece) {
        post(new Task(SYNC, null, q, piece, 0, 0, 0, 0, true));
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
        while ((t = tasks.poll()) != null) {
            any = true;
            if (t.kind() == COPY) {
                t.q().workerDone(t.piece(), copy(t));
            } else {
                commits.add(t);
            }
        }
        if (!commits.isEmpty()) {
            commit(commits);
        }
        return any;
    }

    private static int copy(Task t) {
        int fd = t.v().bufferedFd;
        long loLen = t.c();
        long hi = t.d() & 0xffffffffL;
        long hiLen = t.d() >>> 32;
        int r = loLen == 0 ? 0 : Syscalls.copyRange(fd, t.a(), t.b(), loLen);
        if (r == 0 && hiLen > 0) {
            r = Syscalls.copyRange(fd, t.a() + hi, t.b() + hi, hiLen);
        }
        return r;
    }

    /** One group commit: data of synced volumes first, then the map batch (synced when any task needs it). */
    private void commit(List<Task> commits) {
        boolean sync = false;
        IdentityHashMap<StoreVolume, Boolean> dataSync = new IdentityHashMap<>();
        for (Task t : commits) {
            sync |= t.sync();
            if (t.kind() == COMMIT && t.sync()) {
                dataSync.put(t.v(), Boolean.TRUE);
            }
        }
        long start = System.nanoTime();
        int result = 0;
        for (StoreVolume v : dataSync.keySet()) {
            int r = Syscalls.fdatasyncRaw(Syscalls.threadErrState(), v.bufferedFd);
            if (r < 0) {
                result = -Syscalls.errno(Syscalls.threadErrState());
                LOG.warn("fdatasync before a map commit failed: volume={}, errno={}", v.id(), -result);
            }
        }
        if (result == 0) {
            try (WriteBatch b = new WriteBatch()) {
                for (Task t : commits) {
                    if (t.kind() == COMMIT) {
                        MetadataDb.putLive(b, t.v().id(), t.a(), t.b());
                    }
                }
                if (b.count() > 0) {
                    meta.write(b, sync);
                } else if (sync) {
                    meta.syncWal();
                }
                if (sync) {
                    lastSyncStartNs = start;
                }
            } catch (RocksDBException | RuntimeException e) {
                LOG.warn("cluster-map commit failed: tasks={}: {}", commits.size(), e.toString());
                result = -Syscalls.EIO;
            }
        }
        for (Task t : commits) {
            t.q().workerDone(t.piece(), result);
        }
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
                m.addFree(phys);
            }
        }
        if (waiting && System.nanoTime() - lastSyncStartNs > FREE_SYNC_NS) {
            long start = System.nanoTime();
            meta.syncWal();
            lastSyncStartNs = start;
        }
    }

    /** Runs what was posted, then stops the thread (before the database closes). */
    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
