package io.rdmablock.node.store;

import java.util.Set;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A handle on one volume of a {@link VolumeStore}, passed to {@link BlockQueue} submits. Thread-safe; the handle
 * stays valid until the volume is deleted (then I/O on it completes with {@code -ENXIO}).
 *
 * <p>Data layout: byte {@code offset} of the volume is byte {@code offset} of the sparse file
 * {@code <dataDir>/volumes/<id>.vol}; the file is exactly {@link #sizeBytes()} long.
 */
public final class StoreVolume {

    /** Allocation-map granularity: 1 MiB chunks. */
    public static final int CHUNK_SHIFT = 20;

    private final String id;
    private final int lbaSizeBytes;
    private final VolumeStore store;
    /** O_DIRECT descriptor: aligned I/O. */
    final int directFd;
    /** Buffered descriptor of the same file: I/O not aligned to the direct-I/O alignment. */
    final int bufferedFd;
    /** Process-unique number of this open volume (never reused); io_uring file-table slots 2n and 2n+1. */
    final int fileSlot;
    /** Offset/length alignment required by O_DIRECT, minus one. */
    final long dioOffsetMask;
    /** Buffer-address alignment required by O_DIRECT, minus one. */
    final long dioMemMask;
    private volatile long sizeBytes;
    private volatile String name;
    private volatile Set<String> allowedHosts;
    private volatile boolean deleted;
    /**
     * Highest replication epoch accepted as a secondary (persisted by {@link VolumeStore#raiseEpoch}; 0 = none) and
     * the commands in flight per epoch.
     */
    private final EpochFence epochFence = new EpochFence(0);
    private volatile AtomicLongArray chunkBits;
    /** The allocation map of a mapped volume; null for a flat one (byte n of the volume at byte n of the file). */
    private final ClusterMap map;
    /** The snapshot barrier of a mapped volume; null for a flat one or a view. */
    final CutGate cutGate;
    /** For a snapshot's read-only view: the volume it belongs to (writes complete with {@code -EROFS}); else null. */
    private final StoreVolume base;
    /** Length of the data file of a mapped volume (physical clusters covered); grown by {@link #ensureFileBytes}. */
    private volatile long fileBytes;

    StoreVolume(VolumeStore store, String id, String name, long sizeBytes, int lbaSizeBytes, Set<String> allowedHosts,
                int directFd, int bufferedFd, int dioOffsetAlign, int dioMemAlign, int fileSlot, ClusterMap map,
                long fileBytes, StoreVolume base) {
        this.map = map;
        this.fileBytes = fileBytes;
        this.base = base;
        this.cutGate = map != null && base == null ? new CutGate() : null;
        this.fileSlot = fileSlot;
        this.store = store;
        this.id = id;
        this.name = name;
        this.sizeBytes = sizeBytes;
        this.lbaSizeBytes = lbaSizeBytes;
        this.allowedHosts = allowedHosts;
        this.directFd = directFd;
        this.bufferedFd = bufferedFd;
        this.dioOffsetMask = dioOffsetAlign - 1L;
        this.dioMemMask = dioMemAlign - 1L;
        this.chunkBits = new AtomicLongArray(wordsFor(sizeBytes));
    }

    /** Volume id. */
    public String id() {
        return id;
    }

    /** Human-readable name. */
    public String name() {
        return name;
    }

    /** Current capacity in bytes; grows on {@link VolumeStore#resize}. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** Logical block size in bytes: 512 or 4096. */
    public int lbaSizeBytes() {
        return lbaSizeBytes;
    }

    /** Capacity in logical blocks (NVMe NSZE/NCAP). */
    public long blockCount() {
        return sizeBytes / lbaSizeBytes;
    }

    /** The hostnqn allow-list. */
    public Set<String> allowedHosts() {
        return allowedHosts;
    }

    /** True when {@code hostnqn} may connect: listed, or the list holds {@link VolumeSpec#ANY_HOST}. */
    public boolean isHostAllowed(String hostnqn) {
        Set<String> hosts = allowedHosts;
        return hosts.contains(VolumeSpec.ANY_HOST) || (hostnqn != null && hosts.contains(hostnqn));
    }

    /** True once the volume has been deleted (for a snapshot's view: its volume, or the view was closed). */
    public boolean isDeleted() {
        return deleted || (base != null && base.deleted);
    }

    /** True for a snapshot's read-only view ({@link Snapshots#open}): writes complete with {@code -EROFS}. */
    public boolean isReadOnly() {
        return base != null;
    }

    /**
     * Bytes of the volume's data file in use: for a mapped volume the clusters held by its live map or any snapshot
     * (can exceed {@link #sizeBytes()} with snapshots); for a flat one the 1 MiB chunks written at least once.
     */
    public long allocatedBytes() {
        if (map != null) {
            return map.allocatedBytes();
        }
        AtomicLongArray bits = chunkBits;
        long chunks = 0;
        for (int i = 0; i < bits.length(); i++) {
            chunks += Long.bitCount(bits.get(i));
        }
        return Math.min(sizeBytes, chunks << CHUNK_SHIFT);
    }

    /**
     * The volume's epoch fence: the highest accepted replication epoch and the commands in flight per epoch, shared
     * by every queue on this node (docs/failover.md, "Fencing on a secondary"). Raised by
     * {@link VolumeStore#raiseEpoch} only.
     */
    public EpochFence epochFence() {
        return epochFence;
    }

    /** A snapshot of this volume's table row. */
    public VolumeInfo info() {
        return new VolumeInfo(id, name, sizeBytes, lbaSizeBytes,
                deleted ? StoreVolumeState.DELETING : StoreVolumeState.ONLINE, allowedHosts, allocatedBytes());
    }

    @Override
    public String toString() {
        return "Volume[id=" + id + ", sizeBytes=" + sizeBytes + ", lbaSizeBytes=" + lbaSizeBytes + "]";
    }

    /**
     * Bytes of the volume's own blocks that take space, at most {@link #sizeBytes()} (NVMe NUSE): the live map's
     * allocated clusters of a mapped volume (snapshots' clusters not counted), {@link #allocatedBytes()} of a flat one.
     */
    public long liveBytes() {
        return map == null ? allocatedBytes() : Math.min(sizeBytes, map.liveBytes());
    }

    /** Cluster size in bytes of a mapped volume (docs/snapshots.md); 0 for a flat volume (no snapshots). */
    public long clusterBytes() {
        return map == null ? 0 : map.clusterBytes();
    }

    // ---- package-private: store and queues ----

    VolumeStore store() {
        return store;
    }

    ClusterMap map() {
        return map;
    }

    /** A read-only view of this mapped volume through {@code frozen} (a snapshot's map), {@code size} bytes long. */
    StoreVolume view(String viewId, ClusterMap frozen, long size) {
        return new StoreVolume(store, viewId, name, size, lbaSizeBytes, allowedHosts, directFd, bufferedFd,
                (int) dioOffsetMask + 1, (int) dioMemMask + 1, fileSlot, frozen, fileBytes, this);
    }

    /** Bytes the raw queues may address: the logical size of a flat volume, the file length of a mapped one. */
    long rawSizeBytes() {
        return map == null ? sizeBytes : fileBytes;
    }

    /**
     * Grows the data file of a mapped volume to cover physical cluster {@code phys} (in steps of 1/16 of the volume,
     * at least 64 clusters and at most 1 GiB, so growth is rare); a new range is a hole and reads zero.
     *
     * @return 0, or {@code -errno} when the file cannot grow
     */
    synchronized int ensureFileBytes(long phys) {
        long need = (phys + 1) * map.clusterBytes();
        if (need <= fileBytes) {
            return 0;
        }
        long step = Math.min(1L << 30, Math.max(64 * map.clusterBytes(), sizeBytes / 16));
        long target = (need + step - 1) / step * step;
        try {
            Syscalls.ftruncate(bufferedFd, target, java.nio.file.Path.of(id + ".vol"));
        } catch (StoreException e) {
            return -Math.max(1, e.errno());
        }
        fileBytes = target;
        return 0;
    }

    /** Punches the data file from physical cluster {@code phys} to its end (clusters no map holds). */
    void punchFrom(long phys) {
        long from = phys * map.clusterBytes();
        if (fileBytes > from) {
            int r = Syscalls.fallocateRaw(Syscalls.threadErrState(), bufferedFd,
                    Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE, from, fileBytes - from);
            if (r < 0) {
                AbstractBlockQueue.writeZeroesSync(bufferedFd, from, fileBytes - from);
            }
        }
    }

    /** Punches the space of physical clusters (freed, about to be reused) so they read zero again. */
    void punchClusters(long[] phys) {
        long cb = map.clusterBytes();
        java.lang.foreign.MemorySegment err = Syscalls.threadErrState();
        for (long p : phys) {
            int r = Syscalls.fallocateRaw(err, bufferedFd, Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE,
                    p * cb, cb);
            if (r < 0) {
                // no punch on this file system: write zeroes (rare; a freed cluster must read zero when reused)
                AbstractBlockQueue.writeZeroesSync(bufferedFd, p * cb, cb);
            }
        }
    }

    void setSizeBytes(long newSize) {
        if (map != null) {
            map.resize(newSize);
        }
        AtomicLongArray old = chunkBits;
        int words = wordsFor(newSize);
        if (words > old.length()) {
            AtomicLongArray grown = new AtomicLongArray(words);
            for (int i = 0; i < old.length(); i++) {
                grown.set(i, old.get(i));
            }
            chunkBits = grown;
        }
        sizeBytes = newSize;
    }

    long epoch() {
        return epochFence.epoch();
    }

    /** Raises the in-memory epoch (after it was persisted, or at load); never lowers it. */
    void setEpoch(long e) {
        epochFence.raise(e);
    }

    void setAllowedHosts(Set<String> hosts) {
        allowedHosts = hosts;
    }

    void markDeleted() {
        deleted = true;
    }

    /** Marks this handle deleted (a view: closed); true when this call did it, false when it already was. */
    synchronized boolean markDeletedOnce() {
        boolean was = deleted;
        deleted = true;
        return !was;
    }

    /** Marks a chunk allocated in memory only (used when loading the map). */
    void loadChunk(long chunk) {
        AtomicLongArray bits = chunkBits;
        int w = (int) (chunk >>> 6);
        if (w < bits.length()) {
            bits.getAndUpdate(w, v -> v | (1L << (chunk & 63)));
        }
    }

    /**
     * Records that {@code [offsetBytes, offsetBytes + lengthBytes)} has been written: the first write into a chunk
     * persists its bit (once per chunk; a volatile read per chunk otherwise).
     */
    void noteWritten(long offsetBytes, long lengthBytes) {
        if (lengthBytes <= 0 || map != null) {
            return;
        }
        long first = offsetBytes >>> CHUNK_SHIFT;
        long last = (offsetBytes + lengthBytes - 1) >>> CHUNK_SHIFT;
        AtomicLongArray bits = chunkBits;
        for (long c = first; c <= last; c++) {
            int w = (int) (c >>> 6);
            long mask = 1L << (c & 63);
            if (w >= bits.length()) {
                return;
            }
            long v = bits.get(w);
            if ((v & mask) == 0 && (bits.getAndUpdate(w, x -> x | mask) & mask) == 0) {
                store.persistChunk(this, c);
            }
        }
    }

    private static int wordsFor(long sizeBytes) {
        long chunks = (sizeBytes + (1L << CHUNK_SHIFT) - 1) >>> CHUNK_SHIFT;
        return (int) ((chunks + 63) >>> 6);
    }
}
