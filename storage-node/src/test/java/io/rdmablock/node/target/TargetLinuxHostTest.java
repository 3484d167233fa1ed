package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data descriptors a Linux nvme-rdma host (kernel 6.1) sends: keyed SGL with the invalidate subtype (4Fh) for
 * fast-registered memory ({@code nvme_rdma_map_sg_fr}), the null keyed SGL for commands without data
 * ({@code nvme_rdma_set_sg_null}), in-capsule data at offset ICDOFF = 0 on I/O queues ({@code nvme_rdma_map_sg_inline},
 * several SGEs gathered into one SEND).
 */
class TargetLinuxHostTest extends TargetTestBase {
    @Test
    void shouldAcceptKeyedSglWithInvalidateOnAdminConnect() {
        try (RawHost h = f.host(0, 32)) {
            MemorySegment c = h.connectCapsule(1, 31, 5000, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
            SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(c), h.dataAddress(0), ConnectDataDescriptor.DATA_LENGTH,
                    h.rkey());
            RawHost.Cqe r = h.exec(c);
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
            assertEquals(1, f.target.controllerCount());
        }
    }

    @Test
    void shouldAcceptZeroLengthKeyedSglOnPropertyGet() {
        try (RawHost admin = f.admin(0)) {
            RawHost.Cqe cap = admin.propertyGet(20, Opcodes.PROP_CAP);
            assertEquals(0, cap.status(), NvmeStatus.describe(cap.status()));
            assertEquals(TargetOptions.defaults().maxQueueEntries() - 1, cap.dw0() & 0xFFFF, "CAP.MQES");
            RawHost.Cqe vs = admin.propertyGet(21, Opcodes.PROP_VS);
            assertEquals(0, vs.status());
            assertEquals(IdentifyControllerDescriptor.VERSION_1_4, vs.dw0());
        }
    }

    @Test
    void shouldAcceptZeroLengthKeyedSglOnKeepAlive() {
        try (RawHost admin = f.admin(5000)) {
            RawHost.Cqe r = admin.exec(admin.nullSglCommand(0, Opcodes.ADMIN_KEEP_ALIVE, 23, 0));
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
        }
    }

    @Test
    void shouldAcceptZeroLengthKeyedSglOnSetFeatures() {
        try (RawHost admin = f.admin(0)) {
            MemorySegment c = admin.nullSglCommand(0, Opcodes.ADMIN_SET_FEATURES, 24, 0);
            SqeDescriptor.cdw(c, 10, Opcodes.FID_NUMBER_OF_QUEUES);
            SqeDescriptor.cdw(c, 11, 3 | 3 << 16); // 4 queues, 0-based, as nvme_set_queue_count sends
            RawHost.Cqe r = admin.exec(c);
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
            assertEquals(3 | 3 << 16, r.dw0());
        }
    }

    @Test
    void shouldAcceptIoQueueConnectWithInCapsuleData() {
        try (RawHost admin = f.admin(0); RawHost io = f.host(1, 32)) {
            int cntlid = TargetFixture.cntlid(admin);
            MemorySegment c = io.capsule(0);
            ConnectDataDescriptor.sqe(c, 5, 1, 31, 0);
            ConnectDataDescriptor.data(c.asSlice(64, ConnectDataDescriptor.DATA_LENGTH), null, cntlid, f.subnqn,
                    TargetFixture.HOSTNQN);
            SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, ConnectDataDescriptor.DATA_LENGTH);
            RawHost.Cqe r = io.exec(c, 64 + ConnectDataDescriptor.DATA_LENGTH);
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
            assertEquals(cntlid, r.dw0());
        }
    }

    /** IOCCSZ x 16 - 64 bytes of WRITE data in the capsule (what Linux inlines), then read back with a 4Fh SGL. */
    @Test
    void shouldWriteInCapsuleDataOfTheAdvertisedSizeAndReadItBackWithInvalidateSgl() {
        try (RawHost admin = f.admin(0)) {
            assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
            int inCapsule = IdentifyControllerDescriptor.decode(admin.data()).inCapsuleDataBytes();
            int icdoff = Short.toUnsignedInt(admin.data().get(ValueLayout.JAVA_SHORT_UNALIGNED,
                    IdentifyControllerDescriptor.ICDOFF));
            assertEquals(0, icdoff, "ICDOFF (nvme_rdma_setup_ctrl refuses any other)");
            int blocks = inCapsule / 512;
            try (RawHost io = f.io(TargetFixture.cntlid(admin), 1, 8)) {
                MemorySegment w = io.command(0, Opcodes.IO_WRITE, 30, 1);
                SqeDescriptor.slba(w, 16);
                SqeDescriptor.blockCount(w, blocks, 0);
                for (int i = 0; i < inCapsule; i++) {
                    w.set(ValueLayout.JAVA_BYTE, 64 + i, (byte) (i * 7 + 3));
                }
                SglDescriptor.inCapsule(SqeDescriptor.sgl1(w), icdoff, inCapsule);
                RawHost.Cqe wr = io.exec(w, 64 + inCapsule);
                assertEquals(0, wr.status(), NvmeStatus.describe(wr.status()));
                MemorySegment expected = w.asSlice(64, inCapsule);
                MemorySegment r = io.command(1, Opcodes.IO_READ, 31, 1);
                SqeDescriptor.slba(r, 16);
                SqeDescriptor.blockCount(r, blocks, 0);
                SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(r), io.dataAddress(0), inCapsule, io.rkey());
                RawHost.Cqe rd = io.exec(r);
                assertEquals(0, rd.status(), NvmeStatus.describe(rd.status()));
                assertEquals(-1, io.data().asSlice(0, inCapsule).mismatch(expected), "read back what was written");
                assertTrue(io.guardsIntact());
            }
        }
    }

    @Test
    void shouldWriteWithInvalidateKeyedSgl() {
        try (RawHost admin = f.admin(0); RawHost io = f.io(TargetFixture.cntlid(admin), 1, 8)) {
            io.data().asSlice(0, 4096).fill((byte) 0x5A);
            MemorySegment w = io.command(0, Opcodes.IO_WRITE, 32, 1);
            SqeDescriptor.slba(w, 0);
            SqeDescriptor.blockCount(w, 8, 0);
            SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(w), io.dataAddress(0), 4096, io.rkey());
            RawHost.Cqe r = io.exec(w);
            assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
        }
    }

    @Test
    void shouldStillRejectKeyedSglOfAnotherSubtype() {
        try (RawHost admin = f.admin(0)) {
            MemorySegment c = admin.command(0, Opcodes.ADMIN_IDENTIFY, 33, 0);
            SqeDescriptor.cdw(c, 10, Opcodes.CNS_CONTROLLER);
            SglDescriptor.keyed(SqeDescriptor.sgl1(c), admin.dataAddress(0), 4096, admin.rkey());
            c.set(ValueLayout.JAVA_BYTE, SqeDescriptor.SGL1_OFFSET + SglDescriptor.ID_OFFSET, (byte) 0x4E);
            assertEquals(NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), admin.exec(c).status());
        }
    }
}
