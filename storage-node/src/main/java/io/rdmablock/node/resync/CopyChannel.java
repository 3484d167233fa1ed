package io.rdmablock.node.resync;

import io.rdmablock.node.replication.ForwardQueue;
import io.rdmablock.node.replication.ReplicaSet;
import io.rdmablock.nvmf.host.NvmCommand;
import io.rdmablock.rdma.fabric.NvmeStatus;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A resync's or verify's own association to one copy (docs/resync.md): a {@link ForwardQueue} opened through the
 * copy's link with a protection domain of its own (its own admin + I/O queue, this node's host NQN, commands carry
 * the set's epoch like forwarded writes), one registered buffer of one region, and one command at a time, driven by
 * the caller's thread (not a poller). WRITE: the copy RDMA-READs the buffer; READ: it RDMA-WRITEs into it.
 */
final class CopyChannel implements AutoCloseable {
    static final int WRITE = 0x01;
    static final int READ = 0x02;
    /** Read Snapshot, rdmablock's vendor I/O command ({@link io.rdmablock.rdma.fabric.Opcodes#IO_READ_SNAPSHOT}). */
    static final int READ_SNAPSHOT = io.rdmablock.rdma.fabric.Opcodes.IO_READ_SNAPSHOT;
    private static final int NONE = Integer.MIN_VALUE;

    private final ForwardQueue queue;
    private final Arena arena;
    private final MemorySegment buffer;
    private final int rkey;
    private final long timeoutNs;
    private final NvmCommand command = new NvmCommand();
    private int answer = NONE;

    private CopyChannel(ForwardQueue queue, Arena arena, MemorySegment buffer, int rkey, long timeoutNs) {
        this.queue = queue;
        this.arena = arena;
        this.buffer = buffer;
        this.rkey = rkey;
        this.timeoutNs = timeoutNs;
    }

    /**
     * Opens the association to {@code copy} and registers a buffer of {@code bufferBytes} (4 KiB aligned).
     *
     * @param timeoutNs     bound of the set-up and of each command
     * @param openTimeoutNs least bound of the set-up ({@code rdmablock.replica.openTimeoutMs})
     * @throws Exception when the copy cannot be reached (set-up failed or took too long)
     */
    static CopyChannel open(ReplicaSet.Copy copy, int bufferBytes, long timeoutNs, long openTimeoutNs)
            throws Exception {
        CopyChannel[] self = new CopyChannel[1];
        ForwardQueue q = copy.link.open(2, null, (tag, status) -> self[0].answer = status)
                .get(Math.max(timeoutNs, openTimeoutNs), TimeUnit.NANOSECONDS);
        Arena arena = Arena.ofShared();
        try {
            MemorySegment buf = arena.allocate(bufferBytes, 4096);
            int rkey = q.register(buf);
            self[0] = new CopyChannel(q, arena, buf, rkey, timeoutNs);
            return self[0];
        } catch (RuntimeException e) {
            q.close();
            arena.close();
            throw e;
        }
    }

    /** The registered buffer (region data goes through it, no other copy). */
    MemorySegment buffer() {
        return buffer;
    }

    /**
     * One NVM command of {@code lengthBytes} at {@code offsetBytes} on the buffer's start, blocking until answered.
     *
     * @throws IOException with the NVMe status when refused, failed or unanswered within the timeout
     */
    void io(int opcode, int nsid, long epoch, long offsetBytes, int lengthBytes, int lbaSize) throws IOException {
        io(opcode, nsid, epoch, offsetBytes, lengthBytes, lbaSize, 0);
    }

    /**
     * As above; {@code snapshotId} goes into CDW14-15 ({@link #READ_SNAPSHOT}, docs/wire-protocol.md section 7.2;
     * 0 for other opcodes).
     */
    void io(int opcode, int nsid, long epoch, long offsetBytes, int lengthBytes, int lbaSize, long snapshotId)
            throws IOException {
        long slba = offsetBytes / lbaSize;
        NvmCommand c = command.clear().opcode(opcode).nsid(nsid).epoch(epoch)
                .cdw(10, (int) slba).cdw(11, (int) (slba >>> 32)).cdw(12, lengthBytes / lbaSize - 1)
                .keyedSgl(buffer.address(), lengthBytes, rkey);
        if (snapshotId != 0) {
            c.cdw(14, (int) snapshotId).cdw(15, (int) (snapshotId >>> 32));
        }
        answer = NONE;
        long deadline = System.nanoTime() + timeoutNs;
        while (!queue.submit(c, 0, System.nanoTime())) {
            step(deadline, "no free slot");
        }
        while (answer == NONE) {
            step(deadline, "no answer");
        }
        if (answer != 0) {
            throw new IOException((opcode == WRITE ? "WRITE" : opcode == READ ? "READ" : "READ SNAPSHOT") + " at "
                    + offsetBytes + " answered "
                    + (answer == ForwardQueue.TIMED_OUT ? "timed out" : answer == ForwardQueue.PATH_LOST
                    ? "path lost" : NvmeStatus.name(answer)));
        }
    }

    private void step(long deadline, String what) throws IOException {
        if (queue.isBroken() && answer == NONE) {
            throw new IOException("association to the copy broken");
        }
        if (System.nanoTime() - deadline > 0) {
            throw new IOException(what + " within " + timeoutNs / 1_000_000 + " ms");
        }
        if (queue.poll(System.nanoTime()) == 0) {
            LockSupport.parkNanos(20_000L);
        }
    }

    /** Closes the queue (the copy can no longer touch the buffer), then frees the buffer. */
    @Override
    public void close() {
        queue.close();
        arena.close();
    }
}
