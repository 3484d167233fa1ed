package io.rdmablock.node.store;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kill -9} of a process writing to a mapped volume while it takes and deletes snapshots
 * ({@link SnapshotCrashChild}). After reopening: every snapshot whose create returned is there and holds exactly the
 * writes completed before it (the child drains before each and never has two overlapping writes in flight, whose
 * order no block device keeps; the expected content is recomputed from the child's seeded sequence), every
 * snapshot whose delete returned is gone, {@code base} holds the flushed generation 0, the live volume holds no torn
 * and no lost block (a kill keeps the page cache: an acknowledged write survives), and the data file holds no more
 * space than the maps account for (orphans of the kill are freed at open).
 */
class SnapshotCrashTest {

    @ParameterizedTest
    @EnumSource(value = IoBackend.class, names = {"IO_URING", "THREAD_POOL"})
    void shouldKeepEveryAcknowledgedSnapshotExactAfterKill9(IoBackend backend) throws Exception {
        StoreTestSupport.assumeIoUringIfNeeded(backend);
        Path dir = StoreTestSupport.freshDir("snapcrash");
        List<String> lines = runChild(dir, backend);
        long read = lines.stream().filter(l -> l.startsWith("SNAP ") || l.startsWith("DEL ")).count();
        assertTrue(read > 0, "the child took snapshots: " + lines);
        int blocks = (int) (SnapshotCrashChild.SIZE / BlockPattern.BLOCK);
        try (Arena arena = Arena.ofConfined();
             VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults().withBackend(backend));
             BlockQueue q = store.newQueue(4)) {
            StoreVolume v = store.get("snap");
            Set<String> present = new HashSet<>();
            for (SnapshotInfo s : store.snapshots().list("snap")) {
                present.add(s.name());
            }
            assertTrue(present.remove("base"), "base survives: " + present);
            // each create and delete is atomic: the snapshots left are those after some prefix of the child's
            // operations that includes every operation it acknowledged before the kill
            long prefix = matchingPrefix(present, read);
            assertTrue(prefix >= read, "snapshots " + present + " are the state after no prefix of at least " + read
                    + " operations (the child's acknowledged ones): " + lines);
            present.add("base");
            MemorySegment buf = arena.allocate(SnapshotCrashChild.SIZE, 4096);
            int checked = 0;
            for (String name : present) {
                long[] want = expectedGens(name.equals("base") ? 0 : Long.parseLong(name.substring(1)), blocks);
                StoreVolume view = store.snapshots().open("snap", name);
                StoreTestSupport.read(q, view, 0, buf);
                store.snapshots().close(view);
                for (int b = 0; b < blocks; b++) {
                    assertEquals(want[b], BlockPattern.check(buf, (long) b * BlockPattern.BLOCK, b),
                            "snapshot " + name + " block " + b);
                }
                checked++;
            }
            StoreTestSupport.read(q, v, 0, buf);
            for (int b = 0; b < blocks; b++) {
                assertTrue(BlockPattern.check(buf, (long) b * BlockPattern.BLOCK, b) >= 0, "live block " + b
                        + " lost");
            }
            long onDisk = Syscalls.allocatedBytes(dir.resolve("volumes").resolve("snap.vol"));
            assertTrue(onDisk <= v.allocatedBytes() + SnapshotCrashChild.CLUSTER, "no leaked space: file holds "
                    + onDisk + " bytes, maps account for " + v.allocatedBytes());
            System.out.printf("snapshot crash: operations acknowledged=%d, after the kill=%d, snapshots checked=%d, "
                    + "fileBytes=%d, mapBytes=%d%n", read, prefix, checked, onDisk, v.allocatedBytes());
        }
    }

    /**
     * The number of operations (SNAP or DEL, in the child's order) after which its snapshots are exactly
     * {@code present}, searching from {@code from}; -1 when none within 10,000.
     */
    private static long matchingPrefix(Set<String> present, long from) {
        java.util.ArrayDeque<String> snaps = new java.util.ArrayDeque<>();
        long ops = 0;
        for (long i = SnapshotCrashChild.EVERY; ops < from + 10_000; i += SnapshotCrashChild.EVERY) {
            snaps.add("s" + i);
            ops++;
            if (ops >= from && present.equals(new HashSet<>(snaps))) {
                return ops;
            }
            if (snaps.size() > 4) {
                snaps.poll();
                ops++;
                if (ops >= from && present.equals(new HashSet<>(snaps))) {
                    return ops;
                }
            }
        }
        return -1;
    }

    /** Block generations after the first {@code writes} writes of the child's sequence. */
    private static long[] expectedGens(long writes, int blocks) {
        long[] gen = new long[blocks];
        SplittableRandom rnd = new SplittableRandom(SnapshotCrashChild.SEED);
        for (long i = 1; i <= writes; i++) {
            int b = SnapshotCrashChild.nextBlock(rnd);
            for (int k = 0; k < SnapshotCrashChild.RUN; k++) {
                gen[b + k] = i;
            }
        }
        return gen;
    }

    private static List<String> runChild(Path dir, IoBackend backend) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), SnapshotCrashChild.class.getName(), dir.toString(),
                backend == IoBackend.IO_URING ? "io_uring" : "threadpool");
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolveSibling(dir.getFileName() + ".child.log").toFile())
                .start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            assertEquals("BASE", out.readLine(), "child took the base snapshot (see " + dir + ".child.log)");
            String l;
            while ((l = out.readLine()) != null && !l.equals("WRITING")) {
                lines.add(l);
            }
            assertEquals("WRITING", l, "child is writing and taking snapshots");
            // let it take several snapshots and deletes, then kill it wherever it is (a bounded number of lines)
            for (int i = 0; i < 24 && (l = out.readLine()) != null; i++) {
                lines.add(l);
            }
            p.destroyForcibly(); // SIGKILL; lines it printed after the last one read count as not acknowledged
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child ended");
        } finally {
            p.destroyForcibly();
        }
        return lines;
    }
}
