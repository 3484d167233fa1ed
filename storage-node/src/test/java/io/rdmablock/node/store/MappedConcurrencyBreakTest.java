package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two pollers (own queues) write interleaved 4 KiB blocks of the same 64 KiB clusters (thread t owns blocks with
 * index % 2 == t) while a management thread creates and deletes snapshots; one big (2 MiB) write per round goes
 * through a capacity-1 queue (progressive issue). At the end every block must hold its owner's last data, and the
 * space accounting must equal what the maps hold; after a reopen too.
 */
class MappedConcurrencyBreakTest {
    private static final int CLUSTER = 64 << 10;
    private static final int SIZE = 4 << 20;
    private static final int BLOCK = 4096;
    private static final int BLOCKS = SIZE / BLOCK;

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void interleavedWritersAndSnapshotChurnKeepEveryBlock(IoBackend backend) throws Exception {
        StoreOptions opts = StoreTestSupport.options(backend).withClusterBytes(CLUSTER);
        Path dir = StoreTestSupport.freshDir("break-conc");
        long[] seeds = new long[BLOCKS]; // last seed written per block (0 = never)
        try (Arena arena = Arena.ofShared()) {
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.create(spec("v", SIZE, BLOCK));
                java.util.Arrays.fill(seeds, 0);
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    int owner = t;
                    threads.add(Thread.ofPlatform().start(() -> {
                        try (Arena a = Arena.ofConfined()) {
                            BlockQueue q = store.newQueue(8);
                            MemorySegment[] bufs = new MemorySegment[8];
                            for (int i = 0; i < 8; i++) {
                                bufs[i] = a.allocate(BLOCK, 4096);
                            }
                            SplittableRandom r = new SplittableRandom(42 + owner);
                            long[] ud = new long[8];
                            int[] res = new int[8];
                            int[] slotBlock = new int[8];
                            boolean[] busy = new boolean[8];
                            Set<Integer> pendingBlocks = new HashSet<>();
                            long deadline = System.nanoTime() + 20_000_000_000L;
                            for (int i = 0; i < 3000 && System.nanoTime() < deadline; i++) {
                                int slot = -1;
                                while (slot < 0) {
                                    for (int s = 0; s < 8; s++) {
                                        if (!busy[s]) {
                                            slot = s;
                                            break;
                                        }
                                    }
                                    if (slot < 0) {
                                        q.awaitCompletion(100_000_000L);
                                        int n = q.reap(ud, res, 8);
                                        for (int k = 0; k < n; k++) {
                                            assertEquals(0, res[k], "write result");
                                            busy[(int) ud[k]] = false;
                                            pendingBlocks.remove(slotBlock[(int) ud[k]]);
                                        }
                                        if (System.nanoTime() > deadline) {
                                            throw new AssertionError("writer stuck");
                                        }
                                    }
                                }
                                int b;
                                do {
                                    b = 2 * r.nextInt(BLOCKS / 2) + owner;
                                } while (pendingBlocks.contains(b)); // one write per block in flight: order known
                                long seed = (long) b << 32 | (i + 1) | (long) owner << 62;
                                int op = r.nextInt(10);
                                if (op == 0) {
                                    seed = 0; // reads zero afterwards
                                    q.submitWriteZeroes(v, (long) b * BLOCK, BLOCK, slot);
                                } else if (op == 1 && store.zeroesAfterTrim()) {
                                    seed = 0;
                                    q.submitTrim(v, (long) b * BLOCK, BLOCK, slot);
                                } else {
                                    StoreTestSupport.fillRandom(bufs[slot], seed);
                                    q.submitWrite(v, (long) b * BLOCK, bufs[slot], r.nextInt(16) == 0, slot);
                                }
                                busy[slot] = true;
                                slotBlock[slot] = b;
                                pendingBlocks.add(b);
                                synchronized (seeds) {
                                    seeds[b] = seed;
                                }
                            }
                            long end = System.nanoTime() + 30_000_000_000L;
                            while (q.inFlight() > 0 && System.nanoTime() < end) {
                                q.awaitCompletion(100_000_000L);
                                int n = q.reap(ud, res, 8);
                                for (int k = 0; k < n; k++) {
                                    assertEquals(0, res[k], "write result");
                                }
                            }
                            assertEquals(0, q.inFlight(), "writes did not complete");
                            q.close();
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    }));
                }
                Thread mgmt = Thread.ofPlatform().start(() -> {
                    try {
                        SplittableRandom r = new SplittableRandom(7);
                        int n = 0;
                        long deadline = System.nanoTime() + 25_000_000_000L;
                        while (!stop.get() && System.nanoTime() < deadline && n < 200) {
                            store.snapshots().create("v", "s" + n++);
                            List<SnapshotInfo> l = store.snapshots().list("v");
                            if (l.size() > 4) {
                                store.snapshots().delete("v", l.get(r.nextInt(l.size())).name());
                            }
                            Thread.sleep(2);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                for (Thread t : threads) {
                    t.join(60_000);
                }
                stop.set(true);
                mgmt.join(30_000);
                assertNull(failure.get(), () -> "failure: " + failure.get());
                verify(store, v, seeds, arena);
                checkAccounting(v);
            }
            try (VolumeStore store = VolumeStore.open(dir, opts)) {
                StoreVolume v = store.get("v");
                verify(store, v, seeds, arena);
                checkAccounting(v);
            }
        }
    }

    private static void verify(VolumeStore store, StoreVolume v, long[] seeds, Arena arena) {
        BlockQueue q = store.newQueue(4);
        MemorySegment got = arena.allocate(SIZE, 4096);
        for (long off = 0; off < SIZE; off += 1 << 20) {
            StoreTestSupport.read(q, v, off, got.asSlice(off, 1 << 20));
        }
        q.close();
        MemorySegment exp = arena.allocate(BLOCK, 4096);
        for (int b = 0; b < BLOCKS; b++) {
            MemorySegment g = got.asSlice((long) b * BLOCK, BLOCK);
            if (seeds[b] == 0) {
                assertTrue(StoreTestSupport.isAllZero(g), "block " + b + " never written must read zero");
            } else {
                StoreTestSupport.fillRandom(exp, seeds[b]);
                assertEquals(-1, g.mismatch(exp), "block " + b + " (cluster " + (b * BLOCK / CLUSTER)
                        + ") lost its last write");
            }
        }
    }

    private static void checkAccounting(StoreVolume v) {
        ClusterMap m = v.map();
        Set<Long> held = new HashSet<>();
        for (long c = 0; c < SIZE / CLUSTER; c++) {
            long e = m.entry(c);
            assertEquals(0, e & ClusterMap.BUSY, "cluster " + c + " left BUSY");
            if ((e & ClusterMap.PHYS_MASK) != 0) {
                held.add(e & ClusterMap.PHYS_MASK);
            }
        }
        for (ClusterMap.Snap s : m.snapshots()) {
            for (long p1 : s.map()) {
                if (p1 != 0) {
                    held.add(p1);
                }
            }
        }
        assertEquals((long) held.size() * CLUSTER, v.allocatedBytes(), "allocatedBytes vs clusters the maps hold");
    }
}
