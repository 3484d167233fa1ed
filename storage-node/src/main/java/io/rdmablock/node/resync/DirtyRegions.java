package io.rdmablock.node.resync;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.zip.CRC32C;

/**
 * The regions of a volume one stale copy has missed, kept by the primary for an incremental resync: one bit per
 * {@link #regionBytes()} (default {@value #DEFAULT_REGION_BYTES} bytes = 64 KiB) of the volume, persisted in one file.
 *
 * <p>Write-ahead: {@link #mark} sets the bits of a byte range (lock-free, any thread; the data path calls it on its
 * poller) and returns the generation that must be durable before the write it describes may be acknowledged, or 0
 * when every bit was already set (the common case: a region is marked once per stale period). {@link #flush}
 * (one flusher thread) writes the whole bitmap to a temporary file, fsyncs it, renames it over the file and fsyncs
 * the directory, then publishes the generation it covered ({@link #durableGeneration()}), so after a crash at any
 * point the file holds every bit of every acknowledged write.
 *
 * <p>File layout (little endian): magic {@code "RBDIRTY1"} (8 bytes), regionBytes (int64), volumeBytes (int64),
 * sinceEpoch (int64: the epoch at which the copy went stale), bit count (int64), the bits (int64 words, bit i of
 * word w = region 64 w + i), CRC32C of everything before it (int32). A file that is missing, short, of another size
 * or with a wrong CRC cannot prove what the copy missed: {@link #load} then returns null and the resync must be full.
 */
public final class DirtyRegions {
    /** Default region size: 64 KiB (the "1 bit per 64 KiB or coarser"). */
    public static final long DEFAULT_REGION_BYTES = 64 * 1024;
    private static final long MAGIC = 0x3159545249444252L; // "RBDIRTY1" little endian
    private static final int HEADER_BYTES = 40;

    private final Path file;
    private final long regionBytes;
    private final long volumeBytes;
    private final long sinceEpoch;
    private final int regions;
    private final AtomicLongArray words;
    /** The bits as last written durably by {@link #flush} (a mark of a bit only set in {@link #words} still waits). */
    private final AtomicLongArray durableWords;
    private final AtomicLong generation = new AtomicLong();
    private volatile long durable;

    private DirtyRegions(Path file, long regionBytes, long volumeBytes, long sinceEpoch) {
        if (regionBytes < 4096 || Long.bitCount(regionBytes) != 1) {
            throw new IllegalArgumentException("regionBytes=" + regionBytes + ": a power of two >= 4096");
        }
        if (volumeBytes <= 0) {
            throw new IllegalArgumentException("volumeBytes=" + volumeBytes + ": > 0");
        }
        long count = (volumeBytes + regionBytes - 1) / regionBytes;
        if (count > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("volumeBytes=" + volumeBytes + " at regionBytes=" + regionBytes
                    + ": more than 2^31 regions");
        }
        this.file = file;
        this.regionBytes = regionBytes;
        this.volumeBytes = volumeBytes;
        this.sinceEpoch = sinceEpoch;
        this.regions = (int) count;
        this.words = new AtomicLongArray((regions + 63) / 64);
        this.durableWords = new AtomicLongArray(words.length());
    }

    /** A new, empty bitmap (not yet on disk: call {@link #flush} to create the file). */
    public static DirtyRegions create(Path file, long regionBytes, long volumeBytes, long sinceEpoch) {
        DirtyRegions d = new DirtyRegions(file, regionBytes, volumeBytes, sinceEpoch);
        d.generation.set(1); // the empty file itself must be written once
        return d;
    }

