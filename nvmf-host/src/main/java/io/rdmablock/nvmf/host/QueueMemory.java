package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The registered memory of one queue, allocated and registered once for the life of its owner (a device's queue
 * survives reconnects with it): one page-aligned segment in a shared arena, one memory region
 * (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE) on the protection domain given.
 *
 * <pre>
 *  0                         capsules: capsuleCount x capsuleStride (64-byte SQE + in-capsule data, 64-aligned)
 *  cqeOffset                 response buffers: entries x 16 (one posted RECV each)
 *  connectDataOffset         1024-byte Connect data (RDMA READ by the node)
 *  identifyOffset            4096-byte Identify data (RDMA WRITE by the node)
 * </pre>
 *
 * <p>Every offset is relative to the segment start (= {@link #mr()} address). Capsule slot {@code i} is at
 * {@code i x capsuleStride}; response buffer {@code i} at {@code cqeOffset(i)}. Not thread-safe by itself: its
 * owner's thread writes capsules, the target writes response buffers and Identify data.
 *
 * @see <a href="https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/nvme/host/rdma.c">
 * Linux drivers/nvme/host/rdma.c</a> ({@code nvme_rdma_alloc_qe}: one registered buffer per SQE / CQE)
 */
public final class QueueMemory implements AutoCloseable {
    /** Bytes of the Identify (and Get Log Page) data area. */
    public static final int IDENTIFY_BYTES = 4096;

    private final int capsuleCount;
    private final int capsuleStride;
    /** In-capsule data bytes that fit behind each SQE. */
    private final int inCapsuleBytes;
    private final int entries;
    private final Arena arena;
    private final MemorySegment segment;
    private final MemoryRegion mr;
    private final long cqeOffset;
    private final long connectDataOffset;
    private final long identifyOffset;
    private boolean closed;

    /**
     * Allocates and registers the memory.
     *
     * @param capsuleCount   command slots, at least 1
     * @param inCapsuleBytes in-capsule data per capsule (0 .. 1 MiB)
     * @param entries        response buffers (queue entries), at least 2
     * @throws IllegalArgumentException when a count is out of range
     * @throws io.rdmablock.rdma.verbs.VerbsException when the registration fails (names errno and length)
     */
    public QueueMemory(ProtectionDomain pd, int capsuleCount, int inCapsuleBytes, int entries) {
        if (capsuleCount < 1 || inCapsuleBytes < 0 || inCapsuleBytes > 1 << 20 || entries < 2) {
            throw new IllegalArgumentException("invalid queue memory: capsuleCount=" + capsuleCount + " (min 1), "
                    + "inCapsuleBytes=" + inCapsuleBytes + " (0 .. 1048576), entries=" + entries + " (min 2)");
        }
        this.capsuleCount = capsuleCount;
        this.inCapsuleBytes = inCapsuleBytes;
        this.capsuleStride = (SqeDescriptor.LENGTH + inCapsuleBytes + 63) & ~63;
        this.entries = entries;
        this.cqeOffset = (long) capsuleCount * capsuleStride;
        this.connectDataOffset = cqeOffset + ((long) entries * CqeDescriptor.LENGTH + 63 & ~63L);
        this.identifyOffset = (connectDataOffset + ConnectDataDescriptor.DATA_LENGTH + 4095) & ~4095L;
        this.arena = Arena.ofShared();
        try {
            segment = arena.allocate(identifyOffset + IDENTIFY_BYTES, RegisteredBuffers.PAGE_BYTES);
            mr = pd.registerMemory(segment, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** The memory of an admin queue of {@code entries}: slot 0 for commands, slot 1 for the AER, no in-capsule data. */
    public static QueueMemory forAdminQueue(ProtectionDomain pd, int entries) {
        return new QueueMemory(pd, 2, 0, entries);
    }

    /** Command slots. */
    public int capsuleCount() {
        return capsuleCount;
    }

    /** Bytes from one capsule to the next: 64-byte SQE + in-capsule data, rounded up to 64. */
    public int capsuleStride() {
        return capsuleStride;
    }

    /** In-capsule data bytes that fit behind each SQE. */
    public int inCapsuleBytes() {
        return inCapsuleBytes;
    }

    /** Response buffers (queue entries). */
    public int entries() {
        return entries;
    }

    /** The whole registered segment. */
    public MemorySegment segment() {
        return segment;
    }

    /** Its memory region: {@code lkey} for local SGEs, {@code rkey} for keyed SGLs the target uses. */
    public MemoryRegion mr() {
        return mr;
    }

    /** Offset of capsule {@code slot}. */
    public long capsuleOffset(int slot) {
        return (long) slot * capsuleStride;
    }

    /** Capsule {@code slot} (SQE + in-capsule data, capsuleStride bytes). */
    public MemorySegment capsule(int slot) {
        return segment.asSlice(capsuleOffset(slot), capsuleStride);
    }

    /** Offset of response buffer {@code index}. */
    public long cqeOffset(int index) {
        return cqeOffset + (long) index * CqeDescriptor.LENGTH;
    }

    /** Response buffer {@code index} (16 bytes). */
    public MemorySegment cqe(int index) {
        return segment.asSlice(cqeOffset(index), CqeDescriptor.LENGTH);
    }

    /** Offset of the 1024-byte Connect data. */
    public long connectDataOffset() {
        return connectDataOffset;
    }

    /** The 1024-byte Connect data. */
    public MemorySegment connectData() {
        return segment.asSlice(connectDataOffset, ConnectDataDescriptor.DATA_LENGTH);
    }

    /** Offset of the 4096-byte Identify data area (page aligned). */
    public long identifyOffset() {
        return identifyOffset;
    }

    /** The 4096-byte Identify data area. */
    public MemorySegment identify() {
        return segment.asSlice(identifyOffset, IDENTIFY_BYTES);
    }

    /** Deregisters and frees the memory (idempotent); close the queue connections that use it first. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        mr.close();
        arena.close();
    }
}
