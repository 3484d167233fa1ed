package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.mgmt.client.VerifyDifference;
import io.rdmablock.mgmt.client.VerifyReport;
import io.rdmablock.mgmt.client.VerifyState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One {@code volume verify} run on the primary (docs/resync.md, "Verify"), on its own thread: reads every region
 * from the local store and from each secondary in sync at the start, through an association of its own
 * ({@link CopyChannel}: NVMe READ over the fabric, epoch-fenced), under the {@link RegionGate} (the reads of a region
 * see the same writes), throttled by the node's background budget, and compares the CRC32C of each 64 KiB region. Its
 * {@link #report} is running (checkedBytes so far), then done (the first {@value VerifyReport#MAX_DIFFERENCES}
 * differing regions and their count), or failed (a copy unreachable or dropped, a read error, this node no longer
 * primary).
 */
final class Verify implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Verify.class);

    private final ReplicaSet set;
    private final String id;
    private final Resyncs.Context ctx;
    private final RegionWalk walk;
    private final List<VerifyDifference> differences = new ArrayList<>();
    private volatile boolean stopped;
    private volatile VerifyReport report;
    private List<String> nodeIds = List.of();
    private long differing;
    /** The snapshot whose copies are compared (docs/snapshots.md, "Verify of a snapshot"); 0 = the live volume. */
    private final long snapshotId;

    Verify(ReplicaSet set, String id, Resyncs.Context ctx, long snapshotId) {
        this.set = set;
        this.id = id;
        this.ctx = ctx;
        this.snapshotId = snapshotId;
        this.walk = new RegionWalk(set, ctx.budget(), () -> stopped || set.deposed() || set.closed(), ctx.boundNs());
        this.report = new VerifyReport(id, VerifyState.RUNNING, List.of(), 0, set.volumeBytes(), List.of(), 0, null);
    }

    void stop() {
        stopped = true;
    }

    /** The run as far as it got. */
    VerifyReport report() {
        VerifyReport r = report;
        if (r.state() == VerifyState.RUNNING) {
            return new VerifyReport(id, VerifyState.RUNNING, r.nodeIds(), walk.doneBytes(), r.totalBytes(), List.of(),
                    0, null);
        }
        return r;
    }

    @Override
    public void run() {
        ReplicaSet.View v = set.view();
        List<ReplicaSet.Copy> copies = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        ids.add(ctx.nodeId());
        for (ReplicaSet.Copy c : v.copies()) {
            if (!c.removed && v.isInSync(c.index)) {
                copies.add(c);
                ids.add(c.nodeId);
            }
        }
        nodeIds = List.copyOf(ids);
        report = new VerifyReport(id, VerifyState.RUNNING, nodeIds, 0, set.volumeBytes(), List.of(), 0, null);
        LOG.info("verify started: volume={}, run={}, copies={}, snapshot id={}", set.volumeId(), id, nodeIds,
                snapshotId);
        List<CopyChannel> channels = new ArrayList<>();
        try (Arena arena = Arena.ofConfined(); LocalStore local = openLocal(); walk) {
            if (snapshotId != 0 && local.sizeBytes() != set.volumeBytes()) {
                throw new IOException("snapshot id " + snapshotId + " is " + local.sizeBytes() + " bytes, the volume "
                        + set.volumeBytes() + " (grown since): a verify of a snapshot of another size is not built");
            }
            MemorySegment own = arena.allocate(walk.regionBytes(), 4096);
            for (ReplicaSet.Copy c : copies) {
                channels.add(CopyChannel.open(c, (int) walk.regionBytes(), ctx.timeoutNs(), ctx.openTimeoutNs()));
            }
            walk.open();
            CRC32C crc = new CRC32C();
            walk.run(r -> true, (r, offset, length) -> compare(copies, channels, local, own, crc, offset, length));
            report = new VerifyReport(id, VerifyState.DONE, nodeIds, walk.doneBytes(), set.volumeBytes(),
                    differences, differing, null);
            LOG.info("verify done: volume={}, run={}, {} differing regions", set.volumeId(), id, differing);
        } catch (Exception e) {
            String why = e instanceof RegionWalk.StoppedException ? "stopped (this node is no longer primary)"
                    : e.toString();
            report = new VerifyReport(id, VerifyState.FAILED, nodeIds, walk.doneBytes(), set.volumeBytes(),
                    differences, differing, why);
            LOG.warn("verify failed: volume={}, run={}: {}", set.volumeId(), id, why);
        } finally {
            channels.forEach(CopyChannel::close);
        }
    }

    /** The primary's own copy: the live volume, or its snapshot's view (this node holds no such snapshot: fails). */
    private LocalStore openLocal() throws IOException {
        if (snapshotId == 0) {
            return ctx.local().open();
        }
        try {
            return ctx.local().openSnapshot(snapshotId);
        } catch (java.util.NoSuchElementException e) {
            throw new IOException("copy on node " + ctx.nodeId() + " (the primary) does not hold snapshot id "
                    + snapshotId, e);
        }
    }

    private void compare(List<ReplicaSet.Copy> copies, List<CopyChannel> channels, LocalStore local,
                         MemorySegment own, CRC32C crc, long offset, int length) throws IOException {
        local.read(offset, own.asSlice(0, length));
        long mine = crc(crc, own, length);
        List<String> differ = null;
        ReplicaSet.View v = set.view();
        for (int i = 0; i < copies.size(); i++) {
            ReplicaSet.Copy c = copies.get(i);
            if (!v.isInSync(c.index)) {
                throw new IOException("copy " + c.nodeId + " left the in-sync set during the run");
            }
            CopyChannel ch = channels.get(i);
            if (snapshotId == 0) {
                ch.io(CopyChannel.READ, ctx.nsid(), v.epoch(), offset, length, ctx.lbaSize());
            } else {
                try {
                    ch.io(CopyChannel.READ_SNAPSHOT, ctx.nsid(), v.epoch(), offset, length, ctx.lbaSize(), snapshotId);
                } catch (IOException e) { // Invalid Field: the copy holds no snapshot of that id
                    throw new IOException("copy on node " + c.nodeId + ", snapshot id " + snapshotId + ": "
                            + e.getMessage(), e);
                }
            }
            if (crc(crc, ch.buffer(), length) != mine) {
                if (differ == null) {
                    differ = new ArrayList<>();
                }
                differ.add(c.nodeId);
            }
        }
        if (differ != null) {
            differing++;
            if (differences.size() < VerifyReport.MAX_DIFFERENCES) {
                differences.add(new VerifyDifference(offset, length, differ));
            }
        }
    }

    private static long crc(CRC32C crc, MemorySegment seg, int length) {
        crc.reset();
        crc.update(seg.asSlice(0, length).asByteBuffer());
        return crc.getValue();
    }
}
