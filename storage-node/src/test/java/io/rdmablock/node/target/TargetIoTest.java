package io.rdmablock.node.target;

import io.rdmablock.node.metrics.NodeMetrics;
import io.rdmablock.rdma.fabric.DsmRangeDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every I/O command against a 64 MiB, 512-byte-LBA volume, through a raw host on the soft provider. */
class TargetIoTest extends TargetTestBase {
    static final long CAPACITY = (64L << 20) / LBA;
    static final int WRITE_AT = 0;
    static final int READ_AT = 512 * 1024;

    int cntlid;

    @BeforeEach
    void setUp() {
        admin = f.admin(0);
        cntlid = TargetFixture.cntlid(admin);
        io = f.io(cntlid, 1, 32);
    }

    private static void pattern(MemorySegment s, long seed) {
        for (long i = 0; i < s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed * 0x9E3779B97F4A7C15L + i);
        }
    }

    private RawHost.Cqe write(long slba, int blocks, boolean fua) {
        return io.exec(io.rw(0, Opcodes.IO_WRITE, 11, slba, blocks, fua, WRITE_AT, blocks * LBA));
    }

    private RawHost.Cqe read(long slba, int blocks) {
        return io.exec(io.rw(0, Opcodes.IO_READ, 12, slba, blocks, false, READ_AT, blocks * LBA));
    }

    private void assertReadMatches(long slba, int blocks, MemorySegment expected) {
        io.data().asSlice(READ_AT, (long) blocks * LBA).fill((byte) 0x55);
        RawHost.Cqe c = read(slba, blocks);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(-1, io.data().asSlice(READ_AT, (long) blocks * LBA).mismatch(expected), "read data");
    }

    private MemorySegment zeros(int bytes) {
        return MemorySegment.ofArray(new byte[bytes]);
    }

    @Test
    void shouldWriteWithKeyedSglAndReadBack() {
        MemorySegment src = io.data().asSlice(WRITE_AT, 64 * LBA);
        pattern(src, 1);
        RawHost.Cqe c = write(100, 64, false);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(11, c.cid());
        assertEquals(1, c.sqid());
        assertReadMatches(100, 64, MemorySegment.ofArray(src.toArray(ValueLayout.JAVA_BYTE)));
        assertTrue(io.guardsIntact());
        assertTrue(f.metrics.commandsCompleted(NodeMetrics.OP_WRITE) >= 1);
    }

    @Test
    void shouldWriteInCapsuleDataAndReadBack() {
        MemorySegment c = io.command(0, Opcodes.IO_WRITE, 21, 1);
        SqeDescriptor.slba(c, 8);
        SqeDescriptor.blockCount(c, 8, 0);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, 8 * LBA);
        pattern(c.asSlice(64, 8 * LBA), 2);
        byte[] expected = c.asSlice(64, 8 * LBA).toArray(ValueLayout.JAVA_BYTE);
        RawHost.Cqe r = io.exec(c, 64 + 8 * LBA);
        assertEquals(0, r.status(), NvmeStatus.describe(r.status()));
        assertReadMatches(8, 8, MemorySegment.ofArray(expected));
    }

    @Test
    void shouldWriteWithFuaAndFlush() {
        pattern(io.data().asSlice(WRITE_AT, 8 * LBA), 3);
        assertEquals(0, write(0, 8, true).status());
        RawHost.Cqe c = io.exec(io.command(0, Opcodes.IO_FLUSH, 5, 1));
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(0, io.exec(io.command(0, Opcodes.IO_FLUSH, 6, 0xFFFFFFFF)).status(), "flush all namespaces");
    }

    /** C1: the data descriptor covers fewer bytes than NLB says; nothing written; the next I/O works. */
    @Test
    void shouldRejectWriteWhoseKeyedSglIsShorterThanTheBlocks() {
        pattern(io.data().asSlice(WRITE_AT, 10 * LBA), 4);
        RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_WRITE, 31, 0, 10, false, WRITE_AT, 4096));
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), c.status());
        assertEquals(31, c.cid());
        assertReadMatches(0, 10, zeros(10 * LBA));
        pattern(io.data().asSlice(WRITE_AT, 8 * LBA), 5);
        assertEquals(0, write(0, 8, false).status());
        assertReadMatches(0, 8, MemorySegment.ofArray(io.data().asSlice(WRITE_AT, 8 * LBA)
                .toArray(ValueLayout.JAVA_BYTE)));
    }

    /** C1 with in-capsule data: descriptor 4096 bytes for a 5120-byte write. */
    @Test
    void shouldRejectWriteWhoseInCapsuleDataIsShorterThanTheBlocks() {
        MemorySegment c = io.command(0, Opcodes.IO_WRITE, 32, 1);
        SqeDescriptor.slba(c, 0);
        SqeDescriptor.blockCount(c, 10, 0);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, 4096);
        pattern(c.asSlice(64, 4096), 6);
        RawHost.Cqe r = io.exec(c, 64 + 4096);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), r.status());
        assertReadMatches(0, 10, zeros(10 * LBA));
    }

    /** C13: LBA out of range, 64-bit wrap, nsid 0 / unknown; the last valid LBA still works. */
    @Test
    void shouldRejectOutOfRangeAndWrappingLbasAndBadNamespaces() {
        int oor = NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE);
        assertEquals(oor, read(CAPACITY, 1).status(), "slba = capacity");
        assertEquals(oor, write(CAPACITY, 1, false).status(), "write slba = capacity");
        assertEquals(oor, read(CAPACITY - 1, 2).status(), "slba = capacity - 1, 2 blocks");
        assertEquals(oor, read(1L << 63, 1).status(), "slba = 2^63");
        assertEquals(oor, read(-1L, 2).status(), "slba + nlb wraps 2^64");
        int badNs = NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE);
        for (int nsid : new int[]{0, 2, 0xFFFFFFFF}) {
            MemorySegment c = io.rw(0, Opcodes.IO_READ, 40, 0, 1, false, READ_AT, LBA);
            SqeDescriptor.nsid(c, nsid);
            assertEquals(badNs, io.exec(c).status(), "nsid " + Integer.toUnsignedString(nsid));
        }
        pattern(io.data().asSlice(WRITE_AT, LBA), 7);
        assertEquals(0, write(CAPACITY - 1, 1, false).status(), "last valid LBA");
        assertReadMatches(CAPACITY - 1, 1, MemorySegment.ofArray(io.data().asSlice(WRITE_AT, LBA)
                .toArray(ValueLayout.JAVA_BYTE)));
        assertTrue(io.guardsIntact());
    }

    @Test
    void shouldRejectTransferAboveMdtsWithInvalidField() {
        int blocks = 128 * 1024 / LBA + 1;
        RawHost.Cqe c = io.exec(io.rw(0, Opcodes.IO_READ, 41, 0, blocks, false, 0, blocks * LBA));
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status());
        assertTrue(io.guardsIntact());
    }

    @Test
    void shouldRejectUnknownOpcodeAndBadSglType() {
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_OPCODE),
                io.exec(io.command(0, 0x7E, 42, 1)).status());
        MemorySegment c = io.rw(0, Opcodes.IO_READ, 43, 0, 1, false, READ_AT, LBA);
        c.set(ValueLayout.JAVA_BYTE, SqeDescriptor.SGL1_OFFSET + SglDescriptor.ID_OFFSET, (byte) 0x20);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), io.exec(c).status());
        MemorySegment inCapsuleRead = io.command(0, Opcodes.IO_READ, 44, 1);
        SqeDescriptor.blockCount(inCapsuleRead, 1, 0);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(inCapsuleRead), 0, LBA);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_SGL_DESCRIPTOR_TYPE_INVALID), io.exec(inCapsuleRead).status(),
                "in-capsule data cannot carry read data");
    }

    @Test
    void shouldReadZeroesAfterWriteZeroes() {
        pattern(io.data().asSlice(WRITE_AT, 64 * LBA), 8);
        assertEquals(0, write(0, 64, false).status());
        MemorySegment c = io.command(0, Opcodes.IO_WRITE_ZEROES, 50, 1);
        SqeDescriptor.slba(c, 16);
        SqeDescriptor.blockCount(c, 8, 0);
        assertEquals(0, io.exec(c).status());
        byte[] expected = io.data().asSlice(WRITE_AT, 64 * LBA).toArray(ValueLayout.JAVA_BYTE);
        java.util.Arrays.fill(expected, 16 * LBA, 24 * LBA, (byte) 0);
        assertReadMatches(0, 64, MemorySegment.ofArray(expected));
    }

    /** C14: TRIM 4 KiB inside a written range reads zero only if DLFEAT says so; WRITE ZEROES always does. */
    @Test
    void shouldHonourAdvertisedDeallocateBehaviour() {
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        boolean zeroesAfterTrim = IdentifyNamespaceDescriptor.decode(admin.data()).zeroesAfterTrim();
        pattern(io.data().asSlice(WRITE_AT, 256 * LBA), 9);
        byte[] original = io.data().asSlice(WRITE_AT, 256 * LBA).toArray(ValueLayout.JAVA_BYTE);
        assertEquals(0, write(0, 256, false).status());
        MemorySegment c = io.command(0, Opcodes.IO_DATASET_MANAGEMENT, 51, 1);
        SqeDescriptor.cdw(c, 10, 0); // NR = 0: one range
        SqeDescriptor.cdw(c, 11, SqeDescriptor.DSM_CDW11_AD);
        DsmRangeDescriptor.set(c.asSlice(64, 16), 0, 64, 8);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, 16);
        assertEquals(0, io.exec(c, 64 + 16).status());
        io.data().asSlice(READ_AT, 256 * LBA).fill((byte) 0x55);
        assertEquals(0, read(0, 256).status());
        byte[] got = io.data().asSlice(READ_AT, 256 * LBA).toArray(ValueLayout.JAVA_BYTE);
        for (int i = 0; i < got.length; i++) {
            boolean trimmed = i >= 64 * LBA && i < 72 * LBA;
            if (!trimmed) {
                assertEquals(original[i], got[i], "untrimmed byte " + i);
            } else if (zeroesAfterTrim) {
                assertEquals(0, got[i], "trimmed byte " + i + " (DLFEAT: zeroes)");
            }
        }
        MemorySegment wz = io.command(0, Opcodes.IO_WRITE_ZEROES, 52, 1);
        SqeDescriptor.slba(wz, 64);
        SqeDescriptor.blockCount(wz, 8, 0);
        assertEquals(0, io.exec(wz).status());
        java.util.Arrays.fill(original, 64 * LBA, 72 * LBA, (byte) 0);
        assertReadMatches(0, 256, MemorySegment.ofArray(original));
    }

    /** C12: the smallest DSM NVMe can express (one range of 0 blocks) and DSM without AD change nothing. */
    @Test
    void shouldAcceptEmptyDsmRangeWithoutStateChange() {
        pattern(io.data().asSlice(WRITE_AT, 8 * LBA), 10);
        byte[] original = io.data().asSlice(WRITE_AT, 8 * LBA).toArray(ValueLayout.JAVA_BYTE);
        assertEquals(0, write(0, 8, false).status());
        MemorySegment c = io.command(0, Opcodes.IO_DATASET_MANAGEMENT, 53, 1);
        SqeDescriptor.cdw(c, 11, SqeDescriptor.DSM_CDW11_AD);
        DsmRangeDescriptor.set(io.data().asSlice(WRITE_AT + 65536, 16), 0, 0, 0);
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), io.dataAddress(WRITE_AT + 65536), 16, io.rkey());
        RawHost.Cqe r = io.exec(c);
        assertEquals(0, r.status());
        assertEquals(53, r.cid());
        MemorySegment noAttr = io.command(0, Opcodes.IO_DATASET_MANAGEMENT, 54, 1);
        DsmRangeDescriptor.set(io.data().asSlice(WRITE_AT + 65536, 16), 0, 0, 8);
        SglDescriptor.keyed(SqeDescriptor.sgl1(noAttr), io.dataAddress(WRITE_AT + 65536), 16, io.rkey());
        assertEquals(0, io.exec(noAttr).status());
        assertReadMatches(0, 8, MemorySegment.ofArray(original));
    }

    @Test
    void shouldRejectDsmRangeBeyondCapacity() {
        MemorySegment c = io.command(0, Opcodes.IO_DATASET_MANAGEMENT, 55, 1);
        SqeDescriptor.cdw(c, 11, SqeDescriptor.DSM_CDW11_AD);
        DsmRangeDescriptor.set(c.asSlice(64, 16), 0, CAPACITY - 1, 2);
        SglDescriptor.inCapsule(SqeDescriptor.sgl1(c), 0, 16);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE), io.exec(c, 64 + 16).status());
    }

    /** C11: after a resize, Identify reports the new NSZE, I/O past the old end works, a held AER completes. */
    @Test
    void shouldExposeGrownNamespace() {
        MemorySegment aer = admin.command(1, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 60, 0);
        admin.post(1, 64);
        assertEquals(null, admin.await(200_000_000L), "AER is held");
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_LBA_OUT_OF_RANGE), read(CAPACITY, 8).status());
        f.store.resize(f.volume.id(), 128L << 20);
        RawHost.Cqe aen = admin.await();
        assertNotNull(aen);
        assertEquals(60, aen.cid());
        assertEquals(TargetController.AEN_NS_ATTRIBUTE_CHANGED, aen.dw0());
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        assertEquals(2 * CAPACITY, IdentifyNamespaceDescriptor.decode(admin.data()).sizeBlocks());
        assertReadMatches(CAPACITY, 8, zeros(8 * LBA));
        pattern(io.data().asSlice(WRITE_AT, 8 * LBA), 11);
        assertEquals(0, write(2 * CAPACITY - 8, 8, false).status());
        assertTrue(aer.byteSize() > 0);
    }

    /**
     * C4: a raw client sends QD+1 commands on an 8-entry queue without waiting. The target has 8 RECVs; the 9th
     * SEND waits in the transport (RNR retry) until a RECV is reposted; every command is answered exactly once.
     */
    @Test
    void shouldAnswerEveryCommandWhenClientExceedsQueueDepth() {
        try (RawHost q2 = f.io(cntlid, 2, 8)) {
            int n = 9;
            for (int i = 0; i < n; i++) {
                MemorySegment c = q2.rw(i, Opcodes.IO_READ, 100 + i, i, 1, false, (long) i * LBA, LBA);
                q2.post(i, 64);
            }
            Set<Integer> cids = new HashSet<>();
            for (int i = 0; i < n; i++) {
                RawHost.Cqe c = q2.await();
                assertNotNull(c, "response " + i);
                assertEquals(null, c.error(), "transport error");
                assertEquals(0, c.status());
                assertTrue(cids.add(c.cid()), "duplicate completion for cid " + c.cid());
            }
            assertEquals(null, q2.await(200_000_000L), "no extra completion");
            assertEquals(9, cids.size());
        }
        assertEquals(0, read(0, 1).status(), "other queue unaffected");
    }

    @Test
    void shouldAnswerPropertyGetAndSet() {
        MemorySegment get = admin.command(0, Opcodes.FABRICS, 70, 0);
        SqeDescriptor.fctype(get, Opcodes.FCTYPE_PROPERTY_GET);
        SqeDescriptor.cdw(get, 10, 1);
        SqeDescriptor.cdw(get, 11, Opcodes.PROP_CAP);
        RawHost.Cqe cap = admin.exec(get);
        assertEquals(0, cap.status());
        assertEquals(127, cap.dw0() & 0xFFFF, "CAP.MQES = maxQueueEntries - 1");
        MemorySegment set = admin.command(0, Opcodes.FABRICS, 71, 0);
        SqeDescriptor.fctype(set, Opcodes.FCTYPE_PROPERTY_SET);
        SqeDescriptor.cdw(set, 11, Opcodes.PROP_CC);
        SqeDescriptor.cdw(set, 12, 1);
        assertEquals(0, admin.exec(set).status());
        MemorySegment csts = admin.command(0, Opcodes.FABRICS, 72, 0);
        SqeDescriptor.fctype(csts, Opcodes.FCTYPE_PROPERTY_GET);
        SqeDescriptor.cdw(csts, 11, Opcodes.PROP_CSTS);
        RawHost.Cqe r = admin.exec(csts);
        assertEquals(0, r.status());
        assertEquals(1, r.dw0() & 1, "CSTS.RDY after CC.EN");
    }
}
