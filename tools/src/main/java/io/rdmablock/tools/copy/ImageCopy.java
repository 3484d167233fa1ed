package io.rdmablock.tools.copy;

import io.rdmablock.initiator.BlockDevice;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;

/**
 * Pipelined copy between a file and a {@link BlockDevice}: {@code depth} registered buffers of {@code chunkBytes}
 * each (from {@link BlockDevice#allocateBuffer}, so the node moves the data straight from/into them), used as a ring:
 * up to {@code depth} I/Os in flight while the file side of the next chunk is done.
 */
final class ImageCopy {
    private ImageCopy() {
    }

    /**
     * Writes {@code imageBytes} of {@code in} (from position 0) to the device at offset 0, then FLUSHes. A last chunk
     * that is not a multiple of the LBA size is padded with zeroes.
     *
     * @throws IllegalArgumentException when the image is larger than the device
     */
    static void importImage(BlockDevice dev, FileChannel in, long imageBytes, int chunkBytes, int depth,
                            Progress progress) throws IOException {
        if (imageBytes > dev.capacityBytes()) {
            throw new IllegalArgumentException("the image is larger than the volume: imageBytes=" + imageBytes
                    + ", volumeBytes=" + dev.capacityBytes());
        }
        int lba = dev.lbaSize();
        MemorySegment[] bufs = new MemorySegment[depth];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] inflight = new CompletableFuture[depth];
        long[] lengths = new long[depth];
        long done = 0;
        try {
            for (int i = 0; i < depth; i++) {
                bufs[i] = dev.allocateBuffer(chunkBytes);
            }
            int i = 0;
            for (long off = 0; off < imageBytes; off += chunkBytes, i++) {
                int slot = i % depth;
                if (inflight[slot] != null) {
                    BlockDevice.join(inflight[slot]);
                    done += lengths[slot];
                    progress.update(done);
                }
                int n = (int) Math.min(chunkBytes, imageBytes - off);
                int padded = (n + lba - 1) / lba * lba;
                MemorySegment buf = bufs[slot];
                readFully(in, buf.asSlice(0, n).asByteBuffer(), off);
                if (padded > n) {
                    buf.asSlice(n, padded - n).fill((byte) 0);
                }
                lengths[slot] = n;
                inflight[slot] = dev.write(off, buf.asSlice(0, padded), false);
            }
            for (int s = 0; s < depth; s++) {
                if (inflight[s] != null) {
                    BlockDevice.join(inflight[s]);
                    done += lengths[s];
                    inflight[s] = null;
                }
            }
            dev.flushSync();
            progress.update(done);
        } finally {
            release(dev, bufs, inflight);
        }
    }

    /**
     * Reads {@code lengthBytes} from offset 0 of the device into {@code out} (from position 0); the file is truncated
     * to {@code lengthBytes}. With {@code snapshotId} >= 1 it reads that snapshot of the volume instead
     * ({@link BlockDevice#readSnapshot}); 0 reads the volume.
     *
     * @throws IllegalArgumentException when lengthBytes is beyond the device
     */
    static void exportImage(BlockDevice dev, FileChannel out, long lengthBytes, int chunkBytes, int depth,
                            Progress progress, long snapshotId) throws IOException {
        if (lengthBytes > dev.capacityBytes() || lengthBytes < 0) {
            throw new IllegalArgumentException("invalid length: lengthBytes=" + lengthBytes + ", min=0, max="
                    + dev.capacityBytes());
        }
        int lba = dev.lbaSize();
        MemorySegment[] bufs = new MemorySegment[depth];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] inflight = new CompletableFuture[depth];
        long[] offsets = new long[depth];
        int[] lengths = new int[depth];
        long done = 0;
        try {
            for (int i = 0; i < depth; i++) {
                bufs[i] = dev.allocateBuffer(chunkBytes);
            }
            out.truncate(0);
            int i = 0;
            for (long off = 0; off < lengthBytes; off += chunkBytes, i++) {
                int slot = i % depth;
                if (inflight[slot] != null) {
                    done += drain(out, bufs[slot], inflight[slot], offsets[slot], lengths[slot]);
                    progress.update(done);
                }
                int n = (int) Math.min(chunkBytes, lengthBytes - off);
                int padded = (n + lba - 1) / lba * lba;
                offsets[slot] = off;
                lengths[slot] = n;
                MemorySegment dst = bufs[slot].asSlice(0, padded);
                inflight[slot] = snapshotId == 0 ? dev.read(off, dst) : dev.readSnapshot(snapshotId, off, dst);
            }
            for (int k = 0; k < depth; k++) {
                int slot = (i + k) % depth; // oldest first
                if (inflight[slot] != null) {
                    done += drain(out, bufs[slot], inflight[slot], offsets[slot], lengths[slot]);
                    inflight[slot] = null;
                }
            }
            out.truncate(lengthBytes);
            out.force(false);
            progress.update(done);
        } finally {
            release(dev, bufs, inflight);
        }
    }

    private static long drain(FileChannel out, MemorySegment buf, CompletableFuture<Void> f, long off, int n)
            throws IOException {
        BlockDevice.join(f);
        ByteBuffer bb = buf.asSlice(0, n).asByteBuffer();
        long pos = off;
        while (bb.hasRemaining()) {
            pos += out.write(bb, pos);
        }
        return n;
    }

    private static void readFully(FileChannel in, ByteBuffer bb, long position) throws IOException {
        long pos = position;
        while (bb.hasRemaining()) {
            int r = in.read(bb, pos);
            if (r < 0) {
                throw new IOException("image file shrank while reading: position=" + pos);
            }
            pos += r;
        }
    }

    /** Waits for what is still in flight (ignoring failures: one is already being thrown), then frees the buffers. */
    private static void release(BlockDevice dev, MemorySegment[] bufs, CompletableFuture<Void>[] inflight) {
        for (CompletableFuture<Void> f : inflight) {
            if (f != null) {
                try {
                    f.join();
                } catch (RuntimeException ignored) {
                    // reported by the caller's failure
                }
            }
        }
        for (MemorySegment b : bufs) {
            if (b != null) {
                dev.freeBuffer(b);
            }
        }
    }
}
