package io.rdmablock.node.store;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Assumptions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Helpers shared by the store tests: data directories under target/, aligned buffers, synchronous I/O. */
final class StoreTestSupport {

    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final long TIMEOUT_NS = 30_000_000_000L;

    private StoreTestSupport() {
    }

    /**
     * A fresh, empty directory under target/store-tests, named {@code <name>-<pid>-<n>}; directories left by earlier
     * (ended) test JVMs are removed on first use.
     */
    static Path freshDir(String name) throws IOException {
        if (SEQ.get() == 0) {
            removeLeftovers(Path.of("target", "store-tests"));
        }
        Path dir = Path.of("target", "store-tests", name + "-" + ProcessHandle.current().pid() + "-"
                + SEQ.incrementAndGet()).toAbsolutePath();
        deleteTree(dir);
        Files.createDirectories(dir);
        return dir;
    }

    private static void removeLeftovers(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (var s = Files.list(root)) {
            for (Path p : s.toList()) {
                String[] parts = p.getFileName().toString().split("-");
                if (parts.length < 3) {
                    continue;
                }
                try {
                    long pid = Long.parseLong(parts[parts.length - 2]);
                    if (pid != ProcessHandle.current().pid() && ProcessHandle.of(pid).isEmpty()) {
                        deleteTree(p);
                    }
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (Files.isRegularFile(dir)) {
            Files.deleteIfExists(dir);
            return;
        }
        if (!Files.exists(dir)) {
            return;
        }
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static final String IO_URING_PROBE = IoUring.probe();

    /** Options for {@code backend}; skips the test (with the reason) when io_uring is asked for but unavailable. */
    static StoreOptions options(IoBackend backend) {
        assumeIoUringIfNeeded(backend);
        return StoreOptions.defaults().withBackend(backend);
    }

    static void assumeIoUringIfNeeded(IoBackend backend) {
        if (backend == IoBackend.IO_URING) {
            Assumptions.assumeTrue(IO_URING_PROBE == null, "io_uring unavailable here: " + IO_URING_PROBE);
        }
    }

    static VolumeSpec spec(String id, long sizeBytes, int lba) {
        return new VolumeSpec(id, "volume " + id, sizeBytes, lba, Set.of(VolumeSpec.ANY_HOST));
    }

    static MemorySegment buffer(Arena arena, long lengthBytes) {
        return arena.allocate(lengthBytes, 4096);
    }

    /** Fills {@code seg} with bytes from a seeded generator. */
    static void fillRandom(MemorySegment seg, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long n = seg.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            seg.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        for (; i < n; i++) {
            seg.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }

    static boolean isAllZero(MemorySegment seg) {
        for (long i = 0; i < seg.byteSize(); i += 8) {
            if (seg.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Submits nothing itself: waits (bounded) for the one completion with {@code userData} and returns its result. */
    static int awaitResult(BlockQueue q, long userData) {
        long[] ud = new long[q.capacity()];
        int[] res = new int[q.capacity()];
        long deadline = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() < deadline) {
            q.awaitCompletion(100_000_000L);
            int n = q.reap(ud, res, ud.length);
            assertTrue(n <= 1, "expected at most one completion, got " + n);
            if (n == 1) {
                assertEquals(userData, ud[0], "userData of the completion");
                return res[0];
            }
        }
        throw new AssertionError("no completion within 30 s for userData=" + userData);
    }

    static void write(BlockQueue q, StoreVolume v, long off, MemorySegment buf) {
        q.submitWrite(v, off, buf, false, 7);
        assertEquals(0, awaitResult(q, 7), "write result at offset " + off);
    }

    static void read(BlockQueue q, StoreVolume v, long off, MemorySegment buf) {
        q.submitRead(v, off, buf, 8);
        assertEquals(0, awaitResult(q, 8), "read result at offset " + off);
    }

    static void flush(BlockQueue q, StoreVolume v) {
        q.submitFlush(v, 9);
        assertEquals(0, awaitResult(q, 9), "flush result");
    }
}
