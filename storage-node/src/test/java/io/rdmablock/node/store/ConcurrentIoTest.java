package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random reads and writes at QD32 on two queues driven by two threads, verified byte for byte against a model.
 * A block never has two commands in flight that could race (a write excludes every other command on it).
 */
class ConcurrentIoTest {

    private static final int QD = 32;
    private static final int MAX_BLOCKS_PER_IO = 8;
    private static final int OPS_PER_THREAD = 6000;
    private static final long TIME_LIMIT_NS = 40_000_000_000L;

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, mode = EnumSource.Mode.EXCLUDE, names = "NULL")
    void shouldStayByteExactUnderRandomQd32IoOnTwoQueues(IoBackend backend) throws Exception {
        int blocks = 8192; // 32 MiB
        try (VolumeStore store = VolumeStore.open(StoreTestSupport.freshDir("qd32-" + backend),
                StoreTestSupport.options(backend))) {
            StoreVolume v = store.create(StoreTestSupport.spec("v", (long) blocks * BlockPattern.BLOCK, 4096));
            ExecutorService threads = Executors.newFixedThreadPool(2);
            try {
                List<Future<long[]>> results = new ArrayList<>();
                results.add(threads.submit(() -> run(store, v, 0, blocks / 2, 1)));
                results.add(threads.submit(() -> run(store, v, blocks / 2, blocks, 2)));
                for (Future<long[]> f : results) {
                    long[] counts = f.get(60, TimeUnit.SECONDS);
                    assertTrue(counts[0] > 100 && counts[1] > 100, "reads=" + counts[0] + ", writes=" + counts[1]);
                }
            } finally {
                threads.shutdownNow();
            }
        }
    }

    /** Returns {reads verified, writes}. */
    private static long[] run(VolumeStore store, StoreVolume v, int lo, int hi, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        long[] gen = new long[hi - lo];          // model: generation per block, 0 = never written
        int[] busy = new int[hi - lo];           // commands in flight per block (writes count QD+1)
        int[] slotKind = new int[QD];            // 1 read, 2 write
        int[] slotBlock = new int[QD];
        int[] slotCount = new int[QD];
        long[] slotGen = new long[QD];
        int[] freeSlots = new int[QD];
        int free = QD;
        for (int i = 0; i < QD; i++) {
            freeSlots[i] = i;
        }
        long reads = 0;
        long writes = 0;
        long[] ud = new long[QD];
        int[] res = new int[QD];
        long deadline = System.nanoTime() + TIME_LIMIT_NS;
        try (Arena arena = Arena.ofConfined(); BlockQueue q = store.newQueue(QD)) {
            MemorySegment bufs = arena.allocate((long) QD * MAX_BLOCKS_PER_IO * BlockPattern.BLOCK, 4096);
            int issued = 0;
            while ((issued < OPS_PER_THREAD || q.inFlight() > 0) && System.nanoTime() < deadline) {
                while (free > 0 && issued < OPS_PER_THREAD) {
                    int count = 1 + rnd.nextInt(MAX_BLOCKS_PER_IO);
                    int b = rnd.nextInt(hi - lo - count + 1);
                    boolean write = rnd.nextInt(10) < 6;
                    boolean clash = false;
                    for (int i = 0; i < count; i++) {
                        clash |= write ? busy[b + i] != 0 : busy[b + i] > QD;
                    }
                    if (clash) {
                        break; // let completions drain
                    }
                    int slot = freeSlots[--free];
                    MemorySegment buf = bufs.asSlice((long) slot * MAX_BLOCKS_PER_IO * BlockPattern.BLOCK,
                            (long) count * BlockPattern.BLOCK);
                    slotKind[slot] = write ? 2 : 1;
                    slotBlock[slot] = b;
                    slotCount[slot] = count;
                    long off = (long) (lo + b) * BlockPattern.BLOCK;
                    if (write) {
                        long g = ++gen[b] ;
                        for (int i = 0; i < count; i++) {
                            gen[b + i] = g;
                            busy[b + i] += QD + 1;
                            BlockPattern.fill(buf, (long) i * BlockPattern.BLOCK, lo + b + i, g);
                        }
                        slotGen[slot] = g;
                        q.submitWrite(v, off, buf, rnd.nextInt(8) == 0, slot);
                        writes++;
                    } else {
                        for (int i = 0; i < count; i++) {
                            busy[b + i]++;
                        }
                        buf.fill((byte) 0x5a);
                        q.submitRead(v, off, buf, slot);
                    }
                    issued++;
                }
                q.awaitCompletion(10_000_000L);
                int n = q.reap(ud, res, QD);
                for (int k = 0; k < n; k++) {
                    int slot = (int) ud[k];
                    assertEquals(0, res[k], "result of slot " + slot);
                    int b = slotBlock[slot];
                    MemorySegment buf = bufs.asSlice((long) slot * MAX_BLOCKS_PER_IO * BlockPattern.BLOCK);
                    for (int i = 0; i < slotCount[slot]; i++) {
                        if (slotKind[slot] == 2) {
                            busy[b + i] -= QD + 1;
                        } else {
                            busy[b + i]--;
                            long found = BlockPattern.check(buf, (long) i * BlockPattern.BLOCK, lo + b + i);
                            long expected = gen[b + i] == 0 ? -1 : gen[b + i] & 0xffffff;
                            assertEquals(expected, found, "generation of block " + (lo + b + i));
                        }
                    }
                    if (slotKind[slot] == 1) {
                        reads++;
                    }
                    freeSlots[free++] = slot;
                }
            }
            assertEquals(0, q.inFlight(), "drained within the time limit");
        }
        return new long[] {reads, writes};
    }
}
