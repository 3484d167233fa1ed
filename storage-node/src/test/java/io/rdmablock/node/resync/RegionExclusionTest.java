package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.node.replication.ReplicatedWrites;
import io.rdmablock.node.replication.Write;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import static io.rdmablock.node.resync.ResyncFixture.REGION;
import static io.rdmablock.node.resync.ResyncFixture.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A live write and the copy of the same region, in both orders (docs/resync.md "No copied region older than a
 * write"): the target always ends with the newer data. Deterministic: the copier is stopped in its local read, the
 * write's local completion is given by the test.
 */
class RegionExclusionTest {
    private static final int R = 3;
    @TempDir
    Path dir;
    private ResyncFixture f;
    private ReplicatedWrites w;
    private final Arena arena = Arena.ofShared();
    private final Map<Integer, Integer> completed = new ConcurrentHashMap<>();
    private final Map<Integer, Boolean> startedLocal = new ConcurrentHashMap<>();

    @AfterEach
    void close() {
        if (w != null) {
            w.close();
        }
        if (f != null) {
            f.close();
        }
        arena.close();
    }

    private ReplicaSet start() {
        f = new ResyncFixture(dir);
        ReplicaSet set = f.start(false); // n2 stale, no bitmap: full
        w = new ReplicatedWrites(set, 4, 4, 2_000_000_000L, null, (slot, status) -> completed.put(slot, status),
                (slot, nowNs) -> {
                    startedLocal.put(slot, true);
                    return io.rdmablock.node.target.VolumeIo.IN_FLIGHT;
                });
        return set;
    }

    /** A host write of one region's worth of new bytes at region {@code region}, in a buffer of its own. */
    private MemorySegment write(int slot, int region) {
        MemorySegment buf = arena.allocate(REGION, 4096);
        for (int i = 0; i < REGION; i++) {
            buf.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (0x70 + i));
        }
        Write c = w.slot(slot);
        MemorySegment sqe = arena.allocate(io.rdmablock.rdma.fabric.SqeDescriptor.LENGTH);
        io.rdmablock.rdma.fabric.SqeDescriptor.opcode(sqe, CopyChannel.WRITE);
        io.rdmablock.rdma.fabric.SqeDescriptor.nsid(sqe, 1);
        long slba = (long) region * REGION / ResyncFixture.LBA;
        io.rdmablock.rdma.fabric.SqeDescriptor.slba(sqe, slba);
        io.rdmablock.rdma.fabric.SqeDescriptor.cdw(sqe, 12, REGION / ResyncFixture.LBA - 1);
        c.sqe = sqe;
        c.offsetBytes = (long) region * REGION;
        c.lengthBytes = REGION;
        c.dataAddress = buf.address();
        c.dataLength = REGION;
        c.rkey = 7;
        return buf;
    }

    /** The local copy executes the write: the primary's store gets the new bytes, then it completes. */
    private void local(int slot, int region, MemorySegment buf) {
        MemorySegment.copy(buf, 0, MemorySegment.ofArray(f.primary), (long) region * REGION, REGION);
        w.localDone(slot, 0, System.nanoTime());
    }

    private void pollFor(long ms) {
        long until = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < until) {
            w.poll(System.nanoTime());
            Thread.onSpinWait();
        }
    }

    @Test
    void aWriteToTheRegionBeingCopiedIsHeldUntilTheCopyCompletedOnTheTarget() {
        ReplicaSet set = start();
        f.blockReadAt = (long) R * REGION;
        f.readGate = new CountDownLatch(1);
        set.resyncs(f.resyncs);
        await(() -> f.readBlocked.getCount() == 0, 10_000, "copier in region R", () -> w.poll(System.nanoTime()));
        assertTrue(set.view().isSyncing(0));
        // the copier is inside region R (about to read the old bytes); the host writes R now
        MemorySegment buf = write(1, R);
        assertEquals(0, w.begin(1, System.nanoTime()));
        assertTrue(w.held(1), "held: a write to the region being copied");
        pollFor(100);
        assertFalse(startedLocal.containsKey(1), "nothing started locally while held");
        assertEquals(0, f.copies.get("n2").queues.stream().filter(q -> !q.copier).mapToInt(q -> q.forwarded.get())
                .sum(), "nothing forwarded while held");
        f.readGate.countDown(); // the copier reads the old bytes and writes them to the target
        await(() -> startedLocal.containsKey(1), 10_000, "write released after the copy of R",
                () -> w.poll(System.nanoTime()));
        local(1, R, buf);
        await(() -> completed.containsKey(1), 10_000, "write completed", () -> w.poll(System.nanoTime()));
        assertEquals(0, completed.get(1));
        await(() -> set.view().isInSync(0), 10_000, "n2 in sync", () -> w.poll(System.nanoTime()));
        assertTrue(f.regionEquals(f.copies.get("n2"), R), "the target has the newer data in R");
        assertArrayEquals(f.primary, f.copies.get("n2").data);
    }

    @Test
    void theCopyOfARegionWaitsForTheWritesToItInFlight() {
        ReplicaSet set = start();
        f.blockReadAt = 0; // hold the copier in region 0 until the write to R is in flight
        f.readGate = new CountDownLatch(1);
        f.copies.get("n2").holdForwards = true;
        set.resyncs(f.resyncs);
        await(() -> f.readBlocked.getCount() == 0, 10_000, "copier in region 0", () -> w.poll(System.nanoTime()));
        MemorySegment buf = write(2, R);
        assertEquals(0, w.begin(2, System.nanoTime()));
        assertFalse(w.held(2), "R is not being copied: admitted");
        assertTrue(startedLocal.containsKey(2), "admitted at once: started locally from within begin");
        pollFor(20);
        assertEquals(1, set.gate().inFlight(R), "counted in flight");
        f.readGate.countDown(); // the copier goes on to R and must wait there
        pollFor(300);
        assertFalse(f.localReads.contains((long) R * REGION), "the copier read R while a write to it was in flight");
        local(2, R, buf); // the primary has the new bytes; the forward to n2 (landed there) is answered now
        f.copies.get("n2").releaseForwards();
        await(() -> completed.containsKey(2), 10_000, "write completed", () -> w.poll(System.nanoTime()));
        await(() -> set.view().isInSync(0), 10_000, "n2 in sync", () -> w.poll(System.nanoTime()));
        assertTrue(f.localReads.contains((long) R * REGION));
        assertTrue(f.regionEquals(f.copies.get("n2"), R), "the target has the newer data in R");
        assertArrayEquals(f.primary, f.copies.get("n2").data);
    }

    @Test
    void liveWritesDuringAResyncLandOnTheTargetAndTheirFailureAbortsItNotTheWrite() {
        ReplicaSet set = start();
        f.blockReadAt = 0;
        f.readGate = new CountDownLatch(1);
        set.resyncs(f.resyncs);
        await(() -> f.readBlocked.getCount() == 0, 10_000, "copier in region 0", () -> w.poll(System.nanoTime()));
        MemorySegment buf = write(0, 9);
        assertEquals(0, w.begin(0, System.nanoTime()));
        local(0, 9, buf);
        await(() -> completed.containsKey(0), 10_000, "write completed", () -> w.poll(System.nanoTime()));
        assertTrue(f.regionEquals(f.copies.get("n2"), 9), "forwarded to the syncing copy");
        // now the copy fails a forwarded write: the host's write succeeds, the resync aborts
        f.copies.get("n2").queues.stream().filter(q -> !q.copier).forEach(q -> q.closed = true);
        MemorySegment buf2 = write(1, 12);
        assertEquals(0, w.begin(1, System.nanoTime()));
        local(1, 12, buf2);
        await(() -> completed.containsKey(1), 10_000, "second write", () -> w.poll(System.nanoTime()));
        assertEquals(0, completed.get(1), "not failed by the syncing copy");
        f.readGate.countDown();
        await(() -> !f.resyncs.resyncing("n2"), 10_000, "resync end", () -> w.poll(System.nanoTime()));
        assertTrue(f.calls.contains("stale n2@5"), String.valueOf(f.calls));
        assertFalse(set.view().isInSync(0));
        assertEquals(16, set.view().copies()[0].missed().markedCount(), "bits kept");
    }
}
