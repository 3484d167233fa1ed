package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;

/**
 * The missed-regions bitmaps of one {@link ReplicaSet}'s stale copies and their flusher. A bitmap is one
 * {@link DirtyRegions} per copy, file {@code <bitmapDir>/<volumeId>.dirty-<nodeId>}, regions of
 * {@link DirtyRegions#DEFAULT_REGION_BYTES} over the volume's {@code volumeBytes}, created durably: loaded (or
 * full) at start, full for a copy added, empty for a copy that was in sync until now. The flusher thread
 * ({@code replica-bitmaps-<volumeId>}, a daemon) writes every bitmap marked since its last flush, so that the data
 * path, waiting for the durable generation it needs, can go on. Woken by {@link #wake} (a bitmap was marked, or the
 * set closed); otherwise it looks again every 100 ms, and 100 ms after a failed write. It stops when the set is
 * closed. Logs under {@link ReplicaSet}'s category.
 */
public final class MissedBitmaps {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSet.class);

    private final ReplicaSet set;
    private final String volumeId;
    private final long volumeBytes;
    private final Path bitmapDir;
    private final Thread flusher;

    public MissedBitmaps(ReplicaSet set, String volumeId, long volumeBytes, Path bitmapDir) {
        this.set = set;
        this.volumeId = volumeId;
        this.volumeBytes = volumeBytes;
        this.bitmapDir = bitmapDir;
        this.flusher = new Thread(this::flushLoop, "replica-bitmaps-" + volumeId);
        this.flusher.setDaemon(true);
    }

    public void start() {
        flusher.start();
    }

    /** Unparks the flusher (a bitmap was marked, or the set closed). Any thread. */
    public void wake() {
        LockSupport.unpark(flusher);
    }

    /** A stale copy's bitmap at start: the persisted one, or all regions when nothing proves what it missed. */
    public DirtyRegions loadOrFull(String nodeId, long epoch) {
        DirtyRegions d = DirtyRegions.load(bitmapFile(nodeId), volumeBytes);
        if (d == null) {
            LOG.warn("no valid missed-regions bitmap for stale copy: volume={}, node={}: every region marked (its "
                    + "resync must be full)", volumeId, nodeId);
            d = DirtyRegions.create(bitmapFile(nodeId), DirtyRegions.DEFAULT_REGION_BYTES, volumeBytes, epoch);
            d.markAll();
            d.flush();
        }
        return d;
    }

    /** Every region marked, durable: nothing proves what the copy holds. */
    public DirtyRegions full(String nodeId, long epoch) {
        DirtyRegions d = DirtyRegions.create(bitmapFile(nodeId), DirtyRegions.DEFAULT_REGION_BYTES, volumeBytes, epoch);
        d.markAll();
        d.flush();
        return d;
    }

    /** An empty bitmap, durable, for a copy that got every write until now. */
    public DirtyRegions fresh(String nodeId, long sinceEpoch) {
        DirtyRegions d = DirtyRegions.create(bitmapFile(nodeId), DirtyRegions.DEFAULT_REGION_BYTES, volumeBytes,
                sinceEpoch);
        d.flush();
        return d;
    }

    private Path bitmapFile(String nodeId) {
        return bitmapDir.resolve(volumeId + ".dirty-" + nodeId);
    }

    private void flushLoop() {
        while (!set.closed()) {
            boolean any = false;
            for (ReplicaSet.Copy c : set.view().copies()) {
                DirtyRegions d = c.missed;
                if (d != null && d.needsFlush()) {
                    try {
                        d.flush();
                    } catch (RuntimeException e) {
                        LOG.error("missed-regions bitmap not written (writes to that copy's regions wait): volume={},"
                                + " node={}: {}", volumeId, c.nodeId, e.toString());
                        LockSupport.parkNanos(set, 100_000_000L);
                    }
                    any = true;
                }
            }
            if (!any) {
                LockSupport.parkNanos(set, 100_000_000L);
            }
        }
    }
}
