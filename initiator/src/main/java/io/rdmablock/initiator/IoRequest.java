package io.rdmablock.initiator;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One NVM command as the application asked for it: opcode, LBA range and data buffer. It is its own future (one
 * allocation per I/O) and its own node in the {@link SubmissionStack}. A request belonging to a split I/O (above
 * MDTS, or above a command's block-count limit) reports to its {@link Split} parent instead of completing itself.
 */
final class IoRequest extends CompletableFuture<Void> {
    /** {@link #nsid} value meaning "the namespace the device was opened on" (FFFFFFFEh is no valid nsid). */
    static final int DEVICE_NSID = 0xFFFFFFFE;
    /** NVM opcode ({@link io.rdmablock.rdma.fabric.Opcodes}). */
    final int opcode;
    final long slba;
    /** Logical blocks, 1-based; for DSM the range length. */
    final int blockCount;
    /** READ/WRITE data (exactly blockCount x lbaSize bytes), else null. */
    final MemorySegment data;
    /** Extra cdw12 bits (FUA). */
    final int cdw12Flags;
    final Split parent;
    /** Link in the submission stack / the poller's pending list. */
    IoRequest next;
    /** Namespace id on the wire: {@link #DEVICE_NSID} for the device's (tests put invalid ones here). */
    int nsid = DEVICE_NSID;
    /** Raw-command hook for tests: keyed SGL length to send instead of the buffer length; -1 = the buffer's. */
    int sglBytes = io.rdmablock.nvmf.host.CapsuleBuilder.SGL_BYTES_OF_DATA;
    /** {@link io.rdmablock.rdma.fabric.Opcodes#IO_READ_SNAPSHOT}: the snapshot's id (CDW14-15); else 0. */
    long snapshotId;
    /** Times this request was put on the wire (resubmission after a reconnect raises it). */
    int attempts;
    /** When it was first answered Namespace Not Ready ({@link System#nanoTime}), 0 never ({@link NotReadyRetries}). */
    long notReadySinceNs;
    /** Submission order within its device (queue choice; a multipath failover resubmits in this order). */
    long seq;

    IoRequest(int opcode, long slba, int blockCount, MemorySegment data, int cdw12Flags, Split parent) {
        this.opcode = opcode;
        this.slba = slba;
        this.blockCount = blockCount;
        this.data = data;
        this.cdw12Flags = cdw12Flags;
        this.parent = parent;
    }

    void succeed() {
        if (parent == null) {
            complete(null);
        } else {
            parent.childDone(null);
        }
    }

    void fail(Throwable t) {
        if (parent == null) {
            completeExceptionally(t);
        } else {
            parent.childDone(t);
        }
    }

    /**
     * The application's future of an I/O split into several commands: completes once every part completed, with the
     * first part's failure if any. Never earlier: until then other parts may still move data to or from the caller's
     * buffer, which the caller may reuse as soon as the future completes.
     */
    static final class Split extends CompletableFuture<Void> {
        private final AtomicInteger remaining;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Split(int parts) {
            remaining = new AtomicInteger(parts);
        }

        void childDone(Throwable t) {
            if (t != null) {
                failure.compareAndSet(null, t);
            }
            if (remaining.decrementAndGet() == 0) {
                Throwable f = failure.get();
                if (f == null) {
                    complete(null);
                } else {
                    completeExceptionally(f);
                }
            }
        }
    }
}
