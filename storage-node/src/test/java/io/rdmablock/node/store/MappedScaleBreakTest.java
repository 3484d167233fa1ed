package io.rdmablock.node.store;

import java.lang.foreign.Arena;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Large thin mapped volumes (VolumeSpec allows 1 PiB): map-wide scans and int casts. */
class MappedScaleBreakTest {

    /**
     * ClusterMap.snapshot sizes its frozen map with {@code new long[(int) clusters]}: 1 PiB / 64 KiB = 2^34 clusters,
     * cast to int = 0, so the first allocated entry throws ArrayIndexOutOfBoundsException (2^31..2^32 clusters would
     * give NegativeArraySizeException; 2^27+ an 8+ GiB array under the store lock with the volume's writes held).
     */
    @Test
    void snapshotOfALargeThinVolumeMustBeRefusedClearlyAndASmallerOneWork() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-scale");
        try (Arena arena = Arena.ofShared();
             VolumeStore store = VolumeStore.open(dir, StoreTestSupport.options(IoBackend.THREAD_POOL)
                     .withClusterBytes(64 << 10))) {
            StoreVolume v = store.create(spec("big", VolumeSpec.MAX_SIZE_BYTES, 4096));
            BlockQueue q = store.newQueue(2);
            StoreTestSupport.write(q, v, 0, StoreTestSupport.buffer(arena, 4096));
            q.close();
            // the frozen map is 8 bytes per cluster in memory: above Snapshots.MAX_CLUSTERS a clear refusal
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> store.snapshots().create("big", "s"));
            assertTrue(e.getMessage().contains("too large for snapshots"), e.getMessage());
            assertTrue(store.snapshots().list("big").isEmpty(), "nothing half-made");
            StoreVolume ok = store.create(spec("ok", Snapshots.MAX_CLUSTERS << 16, 4096)); // 1 TiB at 64 KiB
            assertDoesNotThrow(() -> store.snapshots().create("ok", "s"));
        }
    }

    /**
     * StoreVolume.liveBytes (NVMe Identify NUSE) and VolumeStore.unallocatedBytes scan every logical cluster under the
     * map's monitor, which allocate() and publish() on the pollers need: on a 1 PiB volume with the default 1 MiB
     * clusters one call walks 2^30 entries while the volume's allocating writes wait.
     */
    @Test
    void liveBytesOfALargeThinVolumeMustBeCheap() throws Exception {
        Path dir = StoreTestSupport.freshDir("break-scale2");
        try (VolumeStore store = VolumeStore.open(dir, StoreTestSupport.options(IoBackend.THREAD_POOL)
                .withClusterBytes(1 << 20))) {
            StoreVolume v = store.create(spec("big", VolumeSpec.MAX_SIZE_BYTES, 4096));
            long t0 = System.nanoTime();
            v.liveBytes();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 50, "liveBytes took " + ms + " ms holding the map monitor (pollers' allocations wait)");
        }
    }
}
