package io.rdmablock.node.store;

/**
 * How {@link BlockQueue}s execute I/O. Chosen once per {@link VolumeStore} with the system property
 * {@code rdmablock.store.backend} = {@code auto} (default) | {@code io_uring} | {@code threadpool}, or with
 * {@link StoreOptions#backend()}.
 */
public enum IoBackend {
    /** Linux io_uring (kernel 5.6+): submissions and completions through shared rings, one ring per queue. */
    IO_URING,
    /** Worker threads doing {@code pread}/{@code pwritev2}/{@code fdatasync}/{@code fallocate}; completions through a
     * lock-free queue. Used when io_uring is unavailable (ENOSYS, EPERM in sandboxes, io_uring_disabled=2). */
    THREAD_POOL,
    /**
     * Benchmark only, <b>breaks durability by design</b> ({@link NullBlockQueue}): writes complete without storing
     * anything, reads return zeros, FLUSH completes. For stack-only figures ({@code rdmablock bench --stack-only},
     * {@code rdmablock node --store null}); never chosen by {@code auto} nor by {@code rdmablock.store.backend}.
     */
    NULL
}
