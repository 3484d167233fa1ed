package io.rdmablock.node.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The allocation map of one mapped volume: logical clusters of {@code 2^clusterShift} bytes onto physical clusters
 * of the volume's data file (byte {@code p * clusterBytes} of the file is the start of physical cluster {@code p}),
 * with snapshots sharing physical clusters (redirect-on-write). SPDK's blobstore cluster map
 * ({@code lib/blob/blobstore.c}) is the model; the differences are in docs/snapshots.md.
 *
 * <p><b>Live map</b>: one {@code long} per logical cluster, read lock-free by the pollers: {@code 0} = unallocated
 * (reads zero), else {@code (physical + 1) | flags}. {@link #SHARED} says a snapshot references the same physical
 * cluster (a write must go to a new one); {@link #BUSY} says a command is changing the entry (others wait). The
 * entries live in segments of 4096, made on first use, so a large thin volume costs memory for what it wrote.
 *
 * <p><b>References</b>: every physical cluster has a count of the maps holding it (the live map and each snapshot);
 * at zero it is freed. Invariant: a live entry carries {@link #SHARED} exactly when its cluster's count is above 1.
 * Counts, the free list and snapshots are guarded by this object's monitor (allocation, frees and snapshot changes:
 * never a write into a cluster the live map owns alone, the steady state).
 *
 * <p>Freed clusters are not reused at once: they wait until the map change that freed them is durable and
 * {@link #REUSE_GRACE_NS} has passed (an I/O racing the change must not land in a cluster given to another block),
 * then their space is punched ({@code FALLOC_FL_PUNCH_HOLE}) and they go on the free list; so a cluster taken from
 * the free list, like one above the high-water mark, reads zero.
 */
final class ClusterMap {
    /** The entry's cluster is referenced by a snapshot too: writes redirect. */
    static final long SHARED = 1L << 62;
    /** A command is changing this entry; other commands touching the cluster wait. */
    static final long BUSY = 1L << 61;
    /** Bits of an entry holding {@code physical + 1}. */
    static final long PHYS_MASK = (1L << 48) - 1;
    /**
     * Freed clusters wait at least this long before reuse: an in-place read or write issued before the change that
     * freed the cluster must have ended by then (longer than a host's default I/O timeout, 30 s; a device that holds
     * an I/O longer is not covered: docs/snapshots.md).
     */
    static final long REUSE_GRACE_NS = 35_000_000_000L;
    /** The grace in force ({@link #REUSE_GRACE_NS}; tests shorten it). */
    static volatile long reuseGraceNs = REUSE_GRACE_NS;

    private static final int SEG_SHIFT = 12;
    private static final int SEG_SIZE = 1 << SEG_SHIFT;

    /** A snapshot: its frozen map (physical + 1 per logical cluster, 0 = unallocated). */
    record Snap(long id, String name, long createdMs, long sizeBytes, long[] map) {
    }

    private final int clusterShift;
    private volatile AtomicReferenceArray<AtomicLongArray> segs;
    private long clusters;
    private int[] refs = new int[64];
    private long highWater;
    private long usedClusters;
    /** Live entries allocated, and those whose cluster no snapshot shares (kept as counts: read cheaply). */
    private long liveClusters;
    private long liveExclusive;
    private long[] free = new long[64];
    private int freeTop;
    /** Freed clusters waiting for reuse: physical, then the nanoTime they were freed, in pairs. */
    private final List<long[]> pendingFree = new ArrayList<>();
    private final TreeMap<Long, Snap> snapshots = new TreeMap<>();

    ClusterMap(int clusterShift, long sizeBytes) {
        this.clusterShift = clusterShift;
        this.clusters = clustersFor(sizeBytes);
        this.segs = new AtomicReferenceArray<>((int) ((clusters + SEG_SIZE - 1) >>> SEG_SHIFT));
    }

    int clusterShift() {
        return clusterShift;
    }

    long clusterBytes() {
        return 1L << clusterShift;
    }

    /** The live entry of logical cluster {@code c} (lock-free). */
    long entry(long c) {
        AtomicLongArray seg = segs.get((int) (c >>> SEG_SHIFT));
        return seg == null ? 0 : seg.get((int) (c & (SEG_SIZE - 1)));
    }

    /** Marks cluster {@code c} busy if its entry is still {@code expect} (not busy); true when this call did. */
    boolean tryBusy(long c, long expect) {
        if ((expect & BUSY) != 0) {
            return false;
        }
        AtomicLongArray seg = segs.get((int) (c >>> SEG_SHIFT));
        if (seg == null) {
            synchronized (this) {
                seg = segment(c);
            }
        }
        return seg.compareAndSet((int) (c & (SEG_SIZE - 1)), expect, expect | BUSY);
    }

    /** Takes a free physical cluster (count 1); the caller grows the file to cover it. */
    synchronized long allocate() {
        long p = freeTop > 0 ? free[--freeTop] : highWater++;
        if (p >= refs.length) {
            refs = Arrays.copyOf(refs, (int) Math.max(p + 1, refs.length * 2L));
        }
        refs[(int) p] = 1;
        usedClusters++;
        return p;
    }

    /** Gives back a cluster taken by {@link #allocate} and never published (its command failed). */
    synchronized void unallocate(long p) {
        drop(p);
    }

    /**
     * Ends a change of busy cluster {@code c} whose entry was {@code old} (without {@link #BUSY}): the entry becomes
     * {@code newPhys} ({@code -1} = unallocated), the old physical cluster loses the live map's reference.
     */
    synchronized void publish(long c, long old, long newPhys) {
        segment(c).set((int) (c & (SEG_SIZE - 1)), newPhys < 0 ? 0 : newPhys + 1);
        if ((old & PHYS_MASK) != 0) {
            long p = (old & PHYS_MASK) - 1;
            liveClusters--;
            if (refs[(int) p] == 1) {
                liveExclusive--;
            }
            drop(p);
        }
        if (newPhys >= 0) {
            liveClusters++;
            liveExclusive++; // a new cluster: count 1, the live map's alone
        }
    }

    /** Ends a change of busy cluster {@code c} without changing it (the command failed). */
    synchronized void unbusy(long c) {
        AtomicLongArray seg = segment(c);
        int i = (int) (c & (SEG_SIZE - 1));
        long cur = seg.get(i) & ~BUSY;
        long p = (cur & PHYS_MASK) - 1;
        seg.set(i, cur == 0 ? 0 : (cur & ~SHARED) | (refs[(int) p] > 1 ? SHARED : 0));
    }

    /** Grows the live map to {@code sizeBytes} (management thread). */
    synchronized void resize(long sizeBytes) {
        long n = clustersFor(sizeBytes);
        if (n <= clusters) {
            return;
        }
        AtomicReferenceArray<AtomicLongArray> old = segs;
        AtomicReferenceArray<AtomicLongArray> grown = new AtomicReferenceArray<>((int) ((n + SEG_SIZE - 1)
                >>> SEG_SHIFT));
        for (int i = 0; i < old.length(); i++) {
            grown.set(i, old.get(i));
        }
        segs = grown;
        clusters = n;
    }

    // ---- snapshots (management thread; callers hold the volume's I/O when they need a cut) ----

    /** Throws when a command is changing an entry (BUSY). */
    synchronized void checkIdle() {
        for (int si = 0; si < segs.length(); si++) {
            AtomicLongArray seg = segs.get(si);
            for (int i = 0; seg != null && i < SEG_SIZE; i++) {
                if ((seg.get(i) & BUSY) != 0) {
                    throw new IllegalStateException("map change in flight: cluster=" + ((long) si * SEG_SIZE + i));
                }
            }
        }
    }

    /** Freezes the live map as snapshot {@code id}; every allocated live entry becomes {@link #SHARED}. */
    synchronized Snap snapshot(long id, String name, long createdMs, long sizeBytes) {
        long[] map = new long[(int) clusters];
        for (long c = 0; c < clusters; c++) {
            AtomicLongArray seg = segs.get((int) (c >>> SEG_SHIFT));
            if (seg == null) {
                c += SEG_SIZE - 1 - (c & (SEG_SIZE - 1));
                continue;
            }
            int i = (int) (c & (SEG_SIZE - 1));
            long e = seg.get(i);
            long p1 = e & PHYS_MASK;
            if (p1 != 0) {
                map[(int) c] = p1;
                refs[(int) (p1 - 1)]++;
                seg.getAndUpdate(i, x -> (x & PHYS_MASK) == 0 ? x : x | SHARED);
            }
        }
        Snap s = new Snap(id, name, createdMs, sizeBytes, map);
        snapshots.put(id, s);
        liveExclusive = 0; // every allocated live entry is shared now
        return s;
    }

    /** Renames snapshot {@code id}; returns it renamed, or null when there is none. */
    synchronized Snap rename(long id, String name) {
        Snap s = snapshots.get(id);
        if (s == null) {
            return null;
        }
        Snap renamed = new Snap(id, name, s.createdMs(), s.sizeBytes(), s.map());
        snapshots.put(id, renamed);
        return renamed;
    }

    /** Adds a snapshot loaded from the metadata (at open, before any I/O). */
    synchronized void loadSnapshot(Snap s) {
        for (long p1 : s.map()) {
            if (p1 != 0) {
                ref(p1 - 1);
            }
        }
        snapshots.put(s.id(), s);
    }

    /** Sets a live entry loaded from the metadata (at open, before any I/O). */
    synchronized void loadLive(long c, long phys) {
        ref(phys);
        segment(c).set((int) (c & (SEG_SIZE - 1)), phys + 1);
    }

    /**
     * Ends loading: marks shared live entries, and returns the physical clusters below the high-water mark that no
     * map holds (orphans of a crash, or freed before it), which the caller punches and then {@link #addFree}s.
     */
    synchronized long[] finishLoad() {
        refreshShared();
        long[] orphans = new long[0];
        int n = 0;
        for (long p = 0; p < highWater; p++) {
            if (refs[(int) p] == 0) {
                if (n == orphans.length) {
                    orphans = Arrays.copyOf(orphans, Math.max(16, n * 2));
                }
                orphans[n++] = p;
            }
        }
        return Arrays.copyOf(orphans, n);
    }

    /** Makes punched clusters reusable. */
    synchronized void addFree(long[] phys) {
        for (long p : phys) {
            pushFree(p);
        }
    }

    /** Removes snapshot {@code id}: clusters only it held are freed (no data moves). */
    synchronized Snap deleteSnapshot(long id) {
        Snap s = snapshots.remove(id);
        if (s == null) {
            return null;
        }
        for (long p1 : s.map()) {
            if (p1 != 0) {
                drop(p1 - 1);
            }
        }
        refreshShared();
        return s;
    }

    /**
     * Makes the live map a copy of snapshot {@code id} (the caller has stopped I/O on the volume): the old live
     * clusters lose a reference, the snapshot's gain one.
     *
     * @return the new live map (physical + 1 per logical cluster)
     * @throws IllegalStateException when a command is changing an entry
     */
    synchronized long[] rollback(long id) {
        Snap s = snapshots.get(id);
        long[] old = new long[(int) clusters];
        for (long c = 0; c < clusters; c++) {
            long e = entry(c);
            if ((e & BUSY) != 0) {
                throw new IllegalStateException("rollback with I/O in flight: cluster=" + c);
            }
            old[(int) c] = e & PHYS_MASK;
        }
        for (long c = 0; c < clusters; c++) {
            long p1 = c < s.map().length ? s.map()[(int) c] : 0;
            if (p1 != 0) {
                refs[(int) (p1 - 1)]++;
            }
            if (p1 != 0 || old[(int) c] != 0) {
                segment(c).set((int) (c & (SEG_SIZE - 1)), p1);
            }
        }
        for (long p1 : old) {
            if (p1 != 0) {
                drop(p1 - 1);
            }
        }
        refreshShared();
        long[] live = new long[(int) clusters];
        for (long c = 0; c < clusters; c++) {
            live[(int) c] = entry(c) & PHYS_MASK;
        }
        return live;
    }

    synchronized List<Snap> snapshots() {
        return List.copyOf(snapshots.values());
    }

    synchronized Snap snapshotById(long id) {
        return snapshots.get(id);
    }

    /** Bytes of physical clusters held by any map of this volume. */
    synchronized long allocatedBytes() {
        return usedClusters << clusterShift;
    }

    /** Bytes of the live map's allocated clusters (a count kept up to date: cheap). */
    synchronized long liveBytes() {
        return liveClusters << clusterShift;
    }

    /**
     * Bytes of live clusters no snapshot shares: the volume can still take its size minus this from the file system
     * (every other block may need a new cluster: unallocated, or shared and redirected on its next write).
     */
    synchronized long liveExclusiveBytes() {
        return liveExclusive << clusterShift;
    }

    /** Bytes only snapshot {@code s} holds: what deleting it frees. */
    synchronized long exclusiveBytes(Snap s) {
        long n = 0;
        for (long p1 : s.map()) {
            if (p1 != 0 && refs[(int) (p1 - 1)] == 1) {
                n++;
            }
        }
        return n << clusterShift;
    }

    /** Physical clusters ever used: the data file need not be longer than this. */
    synchronized long highWater() {
        return highWater;
    }

    /**
     * Freed clusters whose grace has passed and whose freeing is durable ({@code durableSinceNs}: the nanoTime of
     * the start of the last synced map commit): the caller punches them, then {@link #addFree}s them.
     */
    synchronized long[] takeReclaimable(long durableSinceNs) {
        long now = System.nanoTime();
        long[] out = new long[0];
        int n = 0;
        for (var it = pendingFree.iterator(); it.hasNext(); ) {
            long[] f = it.next();
            if (f[1] < durableSinceNs && now - f[1] >= reuseGraceNs) {
                if (n == out.length) {
                    out = Arrays.copyOf(out, Math.max(16, n * 2));
                }
                out[n++] = f[0];
                it.remove();
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** Number of freed clusters not yet reusable. */
    synchronized int pendingFreeCount() {
        return pendingFree.size();
    }

    // ---- internals (monitor held) ----

    private AtomicLongArray segment(long c) {
        int s = (int) (c >>> SEG_SHIFT);
        AtomicLongArray seg = segs.get(s);
        if (seg == null) {
            seg = new AtomicLongArray(SEG_SIZE);
            segs.set(s, seg);
        }
        return seg;
    }

    private void ref(long p) {
        if (p >= refs.length) {
            refs = Arrays.copyOf(refs, (int) Math.max(p + 1, refs.length * 2L));
        }
        if (refs[(int) p]++ == 0) {
            usedClusters++;
        }
        highWater = Math.max(highWater, p + 1);
    }

    private void drop(long p) {
        if (--refs[(int) p] == 0) {
            usedClusters--;
            pendingFree.add(new long[]{p, System.nanoTime()});
        }
    }

    private void pushFree(long p) {
        if (freeTop == free.length) {
            free = Arrays.copyOf(free, free.length * 2);
        }
        free[freeTop++] = p;
    }

    /** Re-derives {@link #SHARED} on every live entry from the counts (after counts fell). */
    private void refreshShared() {
        liveClusters = 0;
        liveExclusive = 0;
        for (long c = 0; c < clusters; c++) {
            AtomicLongArray seg = segs.get((int) (c >>> SEG_SHIFT));
            if (seg == null) {
                c += SEG_SIZE - 1 - (c & (SEG_SIZE - 1));
                continue;
            }
            int i = (int) (c & (SEG_SIZE - 1));
            long e = seg.get(i);
            long p1 = e & PHYS_MASK;
            if (p1 != 0) {
                boolean shared = refs[(int) (p1 - 1)] > 1;
                seg.getAndUpdate(i, x -> shared ? x | SHARED : x & ~SHARED);
                liveClusters++;
                liveExclusive += shared ? 0 : 1;
            }
        }
    }

    private long clustersFor(long sizeBytes) {
        return (sizeBytes + (1L << clusterShift) - 1) >>> clusterShift;
    }
}
