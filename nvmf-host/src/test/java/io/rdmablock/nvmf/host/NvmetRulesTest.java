package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The strict fake target refuses what Linux nvmet-rdma refuses (so the device tests against it can fail). */
class NvmetRulesTest {
    private final MemorySegment sqe = Arena.ofAuto().allocate(64);

    private int check(int opcode, int qid, boolean ready) {
        return NvmeStatus.sc(NvmetRules.check(sqe, qid, ready));
    }

    private void command(int opcode) {
        SqeDescriptor.clear(sqe);
        SqeDescriptor.opcode(sqe, opcode);
        SqeDescriptor.flags(sqe, SqeDescriptor.PSDT_SGL);
    }

    @Test
    void shouldRefuseAnAllZeroSglOnACommandWithoutData() {
        command(Opcodes.FABRICS);
        SqeDescriptor.fctype(sqe, Opcodes.FCTYPE_PROPERTY_SET);
        assertEquals(NvmeStatus.SC_INVALID_FIELD, check(Opcodes.FABRICS, 0, false));
        AdminCommands.noData(sqe, Opcodes.FABRICS);
        assertEquals(0, NvmetRules.check(sqe, 0, false));
    }

    @Test
    void shouldRefuseInCapsuleDataOnTheAdminQueueAndBeyondTheInlineSize() {
        command(Opcodes.FABRICS);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, 1024);
        assertEquals(NvmeStatus.SC_SGL_OFFSET_INVALID, check(Opcodes.FABRICS, 0, true));
        assertEquals(0, NvmetRules.check(sqe, 1, true));
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, NvmetRules.INLINE_DATA_BYTES + 512);
        assertEquals(NvmeStatus.SC_SGL_OFFSET_INVALID, check(Opcodes.FABRICS, 1, true));
        command(Opcodes.IO_READ);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(sqe), 0, 512);
        assertEquals(NvmeStatus.SC_INVALID_FIELD, check(Opcodes.IO_READ, 1, true), "in-capsule READ");
    }

    @Test
    void shouldAnswerCommandSequenceErrorBeforeTheControllerIsReady() {
        AdminCommands.noData(sqe, Opcodes.ADMIN_KEEP_ALIVE);
        assertEquals(NvmeStatus.SC_COMMAND_SEQUENCE_ERROR, check(Opcodes.ADMIN_KEEP_ALIVE, 0, false));
        assertEquals(0, NvmetRules.check(sqe, 0, true));
    }

    @Test
    void shouldSetFatalStatusForACcItCannotUse() {
        assertEquals(AdminCommands.CSTS_RDY, NvmetRules.cstsAfter(AdminCommands.CC_ENABLE));
        assertEquals(AdminCommands.CSTS_CFS, NvmetRules.cstsAfter(1), "IOSQES/IOCQES 0");
        assertEquals(AdminCommands.CSTS_CFS, NvmetRules.cstsAfter(AdminCommands.CC_ENABLE | 1 << 7), "MPS 1");
        assertEquals(0, NvmetRules.cstsAfter(AdminCommands.CC_ENABLE & ~1));
    }

    @Test
    void shouldRefuseAKeepAliveWhoseSglCarriesALength() {
        AdminCommands.noData(sqe, Opcodes.ADMIN_KEEP_ALIVE);
        SglDescriptor.keyed(SqeDescriptor.sgl1(sqe), 4096, 16, 7);
        assertEquals(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID, NvmeStatus.sc(NvmetRules.checkTransfer(sqe, 0, 512)));
    }
}
