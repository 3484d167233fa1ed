package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.Opcodes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Completed host READ/WRITE commands and their bytes on one I/O queue, for the SMART / Health log page (data units
 * read/written, host read/write commands). Written by the queue's poller only, with opaque stores (a plain move on
 * x86-64: no fence, no lock, no allocation on the data path); read from the admin poller with opaque loads.
 */
final class IoCounters {
    static final int READS = 0;
    static final int WRITES = 1;
    static final int READ_BYTES = 2;
    static final int WRITTEN_BYTES = 3;
    static final int COUNT = 4;
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] values = new long[COUNT];

    /** Owning poller: a READ or WRITE of {@code bytes} completed successfully (other opcodes are ignored). */
    void completed(int opcode, long bytes) {
        if (opcode == Opcodes.IO_READ) {
            bump(READS, 1);
            bump(READ_BYTES, bytes);
        } else if (opcode == Opcodes.IO_WRITE) {
            bump(WRITES, 1);
            bump(WRITTEN_BYTES, bytes);
        }
    }

    private void bump(int i, long delta) {
        ELEMENT.setOpaque(values, i, (long) ELEMENT.getOpaque(values, i) + delta);
    }

    /** Any thread: adds the current values to {@code sums} (length {@link #COUNT}). */
    void addTo(long[] sums) {
        for (int i = 0; i < COUNT; i++) {
            sums[i] += (long) ELEMENT.getOpaque(values, i);
        }
    }
}
