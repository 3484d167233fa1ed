package io.rdmablock.node.store;

import java.lang.foreign.MemorySegment;

/**
 * An asynchronous I/O queue onto the volumes of one {@link VolumeStore}: one per target poller thread.
 *
 * <p><b>Threading:</b> not thread-safe; every method must be called from the owning thread (the one poller that
 * serves an NVMe queue). No locks, no allocation per I/O: everything is preallocated for {@link #capacity()} commands
 * in flight.
 *
 * <p><b>Flow:</b> {@code submit*} queues a command and returns at once; queued commands reach the kernel at the next
 * {@link #submit()} or {@link #reap} (so a batch of commands costs one system call on io_uring). {@link #reap} is
 * non-blocking and returns completions in completion order, not submission order; {@link #awaitCompletion} blocks
 * with a timeout. A command counts against {@link #capacity()} from its submit until it is reaped; a submit when
 * {@link #inFlight()} == {@link #capacity()} throws {@link IllegalStateException} (the caller sizes the queue to its
 * NVMe queue depth).
 *
 * <p><b>Arguments</b> (checked at submit; a violation throws {@link IllegalArgumentException} naming the field and its
 * bounds, nothing is queued): {@code offsetBytes} and lengths are multiples of the volume's LBA size, the range lies
 * within {@code [0, volume.sizeBytes())}, the length is at most {@link #MAX_TRANSFER_BYTES}; buffers are native
 * segments ({@code buf.byteSize()} is the transfer length). I/O goes through {@code O_DIRECT} when offset and
 * length meet the file's direct-I/O alignment ({@link VolumeStore#directIoAlignBytes()}); a buffer whose address
 * does not (e.g. in-capsule data at capsule + 64) is staged through a per-slot aligned bounce buffer (one copy);
 * offset or length below that alignment (a 512-byte-LBA volume on a filesystem that needs 4096) goes through a
 * second, buffered descriptor of the same file: correct, through the page cache. Page-aligned buffers take the
 * zero-copy path. A zero-length command
 * completes successfully without touching the volume. A command on a deleted volume completes with
 * {@code -ENXIO}.
 *
 * <p><b>Results:</b> {@code 0} on success, or {@code -errno} (e.g. {@code -5} EIO, {@code -28} ENOSPC) as reported by
 * the kernel for that command; a short read or write is reported as {@code -EIO}.
 *
 * <p><b>Semantics</b> (NVMe volatile write cache): a completed write may be lost on crash until a FLUSH completes
 * ({@code fdatasync}, which covers every write completed before the FLUSH was submitted) or if written with FUA
 * ({@code RWF_DSYNC}: durable when it completes). WRITE ZEROES always reads zero afterwards
 * ({@code fallocate(FALLOC_FL_ZERO_RANGE)} or {@code PUNCH_HOLE}). TRIM deallocates
 * ({@code fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE)}); it reads zero afterwards exactly when
 * {@link VolumeStore#zeroesAfterTrim()} says so.
 *
 * <p><b>Use from a target poller</b> (one queue per NVMe I/O queue, capacity = its queue depth, sqsize + 1):
 * <pre>{@code
 * BlockQueue q = store.newQueue(sqsize + 1);
 * q.registerBuffers(registeredPool);                 // once: the RDMA buffer pool the data moves through
 * ...
 * q.submitRead(volume, slba * lbaSize, buf, cid);    // per command capsule; no system call yet
 * int n = q.reap(userData, result, max);             // per poll round: submits the batch, collects completions
 * for (int i = 0; i < n; i++) respond((int) userData[i], result[i]);
 * }</pre>
 * A possible status mapping: {@code 0} success; {@code -ENOSPC} Capacity Exceeded (generic, 0x81); {@code -EIO}
 * on READ Unrecovered Read Error (media, 0x81), on WRITE/FLUSH Write Fault (media, 0x80); {@code -ENXIO} Namespace
 * Not Ready (generic, 0x82); anything else Internal Error (generic, 0x06).
 *
 * <p><b>Lifetime:</b> {@link #close()} waits (bounded) for commands in flight, then releases the ring or workers;
 * it is idempotent.
 */
public interface BlockQueue extends AutoCloseable {

    /** Largest transfer per READ/WRITE command: 1 GiB. */
    int MAX_TRANSFER_BYTES = 1 << 30;

    /** Reads {@code buf.byteSize()} bytes at {@code offsetBytes} of {@code volume} into {@code buf}. */
    void submitRead(StoreVolume volume, long offsetBytes, MemorySegment buf, long userData);

    /**
     * Writes {@code buf} at {@code offsetBytes}. With {@code fua} the data is durable when the command completes
     * (NVMe Force Unit Access).
     */
    void submitWrite(StoreVolume volume, long offsetBytes, MemorySegment buf, boolean fua, long userData);

    /** Makes every write on {@code volume} completed before this submit durable (NVMe FLUSH). */
    void submitFlush(StoreVolume volume, long userData);

    /** Zeroes {@code lengthBytes} at {@code offsetBytes}; they read zero afterwards (NVMe WRITE ZEROES). */
    void submitWriteZeroes(StoreVolume volume, long offsetBytes, long lengthBytes, long userData);

    /** Deallocates {@code lengthBytes} at {@code offsetBytes} (NVMe DATASET MANAGEMENT, deallocate). */
    void submitTrim(StoreVolume volume, long offsetBytes, long lengthBytes, long userData);

    /**
     * Optional: declares the memory regions that I/O buffers will be slices of (e.g. the target's registered RDMA
     * buffer pool), so the io_uring backend registers them once (IORING_REGISTER_BUFFERS) and reads/writes into them
     * skip per-I/O page pinning. Call once, before the first submit; the regions must stay allocated until
     * {@link #close()}. Buffers outside the regions still work. A no-op on the thread-pool backend, and where the
     * kernel refuses (e.g. RLIMIT_MEMLOCK; logged once).
     *
     * @throws IllegalStateException when commands are in flight
     * @throws IllegalArgumentException when a region is not a native segment
     */
    void registerBuffers(MemorySegment... regions);

    /**
     * Hands queued commands to the kernel (or the worker threads) without waiting.
     *
     * @return the number of commands handed over
     */
    int submit();

    /**
     * Submits what is queued, then copies up to {@code max} completions into {@code userData[i]} / {@code result[i]}
     * (result {@code 0} or {@code -errno}). Never blocks.
     *
     * @return the number of completions copied, {@code 0..min(max, userData.length, result.length)}
     */
    int reap(long[] userData, int[] result, int max);

    /**
     * Submits what is queued, then waits until at least one completion can be reaped or {@code timeoutNs} passes.
     *
     * @return true when a completion is ready
     */
    boolean awaitCompletion(long timeoutNs);

    /** Maximum commands in flight (given at creation). */
    int capacity();

    /** Commands submitted and not yet reaped. */
    int inFlight();

    /** The backend executing this queue. */
    IoBackend backend();

    @Override
    void close();
}
