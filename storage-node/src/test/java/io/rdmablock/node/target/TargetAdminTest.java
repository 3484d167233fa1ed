package io.rdmablock.node.target;

import io.rdmablock.node.store.StoreVolume;
import io.rdmablock.node.store.VolumeSpec;
import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import io.rdmablock.rdma.fabric.LogPageDescriptor;
import io.rdmablock.rdma.fabric.NamespaceIdDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import io.rdmablock.rdma.fabric.Opcodes;
import io.rdmablock.rdma.fabric.SglDescriptor;
import io.rdmablock.rdma.fabric.SqeDescriptor;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Admin commands and fields a Linux host (kernel 6.1) uses during connect and namespace scanning. */
class TargetAdminTest extends TargetTestBase {
    static final int ALL = 0xFFFFFFFF;

    @BeforeEach
    void setUp() {
        admin = f.admin(0);
    }

    private NamespaceIdDescriptor.Ids descriptors(RawHost h) {
        RawHost.Cqe c = h.identify(Opcodes.CNS_NAMESPACE_ID_DESCRIPTORS, 1);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        return NamespaceIdDescriptor.decode(h.data());
    }

    private static void assertSameIds(NamespaceIdDescriptor.Ids a, NamespaceIdDescriptor.Ids b) {
        assertArrayEquals(a.eui64(), b.eui64(), "EUI64");
        assertArrayEquals(a.nguid(), b.nguid(), "NGUID");
        assertArrayEquals(a.uuid(), b.uuid(), "UUID");
        assertEquals(a.csi(), b.csi(), "CSI");
    }

    @Test
    void shouldDescribeNamespaceIdentifiersStablyFromTheVolumeId() {
        NamespaceIdDescriptor.Ids ids = descriptors(admin);
        assertEquals(NamespaceIdDescriptor.CSI_NVM, ids.csi());
        assertFalse(java.util.Arrays.equals(new byte[16], ids.nguid()), "NGUID set");
        assertSameIds(ids, descriptors(admin));
        assertSameIds(ids, NamespaceIds.of(f.volume.id())); // same on every node exporting the volume
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        byte[] nguid = admin.data().asSlice(IdentifyNamespaceDescriptor.NGUID, 16).toArray(ValueLayout.JAVA_BYTE);
        byte[] eui64 = admin.data().asSlice(IdentifyNamespaceDescriptor.EUI64, 8).toArray(ValueLayout.JAVA_BYTE);
        assertArrayEquals(ids.nguid(), nguid, "Identify Namespace NGUID = descriptor");
        assertArrayEquals(ids.eui64(), eui64, "Identify Namespace EUI64 = descriptor");
    }

    @Test
    void shouldDescribeDistinctNamespaceIdentifiersPerVolume() {
        StoreVolume v2 = f.store.create(new VolumeSpec("vol2", "vol2", 8L << 20, 512, Set.of("*")));
        String nqn2 = f.target.addVolume(v2, null).subnqn();
        try (RawHost other = f.host(0, 32)) {
            assertEquals(0, other.fabricConnect(31, 0, nqn2, TargetFixture.HOSTNQN, 0xFFFF).status());
            NamespaceIdDescriptor.Ids a = descriptors(admin);
            NamespaceIdDescriptor.Ids b = descriptors(other);
            assertFalse(java.util.Arrays.equals(a.eui64(), b.eui64()), "EUI64 differs");
            assertFalse(java.util.Arrays.equals(a.nguid(), b.nguid()), "NGUID differs");
            assertFalse(java.util.Arrays.equals(a.uuid(), b.uuid()), "UUID differs");
        }
    }

