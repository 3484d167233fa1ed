package io.rdmablock.rdma.verbs;

import java.lang.foreign.MemorySegment;

/** A protection domain ({@code ibv_pd}). Close with {@link #close()} ({@code ibv_dealloc_pd(3)}); idempotent. */
public interface ProtectionDomain extends AutoCloseable {

    /**
     * Registers memory ({@code ibv_reg_mr(3)}).
     *
     * @param segment native segment (heap segments are rejected); page-aligned segments are recommended; the caller
     *                keeps it alive at least until the region is closed
     * @param access  bitwise OR of {@link Access} flags ({@link Access#LOCAL_WRITE} is required with either REMOTE_WRITE
     *                or REMOTE_READ-sinks, as in ibverbs)
     * @throws IllegalArgumentException for a heap segment, zero length or unknown access bits
     * @throws VerbsException naming errno and {@code lengthBytes} when the registration fails
     */
    MemoryRegion registerMemory(MemorySegment segment, int access);

    @Override
    void close();
}
