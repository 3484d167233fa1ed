package io.rdmablock.node.target;

import io.rdmablock.node.store.BlockQueue;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The Read Snapshot commands (82h, vendor specific, docs/wire-protocol.md section 7.2) of one I/O queue: reads of a
 * snapshot's image from the store's read-only view of it ({@link io.rdmablock.node.store.Snapshots#openById}), for
 * {@code rdmablock export --snapshot} (docs/snapshots.md, "Export").
 *
 * <p>The view is opened for the first command naming a snapshot and kept until the queue closes (or a command names
 * another snapshot while none is in flight): opening takes the store's lock and copies the frozen map (O(clusters)),
 * so it runs on one node-wide worker thread, never on the poller; commands that arrive meanwhile wait here (in flight
 * for the queue) and are started when it is open. A command on an open view costs what a READ costs: one store read
 * of the snapshot's clusters (the map is in memory, no RocksDB read, no lock, nothing allocated). The view is the
 * store's: a delete of the snapshot is refused while it is open ({@code IllegalStateException}, retried by the node
 * at its next heartbeats), so no cluster of it is freed under a read.
 *
 * <p>Statuses: snapshot id 0 (CDW14-15), or one the node does not hold, Invalid Field in Command (0/02h, logged with
 * the id); a range past the snapshot's size LBA Out of Range (0/80h); a command naming another snapshot while reads
 * of one are in flight on the queue Command Sequence Error (0/0Ch); a failed store read Unrecovered Read Error
 * (2/81h). One per queue, poller thread only (the worker only builds the view and its store queue).
 */
final class SnapshotReads implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotReads.class);
    private static final ExecutorService OPENER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "snapshot-view");
        t.setDaemon(true);
        return t;
    });
    private static final int BATCH = 32;
    private static final int ENXIO = 6;
    static final int INVALID_FIELD = NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD);
    static final int LBA_OUT_OF_RANGE = NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE);
    static final int SEQUENCE_ERROR = NvmeStatus.generic(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR);

    /** A view opened by the worker, or why not ({@code status} != 0). */
    private record Opened(long id, StoreVolume view, BlockQueue queue, int status) {
    }

    private final VolumeStore store;
    private final String volumeId;
    private final int qid;
    private final Request[] byIndex;
    private final Request[] waiting;
    private int waitingCount;
    private final long[] reapUserData = new long[BATCH];
    private final int[] reapResult = new int[BATCH];
    private long viewId;
    private StoreVolume view;
    private BlockQueue queue;
    private CompletableFuture<Opened> opening;
    private long openingId;
    private boolean closed;

    SnapshotReads(VolumeStore store, String volumeId, int qid, int entries) {
        this.store = store;
        this.volumeId = volumeId;
        this.qid = qid;
        this.byIndex = new Request[entries];
        this.waiting = new Request[entries];
    }

    /** The snapshot id of a Read Snapshot command: CDW14 bits 31:0, CDW15 bits 63:32. */
    static long snapshotId(Request r) {
        return (SqeDescriptor.cdw(r.sqe, 14) & 0xFFFF_FFFFL) | ((long) SqeDescriptor.cdw(r.sqe, 15) << 32);
    }

    /**
     * Starts a checked Read Snapshot command (range within the volume, data descriptor in place).
     *
     * @return {@link VolumeIo#IN_FLIGHT} (handed back by {@link #poll}), or its status when answered at once
     */
    int start(Request r) {
        long id = snapshotId(r);
        if (id < 1 || closed) {
            LOG.warn("read snapshot refused: volume={}, qid={}, cid={}, snapshot id={}, min=1", volumeId, qid, r.cid,
                    id);
            return INVALID_FIELD;
        }
        if (view != null && viewId == id) {
            return submit(r);
        }
        if (opening != null) {
            if (openingId != id) {
                return sequenceError(r, id, openingId);
            }
            waiting[waitingCount++] = r;
            return VolumeIo.IN_FLIGHT;
        }
        if (queue != null && queue.inFlight() > 0) {
            return sequenceError(r, id, viewId);
        }
        StoreVolume oldView = view;
        BlockQueue oldQueue = queue;
        view = null;
        queue = null;
        viewId = 0;
        openingId = id;
        int entries = byIndex.length;
        opening = CompletableFuture.supplyAsync(() -> open(oldView, oldQueue, id, entries), OPENER);
        waiting[waitingCount++] = r;
        return VolumeIo.IN_FLIGHT;
    }

    private int sequenceError(Request r, long id, long busy) {
        LOG.warn("read snapshot refused: volume={}, qid={}, cid={}, snapshot id={} while reads of snapshot id={} are "
                + "in flight on this queue (one snapshot per queue at a time)", volumeId, qid, r.cid, id, busy);
        return SEQUENCE_ERROR;
    }

    private int submit(Request r) {
        long end = r.storeOffsetBytes + r.storeLengthBytes;
        if (end > view.sizeBytes()) {
            LOG.warn("read snapshot out of range: volume={}, snapshot id={}, qid={}, cid={}, offsetBytes={}, "
                    + "lengthBytes={}, snapshotBytes={}", volumeId, viewId, qid, r.cid, r.storeOffsetBytes,
                    r.storeLengthBytes, view.sizeBytes());
            return LBA_OUT_OF_RANGE;
        }
        try {
            queue.submitRead(view, r.storeOffsetBytes, r.data, r.index);
        } catch (RuntimeException e) {
            LOG.warn("read snapshot submit failed: volume={}, snapshot id={}, qid={}, cid={}: {}", volumeId, viewId,
                    qid, r.cid, e.toString());
            return NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR);
        }
        byIndex[r.index] = r;
        return VolumeIo.IN_FLIGHT;
    }

    /** Worker thread: closes the queue's previous view, opens snapshot {@code id}'s and a store queue for it. */
    private Opened open(StoreVolume oldView, BlockQueue oldQueue, long id, int entries) {
        release(oldView, oldQueue);
        StoreVolume v;
        try {
            v = store.snapshots().openById(volumeId, id);
        } catch (NoSuchElementException | IllegalArgumentException e) {
            LOG.warn("read snapshot: no such snapshot on this node: volume={}, snapshot id={}, qid={}: {}", volumeId,
                    id, qid, e.getMessage());
            return new Opened(id, null, null, INVALID_FIELD);
        } catch (RuntimeException e) {
            LOG.warn("read snapshot: view not opened: volume={}, snapshot id={}, qid={}: {}", volumeId, id, qid,
                    e.toString());
            return new Opened(id, null, null, NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
        }
        try {
            BlockQueue bq = store.newQueue(entries);
            LOG.info("snapshot view opened for reads: volume={}, snapshot id={}, view={}, sizeBytes={}, qid={}",
                    volumeId, id, v.id(), v.sizeBytes(), qid);
            return new Opened(id, v, bq, 0);
        } catch (RuntimeException e) {
            store.snapshots().close(v);
            LOG.warn("read snapshot: store queue not opened: volume={}, snapshot id={}, qid={}: {}", volumeId, id,
                    qid, e.toString());
            return new Opened(id, null, null, NvmeStatus.generic(NvmeStatus.SC_INTERNAL_ERROR));
        }
    }

    private void release(StoreVolume v, BlockQueue bq) {
        try {
            if (bq != null) {
                bq.close();
            }
        } finally {
            if (v != null) {
                store.snapshots().close(v);
                LOG.info("snapshot view closed: volume={}, view={}, qid={}", volumeId, v.id(), qid);
            }
        }
    }

    /** Hands back completed commands (and those that waited for a view that could not be opened). Poller thread. */
    int poll(VolumeIo.Completions sink, int max) {
        int work = 0;
        CompletableFuture<Opened> f = opening;
        if (f != null && f.isDone()) {
            Opened o = f.join(); // open() never throws
            opening = null;
            if (o.status == 0) {
                view = o.view;
                queue = o.queue;
                viewId = o.id;
            }
            for (int i = 0; i < waitingCount; i++) {
                Request r = waiting[i];
                waiting[i] = null;
                int status = o.status != 0 ? o.status : submit(r);
                if (status != VolumeIo.IN_FLIGHT) {
                    sink.completed(r, status);
                    work++;
                }
            }
            waitingCount = 0;
        }
        BlockQueue bq = queue;
        if (bq == null || bq.inFlight() == 0) {
            return work;
        }
        int m = bq.reap(reapUserData, reapResult, Math.min(max, BATCH));
        for (int k = 0; k < m; k++) {
            int index = (int) reapUserData[k];
            Request r = byIndex[index];
            byIndex[index] = null;
            int result = reapResult[k];
            int status = 0;
            if (result < 0) {
                status = -result == ENXIO ? NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE)
                        : NvmeStatus.of(NvmeStatus.SCT_MEDIA, NvmeStatus.SC_UNRECOVERED_READ_ERROR, false);
                LOG.warn("read snapshot failed: volume={}, snapshot id={}, qid={}, cid={}, offsetBytes={}, errno={}",
                        volumeId, viewId, qid, r.cid, r.storeOffsetBytes, -result);
            }
            sink.completed(r, status);
        }
        return work + m;
    }

    /** Commands started and not handed back yet (waiting for the view, or reading). */
    int inFlight() {
        BlockQueue bq = queue;
        return waitingCount + (bq == null ? 0 : bq.inFlight());
    }

    /**
     * Closes the store queue (waiting, bounded, for reads in flight: they may still use the queue's buffers) and,
     * on the worker, the view (so a delete of the snapshot is allowed again). A view still being opened is closed
     * once it is. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        java.util.Arrays.fill(byIndex, null);
        java.util.Arrays.fill(waiting, null);
        waitingCount = 0;
        CompletableFuture<Opened> f = opening;
        opening = null;
        if (f != null) {
            f.thenAcceptAsync(o -> release(o.view, o.queue), OPENER);
        }
        BlockQueue bq = queue;
        StoreVolume v = view;
        queue = null;
        view = null;
        if (bq != null) {
            bq.close();
        }
        if (v != null) {
            OPENER.execute(() -> release(v, null));
        }
    }
}