    @Test
    void shouldRejectNamespaceIdentifiersOfAnInactiveNsid() {
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_NAMESPACE),
                admin.identify(Opcodes.CNS_NAMESPACE_ID_DESCRIPTORS, 2).status());
    }

    @Test
    void shouldAnswerNvmCommandSetIdentifyControllerWithZeros() {
        admin.data().asSlice(0, 4096).fill((byte) 0xFF);
        RawHost.Cqe c = admin.identify(Opcodes.CNS_CS_CONTROLLER, 0);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(-1, admin.data().asSlice(0, 4096).mismatch(MemorySegment.ofArray(new byte[4096])));
    }

    @Test
    void shouldRejectCommandSetIdentifyControllerForAnotherCsi() {
        MemorySegment c = admin.command(0, Opcodes.ADMIN_IDENTIFY, 8, 0);
        SqeDescriptor.cdw(c, 10, Opcodes.CNS_CS_CONTROLLER);
        SqeDescriptor.cdw(c, 11, 2 << 24); // CSI 2: zoned namespaces
        SglDescriptor.keyed(SqeDescriptor.sgl1(c), admin.dataAddress(0), 4096, admin.rkey());
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), admin.exec(c).status());
    }

    /** nvme_init_identify, nvme_init_subsystem, nvme_rdma_setup_ctrl check these. */
    @Test
    void shouldAdvertiseTheControllerFieldsLinuxChecks() {
        assertEquals(0, admin.identify(Opcodes.CNS_CONTROLLER, 0).status());
        MemorySegment d = admin.data();
        assertEquals(IdentifyControllerDescriptor.CNTRLTYPE_IO, IdentifyControllerDescriptor.cntrltype(d));
        assertEquals(IdentifyControllerDescriptor.CMIC_MULTI_CONTROLLER,
                IdentifyControllerDescriptor.cmic(d) & IdentifyControllerDescriptor.CMIC_MULTI_CONTROLLER);
        assertEquals(IdentifyControllerDescriptor.OAES_NAMESPACE_ATTRIBUTE | TargetController.OAES_ANA_CHANGE,
                IdentifyControllerDescriptor.oaes(d));
        assertTrue(IdentifyControllerDescriptor.kas(d) > 0, "KAS (keep-alive mandatory for fabrics)");
        int sgls = IdentifyControllerDescriptor.sgls(d);
        assertEquals(1 << 2, sgls & 1 << 2, "SGLS keyed");
        assertEquals(1 << 20, sgls & 1 << 20, "SGLS offset (in-capsule data)");
        assertEquals(IdentifyControllerDescriptor.LPA_EXTENDED_DATA,
                IdentifyControllerDescriptor.lpa(d) & IdentifyControllerDescriptor.LPA_EXTENDED_DATA);
        assertEquals(TargetController.MAX_HELD_AER - 1, Byte.toUnsignedInt(d.get(ValueLayout.JAVA_BYTE,
                IdentifyControllerDescriptor.AERL)));
        IdentifyControllerDescriptor.Info info = IdentifyControllerDescriptor.decode(d);
        assertEquals(TargetOptions.defaults().maxQueueEntries(), info.maxCmd());
    }

    @Test
    void shouldMarkTheNamespaceShared() {
        assertEquals(0, admin.identify(Opcodes.CNS_NAMESPACE, 1).status());
        assertEquals(IdentifyNamespaceDescriptor.NMIC_SHARED, IdentifyNamespaceDescriptor.nmic(admin.data()));
    }

    private RawHost.Cqe features(int opcode, int fid, int cdw11) {
        MemorySegment c = admin.nullSglCommand(0, opcode, 9, 0);
        SqeDescriptor.cdw(c, 10, fid);
        SqeDescriptor.cdw(c, 11, cdw11);
        return admin.exec(c);
    }

    @Test
    void shouldKeepTheSupportedAsyncEventConfiguration() {
        // nvme_enable_aen sends OAES & NVME_AEN_SUPPORTED; a bit the controller cannot send is dropped
        RawHost.Cqe set = features(Opcodes.ADMIN_SET_FEATURES, Opcodes.FID_ASYNC_EVENT_CONFIG, 0x100 | 1 << 31);
        assertEquals(0, set.status(), NvmeStatus.describe(set.status()));
        RawHost.Cqe get = features(Opcodes.ADMIN_GET_FEATURES, Opcodes.FID_ASYNC_EVENT_CONFIG, 0);
        assertEquals(0, get.status());
        assertEquals(0x100, get.dw0());
    }

    @Test
    void shouldReturnOneErrorInformationEntryOfZeros() {
        admin.data().asSlice(0, 4096).fill((byte) 0xFF);
        RawHost.Cqe c = admin.getLogPage(10, LogPageDescriptor.LID_ERROR_INFORMATION, ALL, 64, 0, false);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(-1, admin.data().asSlice(0, 64).mismatch(MemorySegment.ofArray(new byte[64])));
        assertEquals((byte) 0xFF, admin.data().get(ValueLayout.JAVA_BYTE, 64), "nothing written past the length");
    }

    @Test
    void shouldCountReadsAndWritesInTheSmartLog() {
        try (RawHost io = f.io(TargetFixture.cntlid(admin), 1, 8)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(0, io.exec(io.rw(0, Opcodes.IO_WRITE, 40 + i, 0, 8, false, 0, 4096)).status());
            }
            assertEquals(0, io.exec(io.rw(0, Opcodes.IO_READ, 50, 0, 8, false, 0, 4096)).status());
            RawHost.Cqe c = admin.getLogPage(11, LogPageDescriptor.LID_SMART_HEALTH, ALL, 512, 0, false);
            assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
            MemorySegment log = admin.data();
            assertEquals(LogPages.COMPOSITE_TEMPERATURE_KELVIN, Short.toUnsignedInt(log.get(
                    ValueLayout.JAVA_SHORT_UNALIGNED, LogPageDescriptor.SMART_COMPOSITE_TEMPERATURE)));
            assertEquals(3, LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_HOST_WRITE_COMMANDS));
            assertEquals(1, LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_HOST_READ_COMMANDS));
            assertEquals(1, LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_DATA_UNITS_WRITTEN),
                    "12 KiB = 1 data unit, rounded up");
            assertEquals(1, LogPageDescriptor.smartCounter(log, LogPageDescriptor.SMART_DATA_UNITS_READ));
        }
        RawHost.Cqe after = admin.getLogPage(12, LogPageDescriptor.LID_SMART_HEALTH, ALL, 512, 0, false);
        assertEquals(0, after.status());
        assertEquals(3, LogPageDescriptor.smartCounter(admin.data(), LogPageDescriptor.SMART_HOST_WRITE_COMMANDS),
                "counts of a closed I/O queue are kept");
    }

    private byte[] wholeSmartLog() {
        assertEquals(0, admin.getLogPage(13, LogPageDescriptor.LID_SMART_HEALTH, ALL, 512, 0, false).status());
        byte[] whole = admin.data().asSlice(0, 512).toArray(ValueLayout.JAVA_BYTE);
        admin.data().asSlice(0, 4096).fill((byte) 0xFF);
        return whole;
    }

    @Test
    void shouldReturnTheStartOfTheLogOnAShortRead() {
        byte[] whole = wholeSmartLog();
        assertEquals(0, admin.getLogPage(14, LogPageDescriptor.LID_SMART_HEALTH, ALL, 8, 0, false).status());
        assertArrayEquals(java.util.Arrays.copyOfRange(whole, 0, 8),
                admin.data().asSlice(0, 8).toArray(ValueLayout.JAVA_BYTE));
        assertEquals((byte) 0xFF, admin.data().get(ValueLayout.JAVA_BYTE, 8), "nothing past the length");
    }

    @Test
    void shouldReturnTheLogWindowAtTheOffset() {
        byte[] whole = wholeSmartLog();
        RawHost.Cqe c = admin.getLogPage(15, LogPageDescriptor.LID_SMART_HEALTH, ALL, 32, 32, false);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertArrayEquals(java.util.Arrays.copyOfRange(whole, 32, 64),
                admin.data().asSlice(0, 32).toArray(ValueLayout.JAVA_BYTE), "data units read/written at 32");
    }

    @Test
    void shouldRejectALogOffsetNotDwordAligned() {
        RawHost.Cqe c = admin.getLogPage(16, LogPageDescriptor.LID_SMART_HEALTH, ALL, 16, 2, false);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status());
    }

    @Test
    void shouldZeroFillALogReadPastItsEnd() {
        admin.data().asSlice(0, 4096).fill((byte) 0xFF);
        RawHost.Cqe c = admin.getLogPage(20, LogPageDescriptor.LID_SMART_HEALTH, ALL, 1024, 256, false);
        assertEquals(0, c.status(), NvmeStatus.describe(c.status()));
        assertEquals(-1, admin.data().asSlice(256, 768).mismatch(MemorySegment.ofArray(new byte[768])),
                "bytes past the 512-byte log are zero");
        assertEquals((byte) 0xFF, admin.data().get(ValueLayout.JAVA_BYTE, 1024), "nothing past the length");
    }

    @Test
    void shouldRejectALogOffsetBeyondTheLog() {
        RawHost.Cqe c = admin.getLogPage(21, LogPageDescriptor.LID_SMART_HEALTH, ALL, 4, 516, false);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status());
    }

    @Test
    void shouldRejectALogLongerThanTheAdminDataBuffer() {
        RawHost.Cqe c = admin.getLogPage(22, LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST, ALL, 8192, 0, false);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status());
    }

    @Test
    void shouldRejectALogPageTheControllerDoesNotHave() {
        RawHost.Cqe c = admin.getLogPage(23, LogPageDescriptor.LID_DISCOVERY, 0, 1024, 0, false);
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_INVALID_FIELD), c.status(), "discovery log on an I/O controller");
    }

    @Test
    void shouldRejectAnSglShorterThanTheLogLength() {
        MemorySegment c = admin.capsule(0);
        LogPageDescriptor.sqe(c, 24, ALL, LogPageDescriptor.LID_SMART_HEALTH, false, 512, 0);
        SglDescriptor.keyedInvalidate(SqeDescriptor.sgl1(c), admin.dataAddress(0), 256, admin.rkey());
        assertEquals(NvmeStatus.generic(NvmeStatus.SC_DATA_SGL_LENGTH_INVALID), admin.exec(c).status());
    }

    /** The Linux AER flow: one AER, a notice after a resize, log 04h read (RAE = 0) clears the list. */
    @Test
    void shouldListTheChangedNamespaceUntilTheLogIsReadWithoutRae() {
        assertEquals(0, admin.getLogPage(25, LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST, ALL, 4096, 0, false)
                .status());
        assertEquals(0, admin.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0), "nothing changed yet");
        MemorySegment aer = admin.nullSglCommand(1, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 26, 0);
        admin.post(1, 64);
        assertNull(admin.await(200_000_000L), "AER is held");
        f.store.resize(f.volume.id(), 128L << 20);
        RawHost.Cqe aen = admin.awaitAnswer(5_000_000_000L, 26, 0, "AEN");
        assertEquals(TargetController.AEN_NS_ATTRIBUTE_CHANGED, aen.dw0());
        assertEquals(0, admin.getLogPage(27, LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST, ALL, 4096, 0, true)
                .status());
        assertEquals(1, admin.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0), "nsid 1 changed (RAE: kept)");
        assertEquals(0, admin.getLogPage(28, LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST, ALL, 4096, 0, false)
                .status());
        assertEquals(1, admin.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0), "nsid 1 still listed");
        assertEquals(0, admin.getLogPage(29, LogPageDescriptor.LID_CHANGED_NAMESPACE_LIST, ALL, 4096, 0, false)
                .status());
        assertEquals(0, admin.data().get(ValueLayout.JAVA_INT_UNALIGNED, 0), "cleared by the read without RAE");
        assertTrue(aer.byteSize() > 0);
    }
}
