package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.mgmt.client.ResyncProgress;
import io.rdmablock.mgmt.client.VerifyReport;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The resyncs and the verify run of one volume's primary (docs/resync.md): at each {@link #tick} (every
 * {@link ReplicaSet#apply}, i.e. heartbeat) a {@link Resync} thread is started for each copy the set shows neither in
 * sync nor being resynced, unless its last attempt ended less than {@link Context#retryNs} ago; one at a time per
 * copy. {@link #verify} starts a {@link Verify} run for a new run id. Thread-safe.
 */
public final class Resyncs implements AutoCloseable {
    /**
     * What resyncs and verifies of a node share.
     *
     * @param nodeId      this node's id (first of a verify's copies)
     * @param budget      the node's background budget (docs/qos.md), shared by every resync and verify
     * @param local       opens a reader of the primary's own copy
     * @param nsid        the namespace (1)
     * @param lbaSize     the volume's block size, bytes
     * @param timeoutNs   bound of each command to a copy and of an association's set-up
     * @param openTimeoutNs least bound of an association's set-up ({@code rdmablock.replica.openTimeoutMs})
     * @param retryNs     pause before a failed or unreachable copy's resync is tried again ({@code --resync-retry-ms})
     * @param boundNs     longest wait for the writes in flight on a region (or of the host queues at the start)
     * @param copiedBytes bytes copied by the node's resyncs (metric {@code rdmablock_node_resync_bytes_total})
     */
    public record Context(String nodeId, io.rdmablock.node.qos.BackgroundBudget budget, LocalStore.Opener local, int nsid, int lbaSize,
                          long timeoutNs, long openTimeoutNs, long retryNs, long boundNs, LongAdder copiedBytes) {
    }

    private record Running(Resync resync, Thread thread) {
    }

    private final ReplicaSet set;
    private final Context ctx;
    private final Map<ReplicaSet.Copy, Running> running = new ConcurrentHashMap<>();
    private final Map<String, Long> retryAt = new HashMap<>();
    private volatile Verify verify;
    private String lastVerifyId;
    private volatile boolean closed;

    public Resyncs(ReplicaSet set, Context ctx) {
        this.set = set;
        this.ctx = ctx;
    }

    /** Starts the resyncs that are due. */
    public synchronized void tick() {
        if (closed || set.closed() || set.deposed()) {
            return;
        }
        ReplicaSet.View v = set.view();
        long now = System.nanoTime();
        for (ReplicaSet.Copy c : v.copies()) {
            if (c.removed || v.isInSync(c.index)) {
                continue;
            }
            Running r = running.get(c);
            if (r != null && r.thread.isAlive()) {
                continue;
            }
            if (r != null) {
                running.remove(c);
                if (r.resync.outcome() != Resync.Outcome.IN_SYNC) {
                    retryAt.put(c.nodeId, now + ctx.retryNs());
                }
            }
            Long at = retryAt.get(c.nodeId);
            if (at != null && now - at < 0) {
                continue;
            }
            retryAt.remove(c.nodeId);
            Resync resync = new Resync(set, c, ctx);
            Thread t = new Thread(resync, "resync-" + set.volumeId() + "-" + c.nodeId);
            t.setDaemon(true);
            running.put(c, new Running(resync, t));
            t.start();
        }
    }

    /** A live write forwarded to syncing copy {@code c} failed: its resync aborts. Any thread; never blocks. */
    public void syncFailed(ReplicaSet.Copy c, String why) {
        Running r = running.get(c);
        if (r != null) {
            r.resync.abort(why);
        }
    }

    /** Stops the resync of {@code c}, if any (the copy was removed). */
    public void stop(ReplicaSet.Copy c) {
        Running r = running.get(c);
        if (r != null) {
            r.resync.stop();
        }
    }

    /** The running resyncs' progress (a heartbeat's {@code VolumeReport.resyncs}). */
    public List<ResyncProgress> progress() {
        List<ResyncProgress> out = new ArrayList<>();
        for (Running r : running.values()) {
            ResyncProgress p = r.thread.isAlive() ? r.resync.progress() : null;
            if (p != null) {
                out.add(p);
            }
        }
        return out;
    }

    /** True while a resync of {@code nodeId} runs. */
    public boolean resyncing(String nodeId) {
        return running.values().stream().anyMatch(r -> r.thread.isAlive() && r.resync.copy().nodeId.equals(nodeId));
    }

    /** Starts verify run {@code id} of the live volume; see {@link #verify(String, Long)}. */
    public void verify(String id) {
        verify(id, null);
    }

    /**
     * Starts verify run {@code id} unless it is the last one started (null: none asked for); with {@code snapshotId}
     * it compares that snapshot's copies (docs/snapshots.md, "Verify of a snapshot").
     */
    public synchronized void verify(String id, Long snapshotId) {
        if (id == null || id.equals(lastVerifyId) || closed) {
            return;
        }
        lastVerifyId = id;
        Verify old = verify;
        if (old != null) {
            old.stop();
        }
        Verify run = new Verify(set, id, ctx, snapshotId == null ? 0 : snapshotId);
        verify = run;
        Thread t = new Thread(run, "verify-" + set.volumeId());
        t.setDaemon(true);
        t.start();
    }

    /** The last verify run's report (a heartbeat's {@code VolumeReport.verify}), or null. */
    public VerifyReport verifyReport() {
        Verify v = verify;
        return v == null ? null : v.report();
    }

    /** Stops every resync and verify at once (role change, deposition, deletion). */
    @Override
    public void close() {
        closed = true;
        for (Running r : running.values()) {
            r.resync.stop();
        }
        Verify v = verify;
        if (v != null) {
            v.stop();
        }
    }
}
