package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static io.rdmablock.node.store.StoreTestSupport.awaitResult;
import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mapped volume against a model (a byte array per live volume and per snapshot): random writes spanning clusters,
 * reads, trims, write zeroes, flushes, snapshot create/delete, rollback and store reopens, on 64 KiB clusters.
 * Every read, every snapshot view and, at the end, the space accounting must agree with the model.
 */
class SnapshotModelTest {
    private static final int CLUSTER = 64 << 10;
    private static final int SIZE = 2 << 20;
    private int lba = 4096;
    private static final int OPS = 700;

    private VolumeStore store;
    private BlockQueue q;
    private StoreVolume v;

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldMatchTheModelAcrossWritesTrimsSnapshotsRollbacksAndReopens(IoBackend backend) throws Exception {
        runModel(StoreTestSupport.options(backend).withClusterBytes(CLUSTER));
    }

    /** 512-byte blocks on a store that needs 4 KiB for O_DIRECT: pieces and copies take the buffered descriptor. */
    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldMatchTheModelWith512ByteBlocks(IoBackend backend) throws Exception {
        lba = 512;
        runModel(StoreTestSupport.options(backend).withClusterBytes(CLUSTER).withDirectIoAlignBytes(4096));
    }

    private void runModel(StoreOptions options) throws Exception {
        Path dir = StoreTestSupport.freshDir("snapmodel");
        SplittableRandom rnd = new SplittableRandom(20261207);
        byte[] model = new byte[SIZE];
        Map<String, byte[]> snaps = new LinkedHashMap<>();
        int[] counts = new int[10];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf = arena.allocate(SIZE, 4096);
            open(dir, options);
            assertEquals(CLUSTER, v.clusterBytes());
            for (int i = 0; i < OPS; i++) {
                int op = rnd.nextInt(100);
                long off = (long) lba * rnd.nextInt(SIZE / lba);
                long len = (long) lba * (1 + rnd.nextInt((int) Math.min(48, (SIZE - off) / lba)));
                MemorySegment slice = buf.asSlice(0, len);
                if (op < 40) {
                    fill(slice, rnd.nextLong());
                    q.submitWrite(v, off, slice, rnd.nextInt(8) == 0, 1);
                    assertEquals(0, awaitResult(q, 1), "write at " + off);
                    MemorySegment.copy(slice, ValueLayout.JAVA_BYTE, 0, model, (int) off, (int) len);
                    counts[0]++;
                } else if (op < 52) {
                    q.submitRead(v, off, slice, 2);
                    assertEquals(0, awaitResult(q, 2));
                    assertSame(model, (int) off, slice, "read at " + off + " after op " + i);
                    counts[1]++;
                } else if (op < 60) {
                    boolean trim = rnd.nextBoolean() && store.zeroesAfterTrim();
                    if (trim) {
                        q.submitTrim(v, off, len, 3);
                    } else {
                        q.submitWriteZeroes(v, off, len, 3);
                    }
                    assertEquals(0, awaitResult(q, 3));
                    java.util.Arrays.fill(model, (int) off, (int) (off + len), (byte) 0);
                    counts[2]++;
                } else if (op < 64) {
                    StoreTestSupport.flush(q, v);
                } else if (op < 72 && snaps.size() < Snapshots.MAX_PER_VOLUME) {
                    String name = "s" + i;
                    store.snapshots().create("v", name);
                    snaps.put(name, model.clone());
                    counts[3]++;
                } else if (op < 77 && !snaps.isEmpty()) {
                    String name = pick(rnd, snaps);
                    store.snapshots().delete("v", name);
                    snaps.remove(name);
                    counts[4]++;
                } else if (op < 80 && !snaps.isEmpty()) {
                    String name = pick(rnd, snaps);
                    store.snapshots().rollback("v", name);
                    model = snaps.get(name).clone();
                    counts[5]++;
                } else if (op < 83) {
                    close();
                    open(dir, options);
                    counts[6]++;
                } else if (op < 88 && !snaps.isEmpty()) {
                    String name = pick(rnd, snaps);
                    assertView(name, snaps.get(name), buf);
                    counts[7]++;
                }
            }
            q.submitRead(v, 0, buf, 4);
            assertEquals(0, awaitResult(q, 4));
            assertSame(model, 0, buf, "whole volume at the end");
            for (var e : snaps.entrySet()) {
                assertView(e.getKey(), e.getValue(), buf);
            }
            // space: each snapshot's exclusive clusters are freed by its delete, and nothing leaks
            long before = v.allocatedBytes();
            long exclusive = 0;
            for (SnapshotInfo s : store.snapshots().list("v")) {
                exclusive += s.exclusiveBytes();
            }
            assertTrue(exclusive <= before - v.map().liveBytes(), "exclusive " + exclusive + " of " + before);
            for (String name : List.copyOf(snaps.keySet())) {
                store.snapshots().delete("v", name);
            }
            assertEquals(v.map().liveBytes(), v.allocatedBytes(), "after every delete only the live map holds space");
            close();
            open(dir, options);
            assertEquals(v.map().liveBytes(), v.allocatedBytes(), "the same after a reopen");
            q.submitRead(v, 0, buf, 5);
            assertEquals(0, awaitResult(q, 5));
            assertSame(model, 0, buf, "whole volume after the last reopen");
            close();
        }
        assertTrue(counts[0] > 100 && counts[3] > 10 && counts[4] > 3 && counts[5] > 3 && counts[6] > 3
                && counts[7] > 3, "op mix: " + java.util.Arrays.toString(counts));
    }

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldRefuseWritesToAViewAndDeletingASnapshotInUse(IoBackend backend) throws Exception {
        Path dir = StoreTestSupport.freshDir("snapview");
        try (Arena arena = Arena.ofConfined()) {
            open(dir, StoreTestSupport.options(backend).withClusterBytes(CLUSTER));
            store.snapshots().create("v", "a");
            StoreVolume view = store.snapshots().open("v", "a");
            MemorySegment b = arena.allocate(lba, 4096);
            q.submitWrite(view, 0, b, false, 1);
            assertEquals(-Syscalls.EROFS, awaitResult(q, 1), "a snapshot's view is read-only");
            assertThrows(IllegalStateException.class, () -> store.snapshots().delete("v", "a"));
            assertThrows(IllegalArgumentException.class, () -> store.snapshots().create("v", "a"));
            assertThrows(IllegalArgumentException.class, () -> store.snapshots().create("v", "bad/name"));
            assertThrows(java.util.NoSuchElementException.class, () -> store.snapshots().delete("v", "nope"));
            store.snapshots().close(view);
            store.snapshots().delete("v", "a");
            close();
        }
    }

    /** Four threads, one queue each, write disjoint blocks of the same shared clusters: no write may be lost. */
    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldKeepConcurrentWritesIntoOneRedirectedCluster(IoBackend backend) throws Exception {
        Path dir = StoreTestSupport.freshDir("snaprace");
        open(dir, StoreTestSupport.options(backend).withClusterBytes(CLUSTER));
        int threads = 4;
        int blocksPerCluster = CLUSTER / lba;
        int rounds = 20;
        List<Thread> ts = new ArrayList<>();
        List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int round = 0; round < rounds; round++) {
            store.snapshots().create("v", "r" + round);
            int r = round;
            ts.clear();
            for (int t = 0; t < threads; t++) {
                int tid = t;
                ts.add(Thread.ofPlatform().start(() -> {
                    try (Arena a = Arena.ofConfined(); BlockQueue tq = store.newQueue(8)) {
                        MemorySegment b = a.allocate(lba, 4096);
                        for (int c = 0; c < 4; c++) { // clusters 0..3, block tid + 4k of each
                            for (int k = tid; k < blocksPerCluster; k += threads) {
                                b.fill((byte) (r * 16 + tid + 1));
                                tq.submitWrite(v, (long) c * CLUSTER + (long) k * lba, b, false, k);
                                assertEquals(0, awaitResult(tq, k));
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread t : ts) {
                t.join(60_000);
            }
            assertTrue(errors.isEmpty(), "writer failed: " + errors);
            if (round % 5 == 4) {
                store.snapshots().delete("v", "r" + (round - 2));
            }
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment all = a.allocate(4L * CLUSTER, 4096);
            q.submitRead(v, 0, all, 9);
            assertEquals(0, awaitResult(q, 9));
            for (int c = 0; c < 4; c++) {
                for (int k = 0; k < blocksPerCluster; k++) {
                    byte want = (byte) ((rounds - 1) * 16 + (k % threads) + 1);
                    assertEquals(want, all.get(ValueLayout.JAVA_BYTE, (long) c * CLUSTER + (long) k * lba),
                            "cluster " + c + " block " + k);
                }
            }
        }
        close();
    }

    private void assertView(String name, byte[] want, MemorySegment buf) {
        StoreVolume view = store.snapshots().open("v", name);
        try {
            q.submitRead(view, 0, buf.asSlice(0, SIZE), 6);
            assertEquals(0, awaitResult(q, 6));
            assertSame(want, 0, buf.asSlice(0, SIZE), "snapshot " + name);
        } finally {
            store.snapshots().close(view);
        }
    }

    private void open(Path dir, StoreOptions options) {
        store = VolumeStore.open(dir, options);
        if (store.find("v").isEmpty()) {
            store.create(spec("v", SIZE, lba));
        }
        v = store.get("v");
        q = store.newQueue(8);
    }

    private void close() {
        q.close();
        store.close();
    }

    private static String pick(SplittableRandom rnd, Map<String, byte[]> snaps) {
        List<String> names = List.copyOf(snaps.keySet());
        return names.get(rnd.nextInt(names.size()));
    }

    private static void fill(MemorySegment s, long seed) {
        StoreTestSupport.fillRandom(s, seed);
    }

    private static void assertSame(byte[] model, int off, MemorySegment got, String what) {
        byte[] g = got.toArray(ValueLayout.JAVA_BYTE);
        for (int i = 0; i < g.length; i++) {
            if (g[i] != model[off + i]) {
                throw new AssertionError(what + ": first difference at volume byte " + (off + i) + " (cluster "
                        + ((off + i) / CLUSTER) + "): got " + g[i] + ", want " + model[off + i]);
            }
        }
    }
}
