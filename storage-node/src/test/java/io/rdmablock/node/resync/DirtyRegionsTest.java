package io.rdmablock.node.resync;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirtyRegionsTest {
    private static final long R = DirtyRegions.DEFAULT_REGION_BYTES;

    @TempDir
    Path dir;

    @Test
    void marksExactlyTheRegionsARangeTouches() {
        DirtyRegions d = DirtyRegions.create(dir.resolve("v.dirty-n2"), R, 100 * R + 512, 4);
        assertEquals(101, d.regionCount());
        assertTrue(d.mark(R - 512, 1024) > 0); // straddles regions 0 and 1
        assertTrue(d.isMarked(0));
        assertTrue(d.isMarked(1));
        assertFalse(d.isMarked(2));
        long pending = d.mark(0, 4096);
        assertTrue(pending > 0, "marked by another write but not yet durable: this write waits for the flush too");
        d.flush();
        assertTrue(d.durableGeneration() >= pending);
        assertEquals(0, d.mark(0, 4096), "durable already: nothing to wait for");
        assertTrue(d.mark(100 * R, 512) > 0); // the short last region
        assertTrue(d.mark(100 * R, 512) > 0, "still not durable");
        assertTrue(d.isMarked(100));
        assertEquals(0, d.mark(200 * R, 4096), "beyond the volume");
        assertEquals(3, d.markedCount());
    }

    @Test
    void flushPublishesTheGenerationAndLoadRestoresEveryBit(@TempDir Path tmp) {
        Path f = tmp.resolve("v.dirty-n3");
        DirtyRegions d = DirtyRegions.create(f, R, 1L << 30, 7);
        Random rnd = new Random(42);
        TreeSet<Integer> expected = new TreeSet<>();
        long need = 0;
        for (int i = 0; i < 500; i++) {
            long off = (rnd.nextLong(1L << 30) / 512) * 512;
            int len = 512 * (1 + rnd.nextInt(300));
            need = Math.max(need, d.mark(off, len));
            long end = Math.min(1L << 30, off + len);
            for (long r = off / R; r <= (end - 1) / R; r++) {
                expected.add((int) r);
            }
        }
        assertTrue(d.needsFlush());
        assertTrue(d.durableGeneration() < need);
        d.flush();
        assertTrue(d.durableGeneration() >= need);
        assertFalse(d.needsFlush());

        DirtyRegions back = DirtyRegions.load(f, 1L << 30);
        assertNotNull(back);
        assertEquals(7, back.sinceEpoch());
        assertEquals(expected.size(), back.markedCount());
        for (int r : expected) {
            assertTrue(back.isMarked(r), "region " + r);
        }
    }

    @Test
    void aBitmapThatCannotProveWhatWasMissedLoadsAsNull() throws Exception {
        Path f = dir.resolve("v.dirty-n4");
        assertNull(DirtyRegions.load(f, 1L << 20), "missing file");
        DirtyRegions d = DirtyRegions.create(f, R, 1L << 20, 2);
        d.mark(0, 4096);
        d.flush();
        assertNotNull(DirtyRegions.load(f, 1L << 20));
        assertNull(DirtyRegions.load(f, 1L << 21), "volume resized since");
        byte[] bytes = Files.readAllBytes(f);
        bytes[40] ^= 1; // flip a bit of the bitmap: CRC mismatch
        Files.write(f, bytes);
        assertNull(DirtyRegions.load(f, 1L << 20));
        Files.write(f, new byte[10]);
        assertNull(DirtyRegions.load(f, 1L << 20), "truncated");
    }

    @Test
    void refusesBadShapes() {
        assertThrows(IllegalArgumentException.class, () -> DirtyRegions.create(dir.resolve("x"), 1000, 1 << 20, 1));
        assertThrows(IllegalArgumentException.class, () -> DirtyRegions.create(dir.resolve("x"), R, 0, 1));
    }
}
