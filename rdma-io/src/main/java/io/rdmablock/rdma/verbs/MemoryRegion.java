package io.rdmablock.rdma.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region ({@code ibv_mr}): {@code [address, address + length)} with its keys.
 * Close with {@link #close()} ({@code ibv_dereg_mr(3)}); idempotent. Thread-safe to read.
 */
public interface MemoryRegion extends AutoCloseable {
    /** The registered segment. */
    MemorySegment segment();

    /** Native start address (the value to put in an SGE or in a keyed SGL). */
    long address();

    /** Length in bytes. */
    long length();

    /** Local key, used in {@link Sge#lkey}. */
    int lkey();

    /** Remote key, sent to the peer in a keyed SGL. */
    int rkey();

    /** Access flags given at registration ({@link Access}). */
    int access();

    @Override
    void close();
}
