/**
 * The flash-backed volume store of a storage node.
 *
 * <p>{@link io.rdmablock.node.store.VolumeStore} owns a data directory: metadata (volume table, allocation map) in
 * RocksDB under {@code <dataDir>/meta}, one sparse data file per volume under {@code <dataDir>/volumes/<id>.vol},
 * opened with {@code O_DIRECT}. {@link io.rdmablock.node.store.BlockQueue} is the data path: one per target poller
 * thread, preallocated, no locks per I/O, asynchronous through io_uring (a minimal binding written with
 * {@code java.lang.foreign} over the raw syscalls, see {@code io_uring_setup(2)}, {@code io_uring_enter(2)}) or,
 * where io_uring is unavailable, through a thread pool.
 *
 * <p>Write semantics are those of an NVMe namespace with a volatile write cache (NVMe Base Spec 2.0, 5.15.2.3 and
 * the Flush command): a completed write may be lost on a crash until a FLUSH (fdatasync) completes or unless it was
 * written with FUA ({@code RWF_DSYNC}); data covered by a completed FLUSH survives {@code kill -9} of the node
 * process and power loss (to the extent the device honours cache flushes). A process kill never tears a block.
 */
package io.rdmablock.node.store;
