package io.rdmablock.initiator;

import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.SendWr;
import io.rdmablock.rdma.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Builds the command capsule of each slot of one I/O queue in place, in the queue's registered memory, and the send
 * work request that carries it; everything per slot is preallocated (the bounce buffer on first need).
 *
 * <p>Data placement: a buffer from {@link BlockDevice#allocateBuffer} becomes a keyed SGL to the caller's memory (zero
 * copy); a write of at most {@link #inCapsuleBytes} goes in-capsule (offset SGL; a second SGE points at the caller's
 * registered buffer, other memory is copied behind the SQE); any other native memory is staged through the slot's
 * registered bounce buffer. Commands without data carry a keyed SGL of length 0 (as Linux nvme-rdma does). Sends are
 * signaled every {@link QueueConnection#SIGNAL_INTERVAL}th so the send queue drains. Owned by the poller thread.
 */
final class CapsuleBuilder implements AutoCloseable {
    private final RegisteredBuffers buffers;
    private final ProtectionDomain pd;
    private final QueueMemory mem;
    private final SendWr[] sendWrs;
    private final MemorySegment[] capsules;
    private final MemorySegment[] sqes;
    private final MemorySegment[] capsuleData;
    private final MemorySegment[] sgls;
    private final boolean[] bounced;
    private final MemorySegment[] bounce;
    private final MemoryRegion[] bounceMr;
    private final Arena bounceArena = Arena.ofShared();
    private final int bounceBytes;
    private volatile int inCapsuleBytes;
    private volatile int nsid = 1;
    private int sendsSinceSignal;

    CapsuleBuilder(RegisteredBuffers buffers, ProtectionDomain pd, QueueMemory mem, int slots, int inCapsuleBytes,
                   int bounceBytes) {
        this.buffers = buffers;
        this.pd = pd;
        this.mem = mem;
        this.inCapsuleBytes = inCapsuleBytes;
        this.bounceBytes = bounceBytes;
        sendWrs = new SendWr[slots];
        capsules = new MemorySegment[slots];
        sqes = new MemorySegment[slots];
        capsuleData = new MemorySegment[slots];
        sgls = new MemorySegment[slots];
        bounced = new boolean[slots];
        bounce = new MemorySegment[slots];
        bounceMr = new MemoryRegion[slots];
        for (int i = 0; i < slots; i++) {
            capsules[i] = mem.capsule(i);
            sqes[i] = capsules[i].asSlice(0, SqeDescriptor.LENGTH);
            capsuleData[i] = capsules[i].asSlice(SqeDescriptor.LENGTH);
            sgls[i] = SqeDescriptor.sgl1(capsules[i]);
            SendWr wr = new SendWr(2);
            wr.opcode = WrOpcode.SEND;
            wr.wrId = QueueConnection.SEND_TAG | i;
            sendWrs[i] = wr;
        }
    }

    /** The in-capsule size the controller advertised (capped at what the capsule memory holds). */
    void inCapsuleBytes(int advertised) {
        inCapsuleBytes = Math.min(advertised, mem.inCapsuleBytes);
    }

    /** The namespace of the device's commands (the controller's choice on the first association). */
    void nsid(int nsid) {
        this.nsid = nsid;
    }

    /**
     * Writes the SQE of {@code r} with {@code cid} into the slot's capsule and returns its send work request.
     *
     * @throws IllegalStateException or {@link WrongThreadException} when the caller's segment cannot be read here
     */
    SendWr prepare(int slot, int cid, IoRequest r) {
        MemorySegment cap = capsules[slot];
        MemorySegment sgl = sgls[slot];
        SendWr wr = sendWrs[slot];
        sqes[slot].fill((byte) 0);
        SqeDescriptor.opcode(cap, r.opcode);
        SqeDescriptor.flags(cap, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(cap, cid);
        SqeDescriptor.nsid(cap, r.nsid == IoRequest.DEVICE_NSID ? nsid : r.nsid);
        int sqeBytes = SqeDescriptor.LENGTH;
        wr.numSge = 1;
        bounced[slot] = false;
        switch (r.opcode) {
            case Opcodes.IO_READ, Opcodes.IO_WRITE -> {
                SqeDescriptor.slba(cap, r.slba);
                SqeDescriptor.blockCount(cap, r.blockCount, r.cdw12Flags);
                MemorySegment data = r.data;
                int len = (int) data.byteSize();
                long addr = data.address();
                MemoryRegion mr = buffers.find(addr, len);
                boolean write = r.opcode == Opcodes.IO_WRITE;
                if (r.sglBytes >= 0) {
                    SglDescriptor.keyed(sgl, addr, r.sglBytes, mr == null ? 0 : mr.rkey()); // raw test hook
                } else if (write && len <= inCapsuleBytes) {
                    SglDescriptor.inCapsule(sgl, 0, len);
                    if (mr != null) {
                        wr.sgList[1].set(addr, len, mr.lkey());
                        wr.numSge = 2;
                    } else {
                        MemorySegment.copy(data, 0, capsuleData[slot], 0, len);
                        sqeBytes += len;
                    }
                } else if (mr != null) {
                    SglDescriptor.keyed(sgl, addr, len, mr.rkey());
                } else {
                    MemorySegment b = bounce(slot);
                    if (write) {
                        MemorySegment.copy(data, 0, b, 0, len);
                    }
                    bounced[slot] = true;
                    SglDescriptor.keyed(sgl, b.address(), len, bounceMr[slot].rkey());
                }
            }
            case Opcodes.IO_WRITE_ZEROES -> {
                SqeDescriptor.slba(cap, r.slba);
                SqeDescriptor.blockCount(cap, r.blockCount, 0);
                SglDescriptor.keyed(sgl, 0, 0, 0);
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> {
                SqeDescriptor.cdw(cap, 10, 0); // NR = 0: one range
                SqeDescriptor.cdw(cap, 11, SqeDescriptor.DSM_CDW11_AD);
                if (inCapsuleBytes >= DsmRangeDescriptor.LENGTH) {
                    DsmRangeDescriptor.set(capsuleData[slot], 0, r.slba, r.blockCount);
                    SglDescriptor.inCapsule(sgl, 0, DsmRangeDescriptor.LENGTH);
                    sqeBytes += DsmRangeDescriptor.LENGTH;
                } else {
                    MemorySegment b = bounce(slot);
                    DsmRangeDescriptor.set(b, 0, r.slba, r.blockCount);
                    SglDescriptor.keyed(sgl, b.address(), DsmRangeDescriptor.LENGTH, bounceMr[slot].rkey());
                }
            }
            default -> SglDescriptor.keyed(sgl, 0, 0, 0); // FLUSH: no data
        }
        wr.sgList[0].set(mem.mr, mem.capsuleOffset(slot), sqeBytes);
        if (++sendsSinceSignal >= QueueConnection.SIGNAL_INTERVAL) {
            sendsSinceSignal = 0;
            wr.sendFlags = SendWr.SIGNALED;
        } else {
            wr.sendFlags = 0;
        }
        return wr;
    }

    /** After a successful READ: copies the bounce buffer to the caller's segment when the slot used one. */
    void copyOutBounce(int slot, IoRequest r) {
        if (bounced[slot]) {
            MemorySegment.copy(bounce[slot], 0, r.data, 0, r.data.byteSize());
        }
    }

    private MemorySegment bounce(int slot) {
        MemorySegment b = bounce[slot];
        if (b == null) {
            b = bounceArena.allocate(bounceBytes, RegisteredBuffers.PAGE_BYTES);
            bounceMr[slot] = pd.registerMemory(b, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            bounce[slot] = b;
        }
        return b;
    }

    @Override
    public void close() {
        for (MemoryRegion mr : bounceMr) {
            if (mr != null) {
                mr.close();
            }
        }
        bounceArena.close();
    }
}
