package io.rdmablock.node.resync;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * The primary's own copy as a resync or verify reads it: blocking reads on the walk's thread. One per walk, closed
 * with it (a store queue of its own).
 */
public interface LocalStore extends AutoCloseable {
    /**
     * Reads {@code into.byteSize()} bytes at {@code offsetBytes} of the volume into {@code into} (native, 4 KiB
     * aligned).
     *
     * @throws IOException on a store error
     */
    void read(long offsetBytes, MemorySegment into) throws IOException;

    /** The size of what this reader reads, bytes; -1 when unknown. */
    default long sizeBytes() {
        return -1;
    }

    @Override
    void close();

    /** Opens one per walk. */
    interface Opener {
        LocalStore open();

        /**
         * Opens a reader of snapshot {@code snapshotId} of the copy (a verify of a snapshot): the store's read-only
         * view, closed with the reader. Default: none.
         *
         * @throws java.util.NoSuchElementException when the copy holds no snapshot of that id
         */
        default LocalStore openSnapshot(long snapshotId) {
            throw new UnsupportedOperationException("no snapshot reader: snapshot id=" + snapshotId);
        }
    }
}
