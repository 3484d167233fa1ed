/**
 * The flash-backed volume store of a storage node.
 *
 * <h2>Shape</h2>
 * {@link io.rdmablock.node.store.VolumeStore} owns a data directory: metadata (volume table, cluster maps,
 * snapshots) in RocksDB under {@code <dataDir>/meta}, one sparse data file per volume under
 * {@code <dataDir>/volumes/<id>.vol}. A <em>mapped</em> volume (every volume created since snapshots exist, unless
 * {@code rdmablock.store.clusterBytes=0}) addresses its data through a cluster map with redirect-on-write
 * ({@link io.rdmablock.node.store.ClusterMap}, {@link io.rdmablock.node.store.Snapshots}; docs/snapshots.md): the
 * file is a heap of clusters. A <em>flat</em> volume (made before, thick, or of the null backend) has a file exactly
 * {@code sizeBytes} long, byte {@code n} of the volume at byte {@code n} of the file. The data path is the same
 * {@link io.rdmablock.node.store.BlockQueue} for both; the paragraphs below describe I/O on the file.
 * {@link io.rdmablock.node.store.BlockQueue} is the data path: one per target poller thread, preallocated, no locks
 * and no allocation per I/O, asynchronous through io_uring (a minimal binding written with {@code java.lang.foreign}
 * over the raw syscalls: {@code io_uring_setup(2)}, {@code io_uring_enter(2)}, {@code io_uring_register(2)}; rings
 * mmapped; SQEs written in place; release/acquire on ring indices) or, where io_uring is unavailable, through a
 * thread pool ({@link io.rdmablock.node.store.IoBackend}; one log line at open says which and why).
 *
 * <h2>Durability (NVMe volatile write cache, NVMe Base Spec 2.0 Flush command and FUA)</h2>
 * A completed write may sit in the page cache or the device cache: lost on power loss until a FLUSH
 * ({@code fdatasync}) completes, unless written with FUA ({@code RWF_DSYNC}). Data covered by a completed FLUSH
 * survives {@code kill -9} of the node process and power loss (as far as the device honours cache flushes). A process
 * kill never tears a block: a write handed to the kernel completes whole. Volume-table changes are synchronous
 * RocksDB writes ordered with the file operations, so reopening after a crash recovers every volume (half-created
 * ones are rolled back, half-deleted ones finished, orphan files removed).
 *
 * <h2>Alignment</h2>
 * Each data file is opened twice: with {@code O_DIRECT} (no page cache) and buffered. A READ/WRITE whose offset and
 * length meet the file's direct-I/O alignment ({@code statx(2)} {@code STATX_DIOALIGN}, else 4096) goes through the
 * {@code O_DIRECT} descriptor, straight from the caller's buffer when its address is aligned too, else through a
 * per-slot aligned bounce buffer (one copy; e.g. in-capsule data). Offset or length below that alignment (a
 * 512-byte-LBA volume on a filesystem that needs 4096) goes through the buffered descriptor: correct without a
 * read-modify-write of ours, because the kernel writes back dirty cached pages of a range before an
 * {@code O_DIRECT} read of it and drops them after an {@code O_DIRECT} write, and {@code fdatasync} on either
 * descriptor covers the whole inode. This relies on the direct-I/O alignment being at least the page size whenever
 * it exceeds the LBA size (true for 512/4096 devices): then an aligned {@code O_DIRECT} write covers whole pages and
 * never shares a page with a non-overlapping buffered write.
 *
 * <h2>Deallocation</h2>
 * TRIM is {@code fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)}: trimmed ranges then read zero, and
 * {@link io.rdmablock.node.store.VolumeStore#zeroesAfterTrim()} says so (true only when the filesystem supports
 * punching holes; otherwise TRIM is accepted as a no-op). WRITE ZEROES is {@code FALLOC_FL_ZERO_RANGE} (else punch
 * hole, else written zeroes) and always reads zero afterwards. On a flat volume the chunk map (one bit per 1 MiB
 * chunk, set on the first write into it) is accounting for thin provisioning only; on a mapped volume a TRIM or
 * WRITE ZEROES of a whole cluster unmaps it (it reads zero and its space is freed once no snapshot holds it).
 */
package io.rdmablock.node.store;
