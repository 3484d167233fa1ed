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

    @Override
    void close();

    /** Opens one per walk. */
    interface Opener {
        LocalStore open();
    }
}
