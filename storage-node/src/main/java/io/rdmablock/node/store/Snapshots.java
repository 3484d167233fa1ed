package io.rdmablock.node.store;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots of the mapped volumes of one {@link VolumeStore} (docs/snapshots.md): taking one freezes the volume's
 * cluster map (no data is copied; later writes to shared clusters go to new ones), deleting one drops its
 * references (clusters only it held are freed; no data is copied), rolling back makes the live map a copy of a
 * snapshot's. Management calls, serialized with the store's other management calls.
 *
 * <p>What a snapshot holds: every write that completed before {@link #create} was called, none submitted after it
 * returned; writes in flight during the call may or may not be in it. A crash-consistent cut across hosts and
 * copies needs the caller to hold the volume's I/O across the call (the target's snapshot barrier does).
 *
 * <p>Crash safety: each call's metadata is one synced RocksDB batch. A crash before it leaves no trace (clusters a
 * half-taken snapshot would have kept are freed by the scan at open); after it, the change is whole.
 *
 * <p>Errors: {@link NoSuchElementException} for an unknown volume or snapshot; {@link IllegalArgumentException}
 * naming the field for a bad name, a duplicate name, a flat volume, or more than {@link #MAX_PER_VOLUME};
 * {@link StoreException} when the metadata cannot be written (nothing changed).
 */
public final class Snapshots {
    private static final Logger LOG = LoggerFactory.getLogger(Snapshots.class);

    /** Most snapshots one volume may hold. */
    public static final int MAX_PER_VOLUME = 32;
    /** Most clusters of a volume that can take snapshots: 2^24 (16 TiB at 1 MiB clusters; 128 MiB per snapshot). */
    public static final long MAX_CLUSTERS = 1L << 24;
    /** Longest wait of a snapshot's barrier for the writes in flight to complete, ms. */
    public static final long BARRIER_TIMEOUT_MS = 5_000;
    private volatile long lastBarrierNs;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    /** Names of snapshots a secondary copy takes for its primary's cut ({@link #takeCopy}): {@code _<id>}. */
    private static final Pattern COPY_NAME = Pattern.compile("_[0-9]{1,19}");

    private final VolumeStore store;
    private final MetadataDb meta;
    /** Open read-only views per {@code volumeId@name}. */
    private final java.util.Map<String, Integer> openViews = new java.util.HashMap<>();

    Snapshots(VolumeStore store, MetadataDb meta) {
        this.store = store;
        this.meta = meta;
    }

    /** Takes snapshot {@code name} of volume {@code volumeId}, numbered one above the volume's highest. */
    public SnapshotInfo create(String volumeId, String name) {
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            List<ClusterMap.Snap> all = v.map().snapshots();
            long id = all.isEmpty() ? 1 : all.getLast().id() + 1;
            return create(volumeId, id, name);
        }
    }

    /**
     * Takes snapshot {@code name} with number {@code id} (given by the management plane, so every copy of the volume
     * numbers it alike). Its barrier waits for the volume's writes in flight, which complete only as their queues'
     * owners reap: never call this from a thread that owns a queue with writes in flight on the volume (a poller);
     * it would wait {@link #BARRIER_TIMEOUT_MS} and fail.
     */
    public SnapshotInfo create(String volumeId, long id, String name) {
        validateName(name);
        if (id < 1) {
            throw new IllegalArgumentException("invalid snapshot id: id=" + id + ", min=1");
        }
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            ClusterMap map = v.map();
            List<ClusterMap.Snap> all = map.snapshots();
            if (all.size() >= MAX_PER_VOLUME) {
                throw new IllegalArgumentException("too many snapshots: volume=" + volumeId + ", count=" + all.size()
                        + ", max=" + MAX_PER_VOLUME + " (delete one first)");
            }
            long clusters = (v.sizeBytes() + map.clusterBytes() - 1) >>> map.clusterShift();
            if (clusters > MAX_CLUSTERS) {
                throw new IllegalArgumentException("volume too large for snapshots: volume=" + volumeId
                        + ", sizeBytes=" + v.sizeBytes() + ", max=" + (MAX_CLUSTERS << map.clusterShift())
                        + " (a snapshot's map holds 8 bytes per cluster in memory)");
            }
            for (ClusterMap.Snap s : all) {
                if (s.name().equals(name) || s.id() == id) {
                    throw new IllegalArgumentException("snapshot exists: volume=" + volumeId + ", name=" + s.name()
                            + ", id=" + s.id());
                }
            }
            long t0 = System.nanoTime();
            ClusterMap.Snap s;
            CutGate.Phase before = v.cutGate.close();
            try {
                awaitDrained(v, before);
                s = map.snapshot(id, name, System.currentTimeMillis(), v.sizeBytes());
            } finally {
                v.cutGate.release();
            }
            long frozenNs = System.nanoTime() - t0;
            try {
                // the snapshot's clusters hold data of writes that were never flushed: durable before the snapshot
                // is (a power loss must not leave a snapshot pointing at holes); writes go on meanwhile
                if (Syscalls.fdatasyncRaw(Syscalls.threadErrState(), v.bufferedFd) < 0) {
                    int e = Syscalls.errno(Syscalls.threadErrState());
                    throw new StoreException("fdatasync before a snapshot failed: volume=" + volumeId + ", errno=" + e,
                            e);
                }
                meta.putSnapshot(volumeId, s);
            } catch (RuntimeException e) {
                map.deleteSnapshot(id); // nothing on disk refers to it: its references go
                throw e;
            }
            lastBarrierNs = frozenNs;
            LOG.info("snapshot taken: volume={}, snapshot={}, id={}, barrierUs={}, totalUs={}", volumeId, name, id,
                    frozenNs / 1000, (System.nanoTime() - t0) / 1000);
            return info(v, s);
        }
    }

    /**
     * The name a secondary copy gives snapshot {@code id} taken for its primary's cut: {@code _<id>} (the management
     * plane's names start with a letter or digit, so none collides; the name the user chose lives in the management
     * plane, which addresses snapshots of every copy by id).
     */
    public static String copyName(long id) {
        return "_" + id;
    }

    /**
     * Takes snapshot {@code id} of a secondary copy for its primary's cut (docs/snapshots.md, "Replicated volumes"):
     * the primary holds every write of the volume meanwhile, so this copy holds exactly the writes the primary's
     * snapshot holds. One of the same id held already (an earlier attempt whose undo did not reach this copy) is
     * replaced. Not from a poller (as {@link #create}).
     *
     * @throws IllegalArgumentException as {@link #create} (flat volume, too many snapshots)
     */
    public SnapshotInfo takeCopy(String volumeId, long id) {
        synchronized (store) {
            deleteById(volumeId, id);
            return create(volumeId, id, copyName(id));
        }
    }

    /**
     * Gives snapshot {@code id} the name {@code name} (one synced metadata write): a primary's own snapshot taken
     * under {@link #copyName} until every copy confirmed its cut.
     *
     * @throws IllegalArgumentException a bad name, or another snapshot of that name
     * @throws java.util.NoSuchElementException when the volume holds no snapshot {@code id}
     */
    public SnapshotInfo rename(String volumeId, long id, String name) {
        validateName(name);
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            for (ClusterMap.Snap s : v.map().snapshots()) {
                if (s.name().equals(name) && s.id() != id) {
                    throw new IllegalArgumentException("snapshot exists: volume=" + volumeId + ", name=" + name
                            + ", id=" + s.id());
                }
            }
            ClusterMap.Snap before = v.map().snapshots().stream().filter(s -> s.id() == id).findFirst()
                    .orElseThrow(() -> new NoSuchElementException("no snapshot: volume=" + volumeId + ", id=" + id));
            if (openViews.containsKey(volumeId + "@" + before.name())) {
                throw new IllegalStateException("snapshot in use: volume=" + volumeId + ", name=" + before.name()
                        + " (close its exports first)");
            }
            ClusterMap.Snap renamed = new ClusterMap.Snap(id, name, before.createdMs(), before.sizeBytes(),
                    before.map());
            meta.putSnapshotRow(volumeId, renamed); // durable first: a crash leaves the old name, never a torn row
            v.map().rename(id, name);
            return info(v, renamed);
        }
    }

    /** True for a name {@link #copyName} gives. */
    public static boolean isCopyName(String name) {
        return name != null && COPY_NAME.matcher(name).matches();
    }

    /**
     * Deletes snapshot {@code id}, if the volume holds it.
     *
     * @return false when it held none of that id
     * @throws IllegalStateException as {@link #delete} (a view of it is open)
     */
    public boolean deleteById(String volumeId, long id) {
        synchronized (store) {
            for (ClusterMap.Snap s : mapped(volumeId).map().snapshots()) {
                if (s.id() == id) {
                    delete(volumeId, s.name());
                    return true;
                }
            }
            return false;
        }
    }

    /** How long the last {@link #create} held the volume's writes (drain and map freeze), ns. */
    public long lastBarrierNs() {
        return lastBarrierNs;
    }

    /**
     * Waits until every write-type command admitted before the barrier completed (their queues' owners keep
     * reaping); bounded by {@link #BARRIER_TIMEOUT_MS}.
     */
    private static void awaitDrained(StoreVolume v, CutGate.Phase before) {
        long deadline = System.nanoTime() + BARRIER_TIMEOUT_MS * 1_000_000L;
        long spins = 0;
        while (!before.drained()) {
            if (System.nanoTime() > deadline) {
                throw new StoreException("snapshot barrier timed out: volume=" + v.id() + ", writes in flight="
                        + before.inFlight() + " did not complete within " + BARRIER_TIMEOUT_MS + " ms (a hung disk?); "
                        + "no snapshot taken", 0);
            }
            if (++spins < 1000) {
                Thread.onSpinWait();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            }
        }
    }

    /** The snapshots of a volume, oldest first (none for a flat volume). */
    public List<SnapshotInfo> list(String volumeId) {
        StoreVolume v = store.get(volumeId);
        if (v.map() == null) {
            return List.of();
        }
        List<SnapshotInfo> out = new ArrayList<>();
        for (ClusterMap.Snap s : v.map().snapshots()) {
            out.add(info(v, s));
        }
        return out;
    }

    /** The snapshot of that name, if any. */
    public Optional<SnapshotInfo> find(String volumeId, String name) {
        return list(volumeId).stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** Deletes snapshot {@code name}: clusters only it held are freed; no data is copied. */
    public void delete(String volumeId, String name) {
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            ClusterMap.Snap s = byName(v, name);
            if (openViews.containsKey(volumeId + "@" + name)) {
                throw new IllegalStateException("snapshot in use: volume=" + volumeId + ", name=" + name
                        + ", openViews=" + openViews.get(volumeId + "@" + name) + " (close its exports first)");
            }
            long t0 = System.nanoTime();
            meta.deleteSnapshot(volumeId, s.id());
            v.map().deleteSnapshot(s.id());
            LOG.info("snapshot deleted: volume={}, snapshot={}, id={}, us={}", volumeId, name, s.id(),
                    (System.nanoTime() - t0) / 1000);
        }
    }

    /**
     * Makes the volume's content the snapshot's (the snapshot stays). The caller has stopped hosts' I/O on the volume
     * (no host connected); writes still in flight complete first and later ones wait for the swap (the barrier). The
     * volume keeps its size (blocks past the snapshot's size read zero).
     *
     * @throws IllegalStateException when a command is still changing the volume's map (nothing is changed)
     * @throws StoreException        when the writes in flight do not complete within {@link #BARRIER_TIMEOUT_MS}
     */
    public void rollback(String volumeId, String name) {
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            rollback(v, byName(v, name), null);
        }
    }

    /**
     * As {@link #rollback(String, String)} to snapshot number {@code snapshotId}, once per {@code requestId}: the id
     * is written in the rollback's own synced metadata batch, and a call with the id of the last rollback applied to
     * the volume changes nothing (so a request seen again after later writes, or after a restart, is not re-applied).
     *
     * @param requestId the management request's id, 1..256 characters
     * @return true when rolled back now; false when {@code requestId} was the last one applied
     * @throws NoSuchElementException   no such volume or snapshot (nothing changed)
     * @throws IllegalArgumentException a flat volume, or a bad {@code requestId}
     * @throws IllegalStateException    as {@link #rollback(String, String)}
     * @throws StoreException           as {@link #rollback(String, String)}
     */
    public boolean rollback(String volumeId, long snapshotId, String requestId) {
        if (requestId == null || requestId.isEmpty() || requestId.length() > 256) {
            throw new IllegalArgumentException("invalid rollback request id: requestId=" + requestId
                    + ", expected 1..256 characters");
        }
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            if (requestId.equals(meta.lastRollback(volumeId))) {
                return false;
            }
            ClusterMap.Snap s = v.map().snapshots().stream().filter(x -> x.id() == snapshotId).findFirst()
                    .orElseThrow(() -> new NoSuchElementException("no snapshot: volume=" + volumeId + ", id="
                            + snapshotId));
            rollback(v, s, requestId);
            return true;
        }
    }

    /** The request id of the last rollback {@link #rollback(String, long, String)} applied to the volume, or null. */
    public String lastRollback(String volumeId) {
        store.get(volumeId);
        return meta.lastRollback(volumeId);
    }

    private void rollback(StoreVolume v, ClusterMap.Snap s, String requestId) {
        CutGate.Phase before = v.cutGate.close(); // no write may run across the swap
        try {
            awaitDrained(v, before);
            v.map().checkIdle(); // before anything is written: a refused rollback changes nothing
            meta.replaceLive(v.id(), s.map(), requestId); // durable first: a freed cluster is never one the disk maps
            v.map().rollback(s.id());
        } finally {
            v.cutGate.release();
        }
        LOG.info("volume rolled back: volume={}, snapshot={}, id={}, request={}", v.id(), s.name(), s.id(),
                requestId);
    }

    /**
     * A read-only view of snapshot {@code name}: a volume handle for {@link BlockQueue} reads (writes, trims and
     * write zeroes complete with {@code -EROFS}; a FLUSH does nothing harmful), {@link SnapshotInfo#sizeBytes()}
     * long, with id {@code <volumeId>@<name>}. It reads the snapshot's clusters; {@link #delete} refuses while a view
     * is open. Close it with {@link #close(StoreVolume)}.
     */
    public StoreVolume open(String volumeId, String name) {
        synchronized (store) {
            StoreVolume v = mapped(volumeId);
            ClusterMap.Snap s = byName(v, name);
            ClusterMap frozen = new ClusterMap(v.map().clusterShift(), s.sizeBytes());
            long[] m = s.map();
            for (int c = 0; c < m.length; c++) {
                if (m[c] != 0) {
                    frozen.loadLive(c, m[c] - 1);
                }
            }
            frozen.finishLoad();
            openViews.merge(volumeId + "@" + name, 1, Integer::sum);
            return v.view(volumeId + "@" + name, frozen, s.sizeBytes());
        }
    }

    /**
     * As {@link #open(String, String)} for snapshot number {@code id} (the management plane's id; on a copy it may
     * still be named {@link #copyName}): the read-only view a host's Read Snapshot commands read
     * (docs/snapshots.md, "Export"). Not from a poller (it takes the store's lock, held by a snapshot's barrier).
     *
     * @throws NoSuchElementException   no such volume, or it holds no snapshot {@code id}
     * @throws IllegalArgumentException a flat volume
     */
    public StoreVolume openById(String volumeId, long id) {
        synchronized (store) {
            for (ClusterMap.Snap s : mapped(volumeId).map().snapshots()) {
                if (s.id() == id) {
                    return open(volumeId, s.name());
                }
            }
            throw new NoSuchElementException("no snapshot: volume=" + volumeId + ", id=" + id);
        }
    }

    /**
     * Refuses when a read-only view of snapshot {@code id} is open (as {@link #delete} would): lets a replicated
     * delete keep every copy while an export reads the primary's.
     *
     * @throws IllegalStateException naming the snapshot while a view of it is open
     */
    public void checkNotInUse(String volumeId, long id) {
        synchronized (store) {
            StoreVolume v = store.get(volumeId);
            if (v.map() == null) {
                return;
            }
            for (ClusterMap.Snap s : v.map().snapshots()) {
                if (s.id() == id && openViews.containsKey(volumeId + "@" + s.name())) {
                    throw new IllegalStateException("snapshot in use: volume=" + volumeId + ", name=" + s.name()
                            + ", id=" + id + ", openViews=" + openViews.get(volumeId + "@" + s.name())
                            + " (an export reads it; deleted once it ended)");
                }
            }
        }
    }

    /** Closes a view from {@link #open}; idempotent per view. */
    public void close(StoreVolume view) {
        synchronized (store) {
            if (view.isReadOnly() && view.markDeletedOnce()) { // its own flag: its volume may be gone already
                openViews.computeIfPresent(view.id(), (k, n) -> n <= 1 ? null : n - 1);
            }
        }
    }

    /** Forgets the open views of a deleted volume (its snapshots went with it). */
    void forgetViews(String volumeId) {
        synchronized (store) {
            openViews.keySet().removeIf(k -> k.startsWith(volumeId + "@"));
        }
    }

    /** Loads a mapped volume's live map and snapshots at open, and frees what no map holds. */
    void load(StoreVolume v) {
        ClusterMap map = v.map();
        for (ClusterMap.Snap row : meta.loadSnapshots(v.id())) {
            long[] m = new long[(int) ((row.sizeBytes() + map.clusterBytes() - 1) >>> map.clusterShift())];
            meta.loadMap(v.id(), row.id(), (c, p) -> {
                if (c < m.length) {
                    m[(int) (long) c] = p + 1;
                }
            });
            map.loadSnapshot(new ClusterMap.Snap(row.id(), row.name(), row.createdMs(), row.sizeBytes(), m));
        }
        long clusters = (v.sizeBytes() + map.clusterBytes() - 1) >>> map.clusterShift();
        int[] stale = new int[1];
        meta.loadMap(v.id(), 0, (c, p) -> {
            if (c < clusters) {
                map.loadLive(c, p);
            } else {
                stale[0]++; // past the volume's end: left by a bug or a crash of an older version; never served
            }
        });
        if (stale[0] > 0) {
            LOG.warn("recovery: volume id={}: {} live map entries past the volume's end ignored", v.id(), stale[0]);
        }
        long[] orphans = map.finishLoad();
        if (orphans.length > 0) {
            v.punchClusters(orphans);
            LOG.info("recovery: volume id={}: {} clusters held by no map freed", v.id(), orphans.length);
        }
        map.addFree(orphans);
        v.punchFrom(map.highWater()); // clusters above the high-water mark are taken as holes: make them so
    }

    static void validateName(String name) {
        if (name == null || !NAME.matcher(name).matches() && !COPY_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid snapshot name: name=" + name
                    + ", expected 1-64 characters of [A-Za-z0-9._-] starting with a letter or digit");
        }
    }

    private StoreVolume mapped(String volumeId) {
        StoreVolume v = store.get(volumeId);
        if (v.map() == null) {
            throw new IllegalArgumentException("volume has no snapshots: volume=" + volumeId + " is flat (created "
                    + "with " + StoreOptions.CLUSTER_BYTES_PROPERTY + "=0 or before snapshots existed)");
        }
        return v;
    }

    private static ClusterMap.Snap byName(StoreVolume v, String name) {
        for (ClusterMap.Snap s : v.map().snapshots()) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        throw new NoSuchElementException("no snapshot: volume=" + v.id() + ", name=" + name);
    }

    private static SnapshotInfo info(StoreVolume v, ClusterMap.Snap s) {
        return new SnapshotInfo(v.id(), s.id(), s.name(), s.createdMs(), s.sizeBytes(), v.map().exclusiveBytes(s));
    }
}
