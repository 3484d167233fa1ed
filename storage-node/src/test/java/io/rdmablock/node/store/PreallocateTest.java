package io.rdmablock.node.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** {@link StoreOptions#preallocate()}: thick volumes reserve their space at create and grow; the default is thin. */
class PreallocateTest {
    static final long SIZE = 16L << 20;

    @TempDir
    Path dir;

    @Test
    void shouldKeepVolumesSparseByDefault() throws Exception {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertFalse(store.options().preallocate());
            store.create(new VolumeSpec("v", "v", SIZE, 4096, Set.of("*")));
            assertTrue(allocatedBytes(store, "v") < SIZE / 4, "sparse: " + allocatedBytes(store, "v"));
        }
    }

    @Test
    void shouldReserveSpaceAtCreateAndGrowAndStillReadZeroes() throws Exception {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults().withPreallocate(true));
             Arena arena = Arena.ofConfined()) {
            StoreVolume v = store.create(new VolumeSpec("v", "v", SIZE, 4096, Set.of("*")));
            long created = allocatedBytes(store, "v");
            assertTrue(created >= SIZE || created == 0, "reserved at create: " + created);
            assumeFallocate(created);
            assertEquals(SIZE, java.nio.file.Files.size(dir.toAbsolutePath().resolve("volumes").resolve("v.vol")));
            store.resize("v", 2 * SIZE);
            assertTrue(allocatedBytes(store, "v") >= 2 * SIZE, "reserved after grow: " + allocatedBytes(store, "v"));
            assertEquals(2 * SIZE, java.nio.file.Files.size(dir.toAbsolutePath().resolve("volumes").resolve("v.vol")));
            assertEquals(0, v.allocatedBytes(), "NUSE still counts written chunks only");
            MemorySegment buf = arena.allocate(4096, 4096).fill((byte) 1);
            try (BlockQueue q = store.newQueue(1)) {
                q.submitRead(v, SIZE + 8192, buf, 7);
                assertTrue(q.awaitCompletion(10_000_000_000L));
                long[] ud = new long[1];
                int[] res = new int[1];
                assertEquals(1, q.reap(ud, res, 1));
                assertEquals(0, res[0]);
            }
            assertEquals(-1, buf.mismatch(MemorySegment.ofArray(new byte[4096])), "preallocated space reads zero");
        }
    }

    @Test
    void shouldKeepThickVolumesReservedAcrossTrimAndWriteZeroes() throws Exception {
        try (VolumeStore store = VolumeStore.open(dir, StoreOptions.defaults().withPreallocate(true));
             Arena arena = Arena.ofConfined();
             BlockQueue q = store.newQueue(2)) {
            StoreVolume v = store.create(new VolumeSpec("v", "v", SIZE, 4096, Set.of("*")));
            assumeFallocate(allocatedBytes(store, "v"));
            MemorySegment buf = arena.allocate(1 << 20, 4096).fill((byte) 7);
            StoreTestSupport.write(q, v, 0, buf);
            q.submitTrim(v, 0, SIZE / 2, 11);
            assertEquals(0, StoreTestSupport.awaitResult(q, 11), "trim result");
            q.submitWriteZeroes(v, SIZE / 2, SIZE / 2, 12);
            assertEquals(0, StoreTestSupport.awaitResult(q, 12), "write zeroes result");
            // a thick volume's space must stay reserved: a punched hole hands it back to the file system, and a
            // later write there can fail with ENOSPC although the volume was promised its full size
            assertTrue(allocatedBytes(store, "v") >= SIZE, "still reserved: " + allocatedBytes(store, "v"));
            if (store.zeroesAfterTrim()) {
                StoreTestSupport.read(q, v, 0, buf);
                assertEquals(-1, buf.mismatch(MemorySegment.ofArray(new byte[1 << 20])), "trimmed range reads zero");
            }
        }
    }

    private static void assumeFallocate(long allocated) {
        org.junit.jupiter.api.Assumptions.assumeTrue(allocated > 0,
                "filesystem without fallocate: preallocation is logged and skipped");
    }

    /** st_blocks x 512 of the volume's data file ({@code stat -c %b}). */
    private long allocatedBytes(VolumeStore store, String id) throws IOException, InterruptedException {
        Path f = store.dataDir().resolve("volumes").resolve(id + ".vol");
        Process p = new ProcessBuilder("stat", "-c", "%b", f.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.waitFor(), out);
        return Long.parseLong(out) * 512;
    }
}
