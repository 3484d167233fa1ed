package io.rdmablock.node;

import io.rdmablock.node.resync.LocalStore;
import io.rdmablock.node.store.BlockQueue;
import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeStore;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The primary's own copy as a resync or verify reads it: a store queue of its own ({@link VolumeStore#newQueue}),
 * one blocking READ at a time on the walk's thread, straight into the caller's (registered) buffer.
 */
final class StoreReader implements LocalStore {
    /** Longest wait for one store read, ns. */
    private static final long READ_TIMEOUT_NS = 30_000_000_000L;
    private final BlockQueue queue;
    private final StoreVolume volume;
    private final long[] userData = new long[1];
    private final int[] result = new int[1];

    private final Runnable onClose;

    StoreReader(VolumeStore store, StoreVolume volume) {
        this(store, volume, () -> { });
    }

    private StoreReader(VolumeStore store, StoreVolume volume, Runnable onClose) {
        this.queue = store.newQueue(2);
        this.volume = volume;
        this.onClose = onClose;
    }

    /** Readers of volume {@code v} and of its snapshots (their read-only views, closed with the reader). */
    static Opener opener(VolumeStore store, StoreVolume v) {
        return new Opener() {
            @Override
            public LocalStore open() {
                return new StoreReader(store, v);
            }

            @Override
            public LocalStore openSnapshot(long snapshotId) {
                StoreVolume view = store.snapshots().openById(v.id(), snapshotId);
                try {
                    return new StoreReader(store, view, () -> store.snapshots().close(view));
                } catch (RuntimeException e) {
                    store.snapshots().close(view);
                    throw e;
                }
            }
        };
    }

    /** The size of what this reader reads (the volume's, or the snapshot's), bytes. */
    @Override
    public long sizeBytes() {
        return volume.sizeBytes();
    }

    @Override
    public void read(long offsetBytes, MemorySegment into) throws IOException {
        queue.submitRead(volume, offsetBytes, into, 1);
        queue.submit();
        long deadline = System.nanoTime() + READ_TIMEOUT_NS;
        while (queue.reap(userData, result, 1) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("store read at " + offsetBytes + " unanswered within "
                        + READ_TIMEOUT_NS / 1_000_000 + " ms");
            }
            queue.awaitCompletion(100_000_000L);
        }
        if (result[0] < 0) {
            throw new IOException("store read at " + offsetBytes + " of " + into.byteSize() + " bytes failed: errno "
                    + -result[0]);
        }
    }

    @Override
    public void close() {
        try {
            queue.close();
        } finally {
            onClose.run();
        }
    }
}
