package io.rdmablock.nvmf.host;

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
 * Builds the command capsule of each slot of one I/O queue in place, in the queue's registered {@link QueueMemory},
 * and the send work request that carries it; everything per slot is preallocated (the bounce buffer on first need),
 * so preparing a command allocates nothing. Capsule = 64-byte SQE followed by in-capsule data (NVMe-oF 1.1 section
 * 2.2; Linux {@code nvme_rdma_map_data}, {@code nvme_rdma_map_sg_inline}, {@code nvme_rdma_map_sg_single}).
 *
 * <p>Two ways in: {@link #prepareBlockIo} with data placement for a block device's READ / WRITE / WRITE ZEROES / DSM
 * / FLUSH — a buffer from {@link RegisteredBuffers} becomes a keyed SGL to the caller's memory (zero copy); a write
 * of at most {@link #inCapsuleBytes} goes in-capsule (offset SGL; a second SGE points at the caller's registered
 * buffer, other memory is copied behind the SQE); any other native memory is staged through the slot's registered
 * bounce buffer; commands without data carry a keyed SGL of length 0 (as Linux). And {@link #prepare(int, int,
 * NvmCommand)}, where the caller gives every field and the keyed SGL itself (no placement, no bounce). Sends are
 * signaled every {@link QueueConnection#SIGNAL_INTERVAL}th so the send queue drains. Owned by the poller thread.
 */
public final class CapsuleBuilder implements AutoCloseable {
    /** {@code sglBytes} value of {@link #prepareBlockIo} meaning "the data segment's length". */
    public static final int SGL_BYTES_OF_DATA = -1;
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
    /** Data transfers staged through a copy (bounce buffer or in-capsule copy); written by the submitting thread. */
    private volatile long copiedTransfers;
    private volatile int inCapsuleBytes;
    /** What the controller advertised, uncapped: data sent from where it lies (a second SGE) needs no capsule room. */
    private volatile int advertisedInCapsuleBytes;
    private int sendsSinceSignal;

    /**
     * @param buffers        the caller's registered data buffers, looked up for zero copy; null when there are none
     * @param pd             the protection domain bounce buffers are registered on (that of {@code mem}); null when
     *                       only {@link #prepare(int, int, NvmCommand)} is used
     * @param slots          command slots, at most {@code mem.capsuleCount()}
     * @param inCapsuleBytes in-capsule data limit until {@link #inCapsuleBytes(int)} (at most mem's)
     * @param bounceBytes    size of a slot's bounce buffer (the largest transfer), 0 when never needed
     */
    public CapsuleBuilder(RegisteredBuffers buffers, ProtectionDomain pd, QueueMemory mem, int slots,
                          int inCapsuleBytes, int bounceBytes) {
        if (slots < 1 || slots > mem.capsuleCount()) {
            throw new IllegalArgumentException("invalid slots: slots=" + slots + ", min=1, max=" + mem.capsuleCount());
        }
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

    /** Command slots (capsules and send work requests). */
    public int slots() {
        return sendWrs.length;
    }

    /** The in-capsule size the controller advertised (capped at what the capsule memory holds). */
    public void inCapsuleBytes(int advertised) {
        advertisedInCapsuleBytes = Math.max(0, advertised);
        inCapsuleBytes = Math.min(advertised, mem.inCapsuleBytes());
    }

    /**
     * Writes the SQE of a caller-composed command with {@code cid} into the slot's capsule (keyed SGL as given,
     * nothing in-capsule) and returns its send work request (not linked: {@code next} is the caller's).
     */
    public SendWr prepare(int slot, int cid, NvmCommand command) {
        command.writeSqe(sqes[slot], cid);
        SendWr wr = sendWrs[slot];
        wr.numSge = 1;
        bounced[slot] = false;
        return finish(slot, wr, SqeDescriptor.LENGTH);
    }

    /**
     * Writes the SQE of a command forwarded as another host sent it: the 64 bytes of {@code hostSqe} (opcode, nsid,
     * CDW10..CDW15 unchanged) with {@code cid}, PSDT = SGL (no fused bits), CDW2..CDW3 = {@code cdw23} (a primary's
     * epoch), MPTR cleared, and SGL1 naming the data: with {@code 0 < length <=} the advertised in-capsule size
     * ({@link #inCapsuleBytes(int)}) and a non-zero {@code lkey}, an offset data block SGL (offset 0, {@code length})
     * and the data sent from {@code address} as the SEND's second SGE (no copy: NVMe-oF 1.1 section 2.3.2 in-capsule
     * data, as Linux nvme-rdma sends small writes); otherwise a keyed SGL naming {@code address}, {@code length}
     * bytes, {@code rkey} for the controller's RDMA READ (length 0: no data). Returns the slot's send work request
     * (not linked). NVMe Base 2.0 figure 88 (SQE layout), NVMe-oF 1.1 section 2.2 (capsule).
     *
     * @param hostSqe the 64-byte SQE to forward (read only; may be any readable segment)
     * @param lkey    the local key of a registered region covering the data on this queue's device, 0 = none
     */
    public SendWr prepareForward(int slot, int cid, MemorySegment hostSqe, long cdw23, long address, int length,
                                 int rkey, int lkey) {
        MemorySegment sqe = sqes[slot];
        MemorySegment.copy(hostSqe, 0, sqe, 0, SqeDescriptor.LENGTH);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, cid);
        SqeDescriptor.cdw23(sqe, cdw23);
        sqe.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, MPTR_OFFSET, 0L);
        SendWr wr = sendWrs[slot];
        bounced[slot] = false;
        if (length > 0 && length <= advertisedInCapsuleBytes && lkey != 0) {
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, length);
            wr.sgList[1].set(address, length, lkey);
            wr.numSge = 2;
        } else {
            SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), address, length, rkey);
            wr.numSge = 1;
        }
        return finish(slot, wr, SqeDescriptor.LENGTH);
    }

    /** SQE bytes 16..23: MPTR (NVMe Base 2.0 figure 88), unused over fabrics. */
    private static final long MPTR_OFFSET = 16;

    /**
     * Writes the SQE of one block I/O with {@code cid} into the slot's capsule, placing its data (see the class
     * comment), and returns its send work request.
     *
     * @param opcode     {@link Opcodes#IO_READ}, {@code IO_WRITE}, {@code IO_WRITE_ZEROES}, {@code
     *                   IO_DATASET_MANAGEMENT} (one range) or {@code IO_FLUSH}
     * @param nsid       the namespace
     * @param blockCount logical blocks, 1-based
     * @param cdw12Flags extra CDW12 bits (FUA)
     * @param data       READ / WRITE data (exactly the transfer), else null
     * @param sglBytes   keyed SGL length to send instead of the data's (a test hook), or {@link #SGL_BYTES_OF_DATA}
     * @throws IllegalStateException or {@link WrongThreadException} when the caller's segment cannot be read here
     */
    public SendWr prepareBlockIo(int slot, int cid, int opcode, int nsid, long slba, int blockCount,
                                 int cdw12Flags, MemorySegment data, int sglBytes) {
        return prepareBlockIo(slot, cid, opcode, nsid, slba, blockCount, cdw12Flags, data, sglBytes, 0);
    }

    /**
     * As {@link #prepareBlockIo(int, int, int, int, long, int, int, MemorySegment, int)}, also for
     * {@link Opcodes#IO_READ_SNAPSHOT} (placed as a READ), whose {@code snapshotId} goes into CDW14 (bits 31:0) and
     * CDW15 (bits 63:32); other opcodes ignore it.
     */
    public SendWr prepareBlockIo(int slot, int cid, int opcode, int nsid, long slba, int blockCount,
                                 int cdw12Flags, MemorySegment data, int sglBytes, long snapshotId) {
        MemorySegment cap = capsules[slot];
        MemorySegment sgl = sgls[slot];
        SendWr wr = sendWrs[slot];
        sqes[slot].fill((byte) 0);
        SqeDescriptor.opcode(cap, opcode);
        SqeDescriptor.flags(cap, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(cap, cid);
        SqeDescriptor.nsid(cap, nsid);
        int sqeBytes = SqeDescriptor.LENGTH;
        wr.numSge = 1;
        bounced[slot] = false;
        switch (opcode) {
            case Opcodes.IO_READ, Opcodes.IO_WRITE, Opcodes.IO_READ_SNAPSHOT -> {
                if (opcode == Opcodes.IO_READ_SNAPSHOT) {
                    SqeDescriptor.cdw(cap, 14, (int) snapshotId);
                    SqeDescriptor.cdw(cap, 15, (int) (snapshotId >>> 32));
                }
                SqeDescriptor.slba(cap, slba);
                SqeDescriptor.blockCount(cap, blockCount, cdw12Flags);
                int len = (int) data.byteSize();
                long addr = data.address();
                MemoryRegion mr = buffers == null ? null : buffers.find(addr, len);
                boolean write = opcode == Opcodes.IO_WRITE;
                if (sglBytes >= 0) {
                    SglDescriptor.keyed(sgl, addr, sglBytes, mr == null ? 0 : mr.rkey()); // raw test hook
                } else if (write && len <= inCapsuleBytes) {
                    SglDescriptor.inCapsule(sgl, 0, len);
                    if (mr != null) {
                        wr.sgList[1].set(addr, len, mr.lkey());
                        wr.numSge = 2;
                    } else {
                        MemorySegment.copy(data, 0, capsuleData[slot], 0, len);
                        sqeBytes += len;
                        copiedTransfers++; // one writer (the slot's submitter)
                    }
                } else if (mr != null) {
                    SglDescriptor.keyed(sgl, addr, len, mr.rkey());
                } else {
                    MemorySegment b = bounce(slot);
                    if (write) {
                        MemorySegment.copy(data, 0, b, 0, len);
                    }
                    bounced[slot] = true;
                    copiedTransfers++; // one writer (the slot's submitter)
                    SglDescriptor.keyed(sgl, b.address(), len, bounceMr[slot].rkey());
                }
            }
            case Opcodes.IO_WRITE_ZEROES -> {
                SqeDescriptor.slba(cap, slba);
                SqeDescriptor.blockCount(cap, blockCount, 0);
                SglDescriptor.keyed(sgl, 0, 0, 0);
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> {
                SqeDescriptor.cdw(cap, 10, 0); // NR = 0: one range
                SqeDescriptor.cdw(cap, 11, SqeDescriptor.DSM_CDW11_AD);
                if (inCapsuleBytes >= DsmRangeDescriptor.LENGTH) {
                    DsmRangeDescriptor.set(capsuleData[slot], 0, slba, blockCount);
                    SglDescriptor.inCapsule(sgl, 0, DsmRangeDescriptor.LENGTH);
                    sqeBytes += DsmRangeDescriptor.LENGTH;
                } else {
                    MemorySegment b = bounce(slot);
                    DsmRangeDescriptor.set(b, 0, slba, blockCount);
                    SglDescriptor.keyed(sgl, b.address(), DsmRangeDescriptor.LENGTH, bounceMr[slot].rkey());
                }
            }
            default -> SglDescriptor.keyed(sgl, 0, 0, 0); // FLUSH: no data
        }
        return finish(slot, wr, sqeBytes);
    }

    private SendWr finish(int slot, SendWr wr, int sqeBytes) {
        wr.sgList[0].set(mem.mr(), mem.capsuleOffset(slot), sqeBytes);
        if (++sendsSinceSignal >= QueueConnection.SIGNAL_INTERVAL) {
            sendsSinceSignal = 0;
            wr.sendFlags = SendWr.SIGNALED;
        } else {
            wr.sendFlags = 0;
        }
        return wr;
    }

    /**
     * READ and WRITE payloads that were copied (through a bounce buffer or into the capsule) because the caller's
     * segment was not registered on this queue's protection domain; 0 on the zero-copy path.
     */
    public long copiedTransfers() {
        return copiedTransfers;
    }

    /** After a successful READ: copies the bounce buffer to the caller's segment when the slot used one. */
    public void copyOutBounce(int slot, MemorySegment data) {
        if (bounced[slot]) {
            MemorySegment.copy(bounce[slot], 0, data, 0, data.byteSize());
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

    /** Deregisters and frees the bounce buffers; the queue memory is the caller's. */
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