    /**
     * Reads the bitmap persisted at {@code file}, or null when it cannot prove what the copy missed (missing,
     * truncated, bad magic or CRC, or recorded for another volume size: a resize while stale makes it full).
     *
     * @throws UncheckedIOException on a read error other than a missing file
     */
    public static DirtyRegions load(Path file, long volumeBytes) {
        if (!Files.exists(file)) {
            return null;
        }
        byte[] all;
        try {
            all = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
        if (all.length < HEADER_BYTES + 4) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        crc.update(all, 0, all.length - 4);
        if (b.getLong(0) != MAGIC || (int) crc.getValue() != b.getInt(all.length - 4)) {
            return null;
        }
        long regionBytes = b.getLong(8);
        long recordedVolumeBytes = b.getLong(16);
        long since = b.getLong(24);
        long bits = b.getLong(32);
        if (recordedVolumeBytes != volumeBytes || regionBytes < 4096 || Long.bitCount(regionBytes) != 1) {
            return null;
        }
        DirtyRegions d = new DirtyRegions(file, regionBytes, volumeBytes, since);
        if (bits != d.regions || all.length != HEADER_BYTES + 8L * d.words.length() + 4) {
            return null;
        }
        for (int w = 0; w < d.words.length(); w++) {
            d.words.set(w, b.getLong(HEADER_BYTES + 8 * w));
            d.durableWords.set(w, d.words.get(w));
        }
        d.durable = 0;
        return d;
    }

    /** Bytes per bit. */
    public long regionBytes() {
        return regionBytes;
    }

    /** Volume size the bitmap was made for, bytes. */
    public long volumeBytes() {
        return volumeBytes;
    }

    /** The epoch at which the copy went stale. */
    public long sinceEpoch() {
        return sinceEpoch;
    }

    /** Number of regions (bits). */
    public int regionCount() {
        return regions;
    }

    /**
     * Marks the regions covering {@code [offsetBytes, offsetBytes + lengthBytes)} (clipped to the volume). Lock-free.
     *
     * @return the generation {@link #durableGeneration()} must reach before the write may be acknowledged, or 0 when
     *         every region was already marked in the file (a region marked by another write whose flush has not
     *         happened yet counts as not durable: this write waits for it too)
     */
    public long mark(long offsetBytes, long lengthBytes) {
        if (lengthBytes <= 0 || offsetBytes >= volumeBytes) {
            return 0;
        }
        long end = Math.min(volumeBytes, offsetBytes + lengthBytes);
        int first = (int) (Math.max(0, offsetBytes) / regionBytes);
        int last = (int) ((end - 1) / regionBytes);
        boolean pending = false;
        for (int r = first; r <= last; r++) {
            long bit = 1L << (r & 63);
            if ((durableWords.get(r >>> 6) & bit) != 0) {
                continue;
            }
            pending = true;
            long w;
            while (((w = words.get(r >>> 6)) & bit) == 0) {
                if (words.compareAndSet(r >>> 6, w, w | bit)) {
                    break;
                }
            }
        }
        // a new generation after the bits are set: the flush that publishes it read the bits after it
        return pending ? generation.incrementAndGet() : 0;
    }

    /** Marks every region (the copy must be resynced in full); not durable until {@link #flush}. */
    public long markAll() {
        return mark(0, volumeBytes);
    }

    /** True when region {@code index} is marked. */
    public boolean isMarked(int index) {
        return (words.get(index >>> 6) & (1L << (index & 63))) != 0;
    }

    /** Number of marked regions. */
    public int markedCount() {
        int n = 0;
        for (int w = 0; w < words.length(); w++) {
            n += Long.bitCount(words.get(w));
        }
        return n;
    }

    /** Highest generation known durable on disk (0 before the first {@link #flush}). */
    public long durableGeneration() {
        return durable;
    }

    /** True when marks were made since the last {@link #flush}. */
    public boolean needsFlush() {
        return generation.get() > durable;
    }

    /**
     * Writes the bitmap durably (temporary file, fsync, rename, directory fsync) and publishes the generation it
     * covers. One thread at a time (the flusher); marks made meanwhile are covered by the next flush.
     *
     * @throws UncheckedIOException when the file cannot be written; nothing is published then
     */
    public synchronized void flush() {
        long gen = generation.get();
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + 8 * words.length() + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(MAGIC).putLong(regionBytes).putLong(volumeBytes).putLong(sinceEpoch).putLong(regions);
        long[] snapshot = new long[words.length()];
        for (int w = 0; w < words.length(); w++) {
            snapshot[w] = words.get(w);
            b.putLong(snapshot[w]);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        b.flip();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
                dir.force(true);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + file, e);
        }
        for (int w = 0; w < snapshot.length; w++) {
            durableWords.set(w, snapshot[w]);
        }
        durable = gen;
    }

    /** Removes the file (after a completed resync). */
    public void delete() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("deleting " + file, e);
        }
    }
}
