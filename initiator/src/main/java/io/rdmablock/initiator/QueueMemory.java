package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.CqeDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The registered memory of one queue, allocated and registered once for the life of the device (it survives
 * reconnects): one page-aligned segment, one memory region (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE).
 *
 * <pre>
 *  0                         capsules: capsuleCount x capsuleStride (64-byte SQE + in-capsule data, 64-aligned)
 *  cqeOffset                 response buffers: entries x 16 (one posted RECV each)
 *  connectDataOffset         1024-byte Connect data (RDMA READ by the node)
 *  identifyOffset            4096-byte Identify data (RDMA WRITE by the node)
 * </pre>
 */
final class QueueMemory implements AutoCloseable {
    static final int IDENTIFY_BYTES = 4096;

    final int capsuleCount;
    final int capsuleStride;
    /** In-capsule data bytes that fit behind each SQE. */
    final int inCapsuleBytes;
    final int entries;
    private final Arena arena;
    final MemorySegment segment;
    final MemoryRegion mr;
    private final long cqeOffset;
    private final long connectDataOffset;
    private final long identifyOffset;

    /**
     * @param capsuleCount   command slots
     * @param inCapsuleBytes in-capsule data per capsule (0 .. 1 MiB)
     * @param entries        response buffers (queue entries)
     */
    QueueMemory(ProtectionDomain pd, int capsuleCount, int inCapsuleBytes, int entries) {
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

    long capsuleOffset(int slot) {
        return (long) slot * capsuleStride;
    }

    MemorySegment capsule(int slot) {
        return segment.asSlice(capsuleOffset(slot), capsuleStride);
    }

    long cqeOffset(int index) {
        return cqeOffset + (long) index * CqeDescriptor.LENGTH;
    }

    MemorySegment cqe(int index) {
        return segment.asSlice(cqeOffset(index), CqeDescriptor.LENGTH);
    }

    long connectDataOffset() {
        return connectDataOffset;
    }

    MemorySegment connectData() {
        return segment.asSlice(connectDataOffset, ConnectDataDescriptor.DATA_LENGTH);
    }

    long identifyOffset() {
        return identifyOffset;
    }

    MemorySegment identify() {
        return segment.asSlice(identifyOffset, IDENTIFY_BYTES);
    }

    @Override
    public void close() {
        mr.close();
        arena.close();
    }
}
