package io.rdmablock.node.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volume store of one storage node, opened on a data directory. Thread-safe: management calls
 * ({@link #create}, {@link #delete}, {@link #resize}, {@link #setAllowedHosts}) are serialized; {@link #get} and
 * {@link #list} never block on them; I/O goes through {@link BlockQueue}s from {@link #newQueue}.
 *
 * <p>On disk: {@code <dataDir>/meta} (RocksDB: volume table, cluster maps, snapshots) and
 * {@code <dataDir>/volumes/<id>.vol} (one sparse data file per volume: a heap of clusters for a mapped volume, exactly
 * {@code sizeBytes} long for a flat one; package documentation). Every
 * volume-table change is a synchronous RocksDB write (WAL fsync) ordered with the file operations so that reopening
 * after {@code kill -9} or power loss at any point yields a consistent table: half-created volumes are rolled back,
 * half-deleted ones finished, and orphan data files removed. Allocation-map bits (one per 1 MiB chunk, set on the
 * first write into the chunk) are written without fsync: they are accounting only, never needed to read data.
 *
 * <p>Errors: bad arguments throw {@link IllegalArgumentException} naming the field and bounds; an unknown id throws
 * {@link NoSuchElementException}; operating-system and RocksDB failures throw {@link StoreException}.
 */
public final class VolumeStore implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(VolumeStore.class);

    private static final int EEXIST = 17;

    private final Path dataDir;
    private final Path volumesDir;
    private final StoreOptions options;
    private final MetadataDb meta;
    private final ChunkMapWriter chunkMap;
    private final MapWorker mapWorker;
    private final Snapshots snapshots;
    private final IoEngine engine;
    private final int dioOffsetAlign;
    private final int dioMemAlign;
    private final boolean directIo;
    private final boolean punchHole;
    private final boolean zeroRange;
    private final ConcurrentHashMap<String, StoreVolume> volumes = new ConcurrentHashMap<>();
    private final List<StoreVolume> deletedVolumes = new ArrayList<>();
    /**
     * Ids whose data cannot be served: an ONLINE row whose data file is missing, or a data file without a row
     * (metadata lost). Kept on disk untouched, never exported, never recreated empty under the same id.
     */
    private final Set<String> unavailableIds = ConcurrentHashMap.newKeySet();
    private final CopyOnWriteArrayList<Consumer<VolumeEvent>> listeners = new CopyOnWriteArrayList<>();
    private boolean closed;
    /** Serialises {@link #raiseEpoch} (not the store's monitor: a long management call must not stall a poller). */
    private final Object epochLock = new Object();
    /** Fault-injection rule for new queues (tests, drills), or null: queues are then the backend's own. */
    private volatile StoreFaults faults;
    private static final java.util.concurrent.atomic.AtomicInteger FILE_SLOTS = new java.util.concurrent.atomic.AtomicInteger();

    private VolumeStore(Path dataDir, StoreOptions options) {
        this.dataDir = dataDir;
        this.volumesDir = dataDir.resolve("volumes");
        this.options = options;
        try {
            Files.createDirectories(volumesDir);
        } catch (IOException e) {
            throw new StoreException("create data directory failed: path=" + volumesDir + ": " + e, e);
        }
        FsProbe probe = FsProbe.run(volumesDir, options.directIoAlignBytes());
        this.dioOffsetAlign = probe.dioOffsetAlign();
        this.dioMemAlign = probe.dioMemAlign();
        this.directIo = probe.directIo();
        this.punchHole = probe.punchHole();
        this.zeroRange = probe.zeroRange();
        this.meta = MetadataDb.open(dataDir.resolve("meta"));
        this.chunkMap = new ChunkMapWriter(meta, "chunk-map-" + dataDir.getFileName());
        this.mapWorker = new MapWorker(meta, volumes::values, "cluster-map-" + dataDir.getFileName());
        this.snapshots = new Snapshots(this, meta);
        try {
            this.engine = IoEngine.select(options);
            recover();
        } catch (RuntimeException e) {
            mapWorker.close();
            chunkMap.close();
            meta.close();
            throw e;
        }
        LOG.info("volume store open: dataDir={}, volumes={}, dioOffsetAlignBytes={}, dioMemAlignBytes={}, "
                        + "punchHole={}, zeroRange={}", dataDir, volumes.size(), dioOffsetAlign, dioMemAlign, punchHole,
                zeroRange);
    }

    /**
     * Installs (or with null removes) a fault-injection rule for queues created from now on by {@link #newQueue};
     * queues created before keep their behaviour. For tests and fault drills only (case C7).
     */
    public void setFaults(StoreFaults f) {
        if (f != null) {
            LOG.warn("fault injection enabled: {}", f);
        }
        faults = f;
    }

    /**
     * Opens (creating if needed) the store in {@code dataDir}, recovering every volume. Fails with
     * {@link StoreException} when the directory cannot be used or another process holds it (RocksDB lock).
     */
    public static VolumeStore open(Path dataDir, StoreOptions options) {
        return new VolumeStore(dataDir.toAbsolutePath(), options);
    }

    /**
     * Creates a volume: an all-zero sparse file of {@code spec.sizeBytes()}, its space reserved when
     * {@link StoreOptions#preallocate()} (then a volume that does not fit fails with {@link StoreException}, ENOSPC).
     *
     * @throws IllegalArgumentException when a volume with that id exists
     */
    public synchronized StoreVolume create(VolumeSpec spec) {
        ensureOpen();
        if (volumes.containsKey(spec.id())) {
            throw new IllegalArgumentException("volume exists: id=" + spec.id());
        }
        if (unavailableIds.contains(spec.id())) {
            throw new IllegalArgumentException("volume exists but is unavailable: id=" + spec.id()
                    + " (its data file or its metadata row was lost; restore the data directory or delete the id)");
        }
        // thick volumes stay flat (a redirect needs space their reservation promised away), as do volumes of the
        // null backend (nothing is stored to map)
        boolean flat = options.clusterBytes() == 0 || options.preallocate() || engine.kind() == IoBackend.NULL;
        int clusterShift = flat ? 0 : Integer.numberOfTrailingZeros(options.clusterBytes());
        MetadataDb.Row row = new MetadataDb.Row(spec.id(), spec.name(), spec.sizeBytes(), spec.lbaSizeBytes(),
                StoreVolumeState.CREATING, spec.allowedHosts(), clusterShift);
        meta.putVolume(row);
        Path file = fileOf(spec.id());
        StoreVolume v = null;
        boolean fileCreated = false;
        try {
            try {
                // a mapped volume's file holds clusters and grows as they are taken
                Syscalls.createSparseFile(file, clusterShift == 0 ? spec.sizeBytes() : 0);
            } catch (StoreException e) {
                fileCreated = e.errno() != EEXIST; // created, then ftruncate/fsync failed (EFBIG, ENOSPC): remove
                throw e;
            }
            fileCreated = true;
            Syscalls.fsyncDirectory(volumesDir);
            v = openVolume(row);
            if (options.preallocate()) {
                preallocate(v, 0, spec.sizeBytes(), file);
            }
        } catch (RuntimeException e) {
            if (v != null) {
                closeFds(v);
            }
            if (fileCreated) {
                deleteQuietly(file); // never a file this call did not create (O_EXCL failed: someone's data)
            }
            meta.deleteVolume(spec.id());
            throw e;
        }
        meta.putVolume(row.withState(StoreVolumeState.ONLINE));
        volumes.put(spec.id(), v);
        LOG.info("volume created: id={}, sizeBytes={}, lbaSizeBytes={}", spec.id(), spec.sizeBytes(),
                spec.lbaSizeBytes());
        fire(VolumeEvent.Kind.CREATED, v);
        return v;
    }

    /**
     * Deletes a volume and its data. I/O already handed to the kernel finishes harmlessly; later I/O on the handle
     * completes with {@code -ENXIO}. The descriptors of deleted volumes are closed when the store closes (an I/O
     * racing the delete must never hit a reused descriptor); the space is freed at once (truncate). An
     * {@linkplain #isUnavailable unavailable} id is deleted too (its row and its file, whichever is left).
     */
    public synchronized void delete(String id) {
        ensureOpen();
        if (!volumes.containsKey(id) && unavailableIds.contains(id)) {
            deleteQuietly(fileOf(id)); // row first kept, removed last: a crash here leaves it unavailable, not served
            Syscalls.fsyncDirectory(volumesDir);
            meta.deleteVolumeAndChunks(id);
            unavailableIds.remove(id);
            LOG.info("unavailable volume deleted: id={}", id);
            return;
        }
        StoreVolume v = get(id);
        MetadataDb.Row row = meta.getVolume(id);
        meta.putVolume(row.withState(StoreVolumeState.DELETING));
        v.markDeleted();
        volumes.remove(id);
        deletedVolumes.add(v);
        Syscalls.ftruncate(v.bufferedFd, 0, fileOf(id));
        deleteQuietly(fileOf(id));
        // map commits of writes that were in flight: the worker drops those it has not started (the volume is
        // marked deleted) and finishes a batch it is writing before this returns, so the range delete comes last
        mapWorker.barrier();
        meta.deleteVolumeAndChunks(id);
        snapshots.forgetViews(id);
        LOG.info("volume deleted: id={}", id);
        fire(VolumeEvent.Kind.DELETED, v);
    }

    /**
     * Grows a volume to {@code newSizeBytes}; the new space reads zero. Growing to the current size is a no-op.
     *
     * @throws IllegalArgumentException when {@code newSizeBytes} is smaller than the current size (shrinking is
     *                                  not supported), not a multiple of the LBA size, or above the maximum
     */
    public synchronized StoreVolume resize(String id, long newSizeBytes) {
        ensureOpen();
        StoreVolume v = get(id);
        VolumeSpec.validateSize("newSizeBytes", newSizeBytes, v.lbaSizeBytes());
        if (newSizeBytes < v.sizeBytes()) {
            throw new IllegalArgumentException("invalid newSizeBytes: newSizeBytes=" + newSizeBytes
                    + ", min=" + v.sizeBytes() + " (current size; shrinking is not supported)");
        }
        if (newSizeBytes == v.sizeBytes()) {
            return v;
        }
        // File first (synced), then the table: a grow the file system refuses (ENOSPC, EFBIG) changes nothing; a
        // crash in between leaves a file longer than its row (harmless). Table first left a row recovery could not
        // honour, and the node did not start again.
        if (options.preallocate()) {
            preallocate(v, v.sizeBytes(), newSizeBytes - v.sizeBytes(), fileOf(id));
        }
        if (v.map() == null) {
            Syscalls.ftruncate(v.bufferedFd, newSizeBytes, fileOf(id));
            Syscalls.fsync(v.bufferedFd, fileOf(id));
        }
        meta.putVolume(meta.getVolume(id).withSize(newSizeBytes));
        v.setSizeBytes(newSizeBytes);
        LOG.info("volume resized: id={}, sizeBytes={}", id, newSizeBytes);
        fire(VolumeEvent.Kind.RESIZED, v);
        return v;
    }

    /** Replaces the hostnqn allow-list of a volume (validated as in {@link VolumeSpec}). */
    public synchronized StoreVolume setAllowedHosts(String id, Set<String> allowedHosts) {
        ensureOpen();
        StoreVolume v = get(id);
        Set<String> hosts = VolumeSpec.validateHosts(allowedHosts);
        meta.putVolume(meta.getVolume(id).withHosts(hosts));
        v.setAllowedHosts(hosts);
        fire(VolumeEvent.Kind.ALLOWED_HOSTS_CHANGED, v);
        return v;
    }

    /**
     * Registers a listener for volume-table changes. It runs on the thread making the change, after the change is
     * durable, one change at a time; it must not block or call back into the store's management methods. An
     * exception it throws is logged and ignored.
     */
    public void addListener(Consumer<VolumeEvent> listener) {
        listeners.add(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /** Removes a listener added with {@link #addListener}. */
    public void removeListener(Consumer<VolumeEvent> listener) {
        listeners.remove(listener);
    }

    /** Snapshots of every online volume, ordered by id. */
    public List<VolumeInfo> list() {
        return volumes.values().stream().map(StoreVolume::info).sorted(Comparator.comparing(VolumeInfo::id)).toList();
    }

    /**
     * The volume with this id.
     *
     * @throws NoSuchElementException when there is none
     */
    public StoreVolume get(String id) {
        StoreVolume v = volumes.get(id);
        if (v == null) {
            throw new NoSuchElementException("no volume: id=" + id);
        }
        return v;
    }

    /**
     * True when {@code id} names a volume this store holds but cannot serve: its data file was missing at open, or
     * its data file has no metadata row. Such an id is not listed, {@link #create} refuses it and {@link #delete}
     * removes whatever is left of it.
     */
    public boolean isUnavailable(String id) {
        return unavailableIds.contains(id);
    }

    /**
     * The highest replication epoch accepted for the volume as a secondary (docs/replication.md, "Wire"); 0 when none
     * was. A volatile read of the in-memory copy of the persisted value: lock-free, no allocation, for the data path.
     *
     * @throws NoSuchElementException when there is no such volume
     */
    public long epoch(String volumeId) {
        return get(volumeId).epoch();
    }

    /**
     * Raises the volume's accepted epoch to {@code epoch}, durably: the metadata row is written with {@code sync=true}
     * (RocksDB WAL fsync) before this returns, and only then is the new value visible to {@link #epoch}. Never lowers
     * it: an {@code epoch} at or below the current one changes nothing. Raising is rare (once per epoch change of the
     * volume), so a target poller may call this on its own thread and wait for the sync write; concurrent raises are
     * serialised on a lock of their own, never the store's management lock.
     *
     * @throws IllegalArgumentException when {@code epoch} is below 1
     * @throws NoSuchElementException   when there is no such volume
     * @throws StoreException           when the write fails (the epoch is then not raised)
     */
    public void raiseEpoch(String volumeId, long epoch) {
        if (epoch < 1) {
            throw new IllegalArgumentException("invalid epoch: epoch=" + epoch + ", min=1");
        }
        StoreVolume v = get(volumeId);
        synchronized (epochLock) {
            if (epoch <= v.epoch()) {
                return;
            }
            meta.putEpoch(volumeId, epoch);
            v.setEpoch(epoch);
        }
        LOG.info("replication epoch raised: id={}, epoch={}", volumeId, epoch);
    }

    /** The volume with this id, if any. */
    public Optional<StoreVolume> find(String id) {
        return Optional.ofNullable(volumes.get(id));
    }

    /**
     * A new I/O queue for one poller thread, allowing {@code capacity} commands in flight (1-4096; size it to the
     * NVMe queue depth it serves).
     */
    public BlockQueue newQueue(int capacity) {
        ensureOpen();
        if (capacity < 1 || capacity > 4096) {
            throw new IllegalArgumentException("invalid capacity: capacity=" + capacity + ", min=1, max=4096");
        }
        // three backend slots per command: commands on mapped volumes share two per command (one may span two
        // clusters; more go in turns), and one is kept for each command on a flat volume
        BlockQueue q = engine.newQueue(this, Math.min(12288, capacity * 3));
        BlockQueue mapped = new MappedBlockQueue(q, mapWorker, capacity);
        StoreFaults f = faults;
        return f == null ? mapped : new StallingBlockQueue(mapped, f); // faults match volume (logical) offsets
    }

    /** Snapshots of the store's mapped volumes: create, list, delete, roll back (docs/snapshots.md). */
    public Snapshots snapshots() {
        return snapshots;
    }

    /** The backend every queue of this store uses. */
    public IoBackend backend() {
        return engine.kind();
    }

    /**
     * True when a trimmed range reads zero afterwards (the filesystem supports {@code FALLOC_FL_PUNCH_HOLE}, or for
     * {@link StoreOptions#preallocate() preallocated} volumes {@code FALLOC_FL_ZERO_RANGE}); the target advertises deterministic zeroes after deallocate (NVMe DLFEAT
     * read behaviour 001b) exactly when this is true. When false, TRIM is accepted and does nothing.
     */
    public boolean zeroesAfterTrim() {
        // preallocated volumes zero a trimmed range (FALLOC_FL_ZERO_RANGE) rather than punch it, so their space stays
        // reserved; without ZERO_RANGE support trim is then advisory
        return options.preallocate() ? zeroRange : punchHole;
    }

    /** Offset/length alignment in bytes for O_DIRECT on the data files (statx STATX_DIOALIGN, else 4096). */
    public int directIoAlignBytes() {
        return dioOffsetAlign;
    }

    /** Total size in bytes of the filesystem holding the data directory. */
    public long capacityBytes() {
        return statvfs(true);
    }

    /** Bytes available to this process on the filesystem holding the data directory. */
    public long freeBytes() {
        return statvfs(false);
    }

    private long statvfs(boolean total) {
        try {
            var fs = Files.getFileStore(volumesDir);
            return total ? fs.getTotalSpace() : fs.getUsableSpace();
        } catch (IOException e) {
            throw new StoreException("statvfs failed: path=" + volumesDir + ": " + e, e);
        }
    }

    /**
     * Bytes the online volumes may still take from the file system: per flat volume its size minus the blocks its
     * data file holds now (statx), so space a TRIM handed back counts as the volume's and a preallocated volume counts
     * nothing (falls back to the allocation map when the file system cannot say); per mapped volume its size minus
     * its live clusters no snapshot shares (a shared one takes a new cluster at its next write).
     */
    public long unallocatedBytes() {
        long sum = 0;
        for (StoreVolume v : volumes.values()) {
            if (v.map() != null) {
                sum += Math.max(0, v.sizeBytes() - Math.min(v.sizeBytes(), v.map().liveExclusiveBytes()));
                continue;
            }
            long held = Syscalls.allocatedBytes(fileOf(v.id()));
            sum += Math.max(0, v.sizeBytes() - (held < 0 ? v.allocatedBytes() : Math.min(held, v.sizeBytes())));
        }
        return sum;
    }

    /** The data directory. */
    public Path dataDir() {
        return dataDir;
    }

    /** The options this store was opened with. */
    public StoreOptions options() {
        return options;
    }

    /**
     * Closes every descriptor and the metadata database. Queues must be closed first (their in-flight I/O still
     * refers to the descriptors). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (StoreVolume v : volumes.values()) {
            closeFds(v);
        }
        for (StoreVolume v : deletedVolumes) {
            closeFds(v);
        }
        volumes.clear();
        deletedVolumes.clear();
        engine.close();
        mapWorker.close();
        chunkMap.close(); // its last bits go in before the database closes
        meta.close();
    }

    // ---- package-private ----

    MetadataDb meta() {
        return meta;
    }

    boolean zeroRangeSupported() {
        return zeroRange;
    }

    /** The first write into {@code chunk} of {@code v}: its allocation-map bit is persisted off the caller's thread. */
    void persistChunk(StoreVolume v, long chunk) {
        if (!closed) {
            chunkMap.submit(v.id(), chunk);
        }
    }

    // ---- internals ----

    private void recover() {
        for (MetadataDb.Row row : meta.loadVolumes()) {
            Path file = fileOf(row.id());
            if (row.state() != StoreVolumeState.ONLINE) {
                LOG.info("recovery: removing volume id={} left in state {}", row.id(), row.state());
                deleteQuietly(file);
                meta.deleteVolumeAndChunks(row.id());
                continue;
            }
            if (!Files.exists(file)) {
                // one lost file must not take the node down; the row stays: restore the file, restart, it is back
                LOG.error("recovery: data file missing for volume id={}, path={}: volume unavailable (not served, "
                        + "not recreated); restore the file and restart, or delete the volume", row.id(), file);
                unavailableIds.add(row.id());
                continue;
            }
            StoreVolume v = openVolume(row);
            if (v.map() != null) {
                snapshots.load(v);
                v.setEpoch(meta.getEpoch(row.id()));
                volumes.put(row.id(), v);
                continue;
            }
            long fileSize = Syscalls.fileSize(v.bufferedFd, file);
            if (fileSize < row.sizeBytes()) {
                LOG.info("recovery: growing data file of id={} from {} to {} bytes", row.id(), fileSize,
                        row.sizeBytes());
                try {
                    Syscalls.ftruncate(v.bufferedFd, row.sizeBytes(), file);
                    Syscalls.fsync(v.bufferedFd, file);
                } catch (StoreException e) {
                    // one volume that cannot be grown (EFBIG, ENOSPC, I/O error) must not keep the node down
                    LOG.error("recovery: volume id={} unavailable: its data file cannot grow to its size: {}",
                            row.id(), e.toString());
                    closeFds(v);
                    unavailableIds.add(row.id());
                    continue;
                }
            }
            meta.loadChunks(row.id(), v::loadChunk);
            v.setEpoch(meta.getEpoch(row.id()));
            volumes.put(row.id(), v);
        }
        try (var files = Files.list(volumesDir)) {
            for (Path f : files.toList()) {
                String n = f.getFileName().toString();
                String id = n.endsWith(".vol") ? n.substring(0, n.length() - 4) : null;
                if (id != null && !volumes.containsKey(id) && unavailableIds.add(id)) {
                    // No store operation leaves a data file without its row (row written first, removed last): the
                    // metadata lost it. The data may be the only copy: keep it, never recreate the id over it.
                    LOG.error("recovery: data file without a volume row (metadata lost?): path={}; kept untouched, "
                            + "volume id={} unavailable", f, id);
                }
            }
        } catch (IOException e) {
            throw new StoreException("list data directory failed: path=" + volumesDir + ": " + e, e);
        }
    }

    private void fire(VolumeEvent.Kind kind, StoreVolume v) {
        VolumeEvent e = new VolumeEvent(kind, v.info());
        for (var l : listeners) {
            try {
                l.accept(e);
            } catch (RuntimeException ex) {
                LOG.warn("volume listener failed: event={}: {}", e, ex.toString());
            }
        }
    }

    private StoreVolume openVolume(MetadataDb.Row row) {
        Path file = fileOf(row.id());
        int direct = Syscalls.open(file, directIo);
        int buffered;
        try {
            buffered = Syscalls.open(file, false);
        } catch (RuntimeException e) {
            Syscalls.close(direct);
            throw e;
        }
        ClusterMap map = row.clusterShift() == 0 ? null : new ClusterMap(row.clusterShift(), row.sizeBytes());
        long fileBytes = map == null ? row.sizeBytes() : Syscalls.fileSize(buffered, file);
        return new StoreVolume(this, row.id(), row.name(), row.sizeBytes(), row.lbaSizeBytes(), row.allowedHosts(),
                direct, buffered, dioOffsetAlign, dioMemAlign, FILE_SLOTS.getAndIncrement(), map, fileBytes, null);
    }

    private void preallocate(StoreVolume v, long offsetBytes, long lengthBytes, Path file) {
        if (lengthBytes > 0 && !Syscalls.reserve(v.bufferedFd, offsetBytes, lengthBytes, file)) {
            LOG.warn("preallocate unsupported by the filesystem (EOPNOTSUPP): path={}; volume stays sparse", file);
        }
    }

    private static void closeFds(StoreVolume v) {
        Syscalls.close(v.directFd);
        Syscalls.close(v.bufferedFd);
    }

    private Path fileOf(String id) {
        return volumesDir.resolve(id + ".vol");
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            LOG.warn("delete failed: path={}: {}", p, e.toString());
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("volume store closed: dataDir=" + dataDir);
        }
    }
}
