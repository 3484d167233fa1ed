package io.rdmablock.initiator;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A remote volume (one NVMe namespace behind one controller) as a block device.
 *
 * <p>Offsets and lengths are in bytes and must be non-negative multiples of {@link #lbaSize()}; violations fail the
 * returned future with {@link IllegalArgumentException} naming the field and bounds, before anything is sent. I/O
 * must lie within {@code [0, capacityBytes())}: a range beyond the capacity known to the host first re-reads the
 * namespace size once (a volume may have grown), and if it is still beyond, fails with {@link NvmeStatusException}
 * LBA Out of Range (sct 0, sc 0x80), the status the node would answer. Zero-length I/O completes at once without a
 * command (NVMe cannot express it: NLB is 0-based). I/O larger than the controller's maximum transfer (MDTS) is
 * split transparently. When every slot of every queue is busy, new I/O waits on the host side; it never fails for
 * that.
 *
 * <p>Buffers: any native {@link MemorySegment} that other threads may access is accepted (global, shared or auto
 * arena; a segment confined to the calling thread is rejected with {@link IllegalArgumentException}); segments from
 * {@link #allocateBuffer} are registered memory and move without a copy (zero-copy path); other segments are staged
 * through registered bounce buffers. Heap segments are rejected. The caller must not touch a buffer until its
 * future completes; a staged READ whose segment was closed meanwhile fails with {@link IllegalArgumentException}
 * (the association is kept). Every returned future completes: with the result, an error, or at the latest when
 * the command or controller-loss timeout expires.
 *
 * <p>Failures: a command that completes with an NVMe error status fails the future with {@link NvmeStatusException}
 * carrying SCT/SC; a command that times out, or is outstanding when the controller-loss timeout expires, fails
 * with {@link java.util.concurrent.TimeoutException} (the association is then reset so the node can no longer
 * touch the buffer) or {@link DeviceLostException}. While the association is being re-established, outstanding I/O
 * is held and resubmitted; it fails when the controller-loss timeout expires, or with {@link BlockIoException} once
 * it was sent 5 times and each attempt ended in a lost association. A future fails only once the node can no longer
 * touch its buffer; an I/O split into several commands completes once all of them did.
 *
 * <p>All methods are thread-safe. Futures complete on an internal thread: do not block in their callbacks.
 */
public interface BlockDevice extends AutoCloseable {

    /** Capacity in bytes (namespace size x LBA size); refreshed when the namespace is resized. */
    long capacityBytes();

    /**
     * Re-reads the capacity from the target (NVMe Identify Namespace) and completes with it in bytes; also updates
     * {@link #capacityBytes()}. When the re-read fails or there is no live association, completes with the capacity
     * known so far (never exceptionally). Devices without a remote size complete with {@link #capacityBytes()}.
     */
    default CompletableFuture<Long> refreshCapacity() {
        return CompletableFuture.completedFuture(capacityBytes());
    }

    /**
     * Why the device can serve no more I/O (closed, or the controller was declared lost: controller-loss timeout
     * expired or a reconnect was rejected for good), or null while it can. Once non-null, every I/O fails with
     * {@link DeviceLostException}.
     */
    default String lossReason() {
        return null;
    }

    /** Logical block size in bytes (512 or 4096). */
    int lbaSize();

    /** Maximum bytes per command on the wire (MDTS); larger I/O is split. */
    int maxTransferBytes();

    /** True when a deallocated (trimmed) range is guaranteed to read zeroes (NVMe DLFEAT read behaviour 001b). */
    boolean zeroesAfterTrim();

    /** Reads {@code dst.byteSize()} bytes at {@code offsetBytes} into {@code dst}. */
    CompletableFuture<Void> read(long offsetBytes, MemorySegment dst);

    /**
     * Reads {@code dst.byteSize()} bytes at {@code offsetBytes} of snapshot {@code snapshotId} of the volume (the
     * management plane's id) into {@code dst}: rdmablock's vendor command Read Snapshot (82h, docs/wire-protocol.md
     * section 7.2), served by the volume's primary from the snapshot's read-only view; it never writes. Fails with
     * {@link NvmeStatusException} Invalid Field (SC 02h) when the node holds no snapshot of that id, LBA Out of Range
     * (SC 80h) beyond the snapshot's size. Default (devices that are no rdmablock volume): fails with
     * {@link UnsupportedOperationException}.
     */
    default CompletableFuture<Void> readSnapshot(long snapshotId, long offsetBytes, MemorySegment dst) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException(
                "reading a snapshot needs an rdmablock volume over NVMe-oF"));
    }

    /** Writes {@code src} at {@code offsetBytes}; with {@code fua} the data is durable when the future completes. */
    CompletableFuture<Void> write(long offsetBytes, MemorySegment src, boolean fua);

    /** Makes every write completed before this call durable (NVMe FLUSH). */
    CompletableFuture<Void> flush();

    /** Writes zeroes over the range (NVMe WRITE ZEROES); reads of it return zeroes afterwards. */
    CompletableFuture<Void> writeZeroes(long offsetBytes, long lengthBytes);

    /** Deallocates the range (NVMe DATASET MANAGEMENT, deallocate). */
    CompletableFuture<Void> trim(long offsetBytes, long lengthBytes);

    /**
     * Allocates a registered, page-aligned buffer of {@code lengthBytes} for zero-copy I/O; release it with
     * {@link #freeBuffer}. Fails with {@link IllegalArgumentException} if larger than the pool allows.
     */
    MemorySegment allocateBuffer(long lengthBytes);

    /** Returns a buffer from {@link #allocateBuffer}. */
    void freeBuffer(MemorySegment buffer);

    /** Fails new I/O, fails outstanding I/O with {@link DeviceLostException}, disconnects. Idempotent. */
    @Override
    void close();

    // ---- synchronous wrappers -------------------------------------------------------------------------------
    // They wait without a bound of their own (the device's timeouts end every I/O) and must not be called from a
    // completion callback: those run on the device's threads (IllegalStateException there).

    default void readSync(long offsetBytes, MemorySegment dst) {
        join(read(offsetBytes, dst));
    }

    default void writeSync(long offsetBytes, MemorySegment src, boolean fua) {
        join(write(offsetBytes, src, fua));
    }

    default void flushSync() {
        join(flush());
    }

    default void writeZeroesSync(long offsetBytes, long lengthBytes) {
        join(writeZeroes(offsetBytes, lengthBytes));
    }

    default void trimSync(long offsetBytes, long lengthBytes) {
        join(trim(offsetBytes, lengthBytes));
    }

    /**
     * Waits for {@code f}, rethrowing its failure unwrapped (RuntimeException as is, others wrapped).
     *
     * @throws IllegalStateException when called on a device's poller or controller thread (from a completion
     *                               callback) while {@code f} is not done: the wait could never end there
     */
    static void join(CompletableFuture<?> f) {
        if (!f.isDone() && IoQueue.DEVICE_THREAD.get()) {
            throw new IllegalStateException("synchronous I/O from a completion callback (thread "
                    + Thread.currentThread().getName() + ") would wait for the thread that must complete it; "
                    + "use the asynchronous methods (read/write/flush...) there");
        }
        try {
            f.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new BlockIoException(c.getMessage(), c);
        }
    }
}
