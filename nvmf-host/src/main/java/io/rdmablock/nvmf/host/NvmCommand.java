package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One NVM command as a caller composes it for {@link PeerQueue#submit}: opcode, nsid, CDW2/CDW3, CDW10..CDW15 and
 * one Keyed SGL Data Block descriptor (type 4h, subtype 0h, identifier 40h; NVMe Base 2.0 section 4.1.4) naming
 * memory the target moves data from or to with RDMA READ / RDMA WRITE. The memory is the caller's, not the queue's
 * (a primary forwarding a write names its own request buffer). A command without data carries a keyed SGL of
 * address 0, length 0, key 0, as Linux {@code nvme_rdma_set_sg_null}.
 *
 * <p>SQE (64 bytes, little endian) as {@link #writeSqe} lays it out:
 * <pre>
 *  0  opcode   1 flags (PSDT = 01b: SGL)   2..3 cid
 *  4  nsid     8 CDW2    12 CDW3           16..23 MPTR = 0
 *  24 SGL1 (16 bytes: address 8, length 3, key 4, identifier 1)
 *  40 CDW10  44 CDW11  48 CDW12  52 CDW13  56 CDW14  60 CDW15
 * </pre>
 * For replication the primary's epoch travels in CDW2 (bits 31:0) and CDW3 (bits 63:32), see {@link #epoch(long)}
 * and docs/replication.md.
 *
 * <p>Mutable and reusable: a caller keeps one per thread and refills it per command, so composing a command
 * allocates nothing. Not thread-safe.
 */
public final class NvmCommand {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int CDW2_OFFSET = 8;
    private static final int CDW3_OFFSET = 12;

    private int opcode;
    private int nsid;
    private int cdw2;
    private int cdw3;
    private final int[] cdw10to15 = new int[6];
    private long remoteAddress;
    private int lengthBytes;
    private int rkey;

    /** Resets every field to 0 (a command without data: null keyed SGL). Returns this. */
    public NvmCommand clear() {
        opcode = 0;
        nsid = 0;
        cdw2 = 0;
        cdw3 = 0;
        java.util.Arrays.fill(cdw10to15, 0);
        remoteAddress = 0;
        lengthBytes = 0;
        rkey = 0;
        return this;
    }

    /** NVM command set opcode, 0 .. 255 ({@link io.rdmablock.rdma.fabric.Opcodes}). Returns this. */
    public NvmCommand opcode(int opcode) {
        if (opcode < 0 || opcode > 0xFF) {
            throw new IllegalArgumentException("invalid opcode: opcode=" + opcode + ", min=0, max=255");
        }
        this.opcode = opcode;
        return this;
    }

    /** Namespace id (1-based; any 32-bit value goes on the wire as given). Returns this. */
    public NvmCommand nsid(int nsid) {
        this.nsid = nsid;
        return this;
    }

    /** CDW2 = bits 31:0 and CDW3 = bits 63:32 of {@code epoch} (SQE bytes 8..15). Returns this. */
    public NvmCommand epoch(long epoch) {
        this.cdw2 = (int) epoch;
        this.cdw3 = (int) (epoch >>> 32);
        return this;
    }

    /**
     * Sets command dword {@code n}: 2, 3 or 10 .. 15 (the others are the queue's: opcode, cid, nsid, SGL).
     *
     * @throws IllegalArgumentException for any other {@code n}
     */
    public NvmCommand cdw(int n, int value) {
        if (n == 2) {
            cdw2 = value;
        } else if (n == 3) {
            cdw3 = value;
        } else if (n >= 10 && n <= 15) {
            cdw10to15[n - 10] = value;
        } else {
            throw new IllegalArgumentException("invalid cdw: n=" + n + ", allowed 2, 3, 10..15");
        }
        return this;
    }

    /** SLBA in CDW10 (bits 31:0) and CDW11 (bits 63:32), as READ / WRITE / WRITE ZEROES use it. Returns this. */
    public NvmCommand slba(long slba) {
        cdw10to15[0] = (int) slba;
        cdw10to15[1] = (int) (slba >>> 32);
        return this;
    }

    /**
     * The Keyed SGL Data Block: the target transfers {@code lengthBytes} at {@code remoteAddress} with {@code rkey}.
     *
     * @param lengthBytes 0 .. 2^24 - 1 (the descriptor's 3-byte length)
     * @throws IllegalArgumentException when lengthBytes is out of range
     */
    public NvmCommand keyedSgl(long remoteAddress, int lengthBytes, int rkey) {
        if (lengthBytes < 0 || lengthBytes > SglDescriptor.MAX_KEYED_LENGTH) {
            throw new IllegalArgumentException("invalid lengthBytes: lengthBytes=" + lengthBytes + ", min=0, max="
                    + SglDescriptor.MAX_KEYED_LENGTH);
        }
        this.remoteAddress = remoteAddress;
        this.lengthBytes = lengthBytes;
        this.rkey = rkey;
        return this;
    }

    public int opcode() {
        return opcode;
    }

    public int nsid() {
        return nsid;
    }

    /** Command dword {@code n} (2, 3 or 10 .. 15). */
    public int cdw(int n) {
        if (n == 2) {
            return cdw2;
        }
        if (n == 3) {
            return cdw3;
        }
        if (n >= 10 && n <= 15) {
            return cdw10to15[n - 10];
        }
        throw new IllegalArgumentException("invalid cdw: n=" + n + ", allowed 2, 3, 10..15");
    }

    /** Length of the keyed SGL in bytes. */
    public int lengthBytes() {
        return lengthBytes;
    }

    /** Writes the whole 64-byte SQE with {@code cid} into {@code sqe} (see the class comment). */
    public void writeSqe(MemorySegment sqe, int cid) {
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, opcode);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
        SqeDescriptor.cid(sqe, cid);
        SqeDescriptor.nsid(sqe, nsid);
        sqe.set(U32, CDW2_OFFSET, cdw2);
        sqe.set(U32, CDW3_OFFSET, cdw3);
        for (int i = 0; i < 6; i++) {
            SqeDescriptor.cdw(sqe, 10 + i, cdw10to15[i]);
        }
        SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), remoteAddress, lengthBytes, rkey);
    }
}
