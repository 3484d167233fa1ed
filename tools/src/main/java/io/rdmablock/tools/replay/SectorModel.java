package io.rdmablock.tools.replay;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What the device must hold: per 512-byte sector, the version of the last write (0 = never written, reads zero).
 * The data of version {@code v} of sector {@code s} is a deterministic function of (s, v) — the trace's own bytes for
 * that write — so the model needs 4 bytes per sector and no copy of the data (a 1 GiB device: 8 MiB). Offsets and
 * lengths are multiples of {@link #SECTOR}.
 */
final class SectorModel {
    static final int SECTOR = 512;
    private final int[] versions;

    SectorModel(long capacityBytes) {
        long sectors = capacityBytes / SECTOR;
        if (sectors > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("invalid capacityBytes: capacityBytes=" + capacityBytes
                    + ", max=" + (long) (Integer.MAX_VALUE - 8) * SECTOR);
        }
        versions = new int[(int) sectors];
    }

    /** Records that {@code [offset, offset + len)} now holds {@code version} (when the write is issued). */
    void record(long offsetBytes, int lengthBytes, int version) {
        int first = (int) (offsetBytes / SECTOR);
        for (int i = 0; i < lengthBytes / SECTOR; i++) {
            versions[first + i] = version;
        }
    }

    /**
     * Fills {@code buf} from {@code bufOffsetBytes} with the data of {@code version} of the sectors of
     * {@code [offsetBytes, offsetBytes + lengthBytes)}.
     */
    static void fill(MemorySegment buf, long bufOffsetBytes, long offsetBytes, int lengthBytes, int version) {
        int first = (int) (offsetBytes / SECTOR);
        for (int i = 0; i < lengthBytes / SECTOR; i++) {
            long base = bufOffsetBytes + (long) i * SECTOR;
            for (int w = 0; w < SECTOR / 8; w++) {
                buf.set(ValueLayout.JAVA_LONG_UNALIGNED, base + 8L * w, word(first + i, version, w));
            }
        }
    }

    /**
     * Checks {@code buf} (holding the device bytes from {@code offsetBytes}) against the model, sectors
     * {@code [fromBytes, toBytes)} relative to the buffer.
     *
     * @return -1 if every sector matches, else the index of the first mismatching sector of the device
     */
    long verify(MemorySegment buf, long offsetBytes, long fromBytes, long toBytes) {
        for (long b = fromBytes; b < toBytes; b += SECTOR) {
            int s = (int) ((offsetBytes + b) / SECTOR);
            int v = versions[s];
            for (int w = 0; w < SECTOR / 8; w++) {
                long expect = v == 0 ? 0 : word(s, v, w);
                if (buf.get(ValueLayout.JAVA_LONG_UNALIGNED, b + 8L * w) != expect) {
                    return s;
                }
            }
        }
        return -1;
    }

    /** SplitMix64 of (sector, version, word): never all zero in practice, different for every version. */
    static long word(int sector, int version, int w) {
        long z = ((long) sector << 32 | (version & 0xFFFFFFFFL)) * 0x9E3779B97F4A7C15L + w * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31) | 1L;
    }
}
