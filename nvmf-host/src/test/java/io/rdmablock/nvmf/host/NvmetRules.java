package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What Linux nvmet-rdma (kernel 6.1) refuses and how it describes itself, for {@link FakeTarget}'s strict mode. Each
 * rule names the kernel function it copies (drivers/nvme/target/).
 */
public final class NvmetRules {
    /** nvmet-rdma's default port inline_data_size (NVMET_RDMA_DEFAULT_INLINE_DATA_SIZE = PAGE_SIZE). */
    public static final int INLINE_DATA_BYTES = 4096;
    /** NVMET_MAX_NAMESPACES: nvmet's Identify Controller NN. */
    public static final int NN = 1024;
    /** CAP as nvmet_init_cap builds it: CSS bits 37 (NVM) and 43 (I/O command sets), TO 15 (7.5 s), MQES 127. */
    public static final long CAP = 1L << 37 | 1L << 43 | 15L << 24 | 127;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private NvmetRules() {
    }

    /**
     * The status nvmet answers {@code cap} with before executing it, 0 when it would execute it: Command Sequence
     * Error for a non-Fabrics command before CC.EN=1 and CSTS.RDY=1 ({@code nvmet_check_ctrl_status}), then the SGL
     * rules of {@code nvmet_rdma_map_sgl}: type 0 only with subtype 1 (offset; else Invalid Field), offset only for
     * write-direction opcodes (else Invalid Field), beyond the queue's inline size (0 on the admin queue: nvmet-rdma
     * allocates no inline pages for it) SGL Offset Invalid; keyed (type 4) only with subtype 0 or Fh (else Invalid
     * Field); any other type SGL Descriptor Type Invalid; PSDT must be 01b ({@code nvmet_req_init}).
     */
    public static int check(MemorySegment cap, int qid, boolean ready) {
        int flags = SqeDescriptor.flags(cap);
        if ((flags & 0xC0) != SqeDescriptor.PSDT_SGL) {
            return NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INVALID_FIELD, true);
        }
        int opcode = SqeDescriptor.opcode(cap);
        if (opcode != Opcodes.FABRICS && !ready) {
            return NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_COMMAND_SEQUENCE_ERROR, true);
        }
        MemorySegment sgl = SqeDescriptor.sgl1(cap);
        int type = SglDescriptor.type(sgl);
        int subtype = SglDescriptor.subtype(sgl);
        if (type == 0) {
            if (subtype != 1 || (opcode & 1) == 0) {
                return NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INVALID_FIELD, true);
            }
            long end = SglDescriptor.address(sgl) + SglDescriptor.dataBlockLength(sgl);
            if (end > (qid == 0 ? 0 : INLINE_DATA_BYTES)) {
                return NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_SGL_OFFSET_INVALID, true);
            }
            return 0;
        }
        if (type == 4) {
            return subtype == 0 || subtype == 0xF ? 0
                    : NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_INVALID_FIELD, true);
        }
        return NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID, true);
    }

    /** Transfer length of SGL1: keyed length or data block length. */
    public static long transferBytes(MemorySegment cap) {
        MemorySegment sgl = SqeDescriptor.sgl1(cap);
        return SglDescriptor.type(sgl) == 4 ? SglDescriptor.keyedLength(sgl) : SglDescriptor.dataBlockLength(sgl);
    }

    /**
     * {@code nvmet_check_transfer_len}: a command whose data length differs from what it needs is answered Data SGL
     * Length Invalid (0 for Keep Alive, Set Features, AER, Property Get/Set; 4096 for Identify; 1024 for Connect).
     */
    public static int checkTransfer(MemorySegment cap, long needed) {
        return transferBytes(cap) == needed ? 0
                : NvmeStatus.of(NvmeStatus.SCT_GENERIC, NvmeStatus.SC_DATA_SGL_LENGTH_INVALID, true);
    }

    /** {@link #checkTransfer(MemorySegment, long)} with the length each command the fake target knows needs. */
    public static int checkTransfer(MemorySegment cap, int qid, int lbaSize) {
        int opcode = SqeDescriptor.opcode(cap);
        if (opcode == Opcodes.FABRICS) {
            boolean connect = SqeDescriptor.fctype(cap) == Opcodes.FCTYPE_CONNECT;
            return checkTransfer(cap, connect ? ConnectDataDescriptor.DATA_LENGTH : 0);
        }
        if (qid == 0) {
            return opcode == Opcodes.ADMIN_IDENTIFY ? checkTransfer(cap, 4096)
                    : opcode == Opcodes.ADMIN_GET_LOG_PAGE ? 0 : checkTransfer(cap, 0);
        }
        return switch (opcode) {
            case Opcodes.IO_FLUSH, Opcodes.IO_WRITE_ZEROES -> checkTransfer(cap, 0);
            case Opcodes.IO_READ, Opcodes.IO_WRITE -> checkTransfer(cap, (long) SqeDescriptor.blockCount(cap) * lbaSize);
            default -> 0;
        };
    }

    /**
     * CSTS after a CC write ({@code nvmet_update_cc}, {@code nvmet_start_ctrl}): EN with IOSQES 6, IOCQES 4, MPS 0,
     * AMS 0 and CSS 0 or 6 gives RDY; EN with anything else CFS; EN=0 gives 0.
     */
    public static int cstsAfter(int cc) {
        if ((cc & 1) == 0) {
            return 0;
        }
        int css = (cc >>> 4) & 0x7;
        boolean ok = ((cc >>> 16) & 0xF) == 6 && ((cc >>> 20) & 0xF) == 4 && ((cc >>> 7) & 0xF) == 0
                && ((cc >>> 11) & 0x7) == 0 && (css == 0 || css == 6);
        return ok ? AdminCommands.CSTS_RDY : AdminCommands.CSTS_CFS;
    }

    /**
     * Identify Controller as {@code nvmet_execute_identify_ctrl} fills it: SN 16 random hex digits, MN "Linux", FR the
     * kernel release, NN 1024, MAXCMD 128 (NVMET_MAX_CMD of nvmet-rdma's queue size), SGLS bits 0, 2, 20, IOCCSZ
     * (64 + 4096) / 16, ICDOFF 0, KAS 10 (1 s). MDTS as given.
     */
    public static void identifyController(MemorySegment d, String serial, int cntlid, long mdtsBytes, String subnqn) {
        IdentifyControllerDescriptor.encode(d, new IdentifyControllerDescriptor.Info(serial, "Linux", "6.1.0", cntlid,
                mdtsBytes, 128, NN, true, subnqn, INLINE_DATA_BYTES));
        d.set(ValueLayout.JAVA_SHORT_UNALIGNED, IdentifyControllerDescriptor.VID, (short) 0);
        d.set(ValueLayout.JAVA_SHORT_UNALIGNED, IdentifyControllerDescriptor.KAS, (short) 10);
        d.set(U32, IdentifyControllerDescriptor.CTRATT, 1 | IdentifyControllerDescriptor.CTRATT_TBKAS);
    }

    /** A serial number as nvmet makes one (configfs attr_serial default: 8 random bytes, hex). */
    public static String randomSerial() {
        byte[] b = new byte[8];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** Active Namespace ID list ({@code nvmet_execute_identify_nslist}): nsids above {@code from}, ascending. */
    public static void activeNamespaceList(MemorySegment d, int from, int[] active) {
        d.asSlice(0, 4096).fill((byte) 0);
        int n = 0;
        for (int id : active) {
            if (Integer.compareUnsigned(id, from) > 0) {
                d.set(U32, 4L * n++, id);
            }
        }
    }
}
