package io.rdmablock.initiator;

import io.rdmablock.nvmf.host.NvmetRules;
import io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Identify decoding for foreign targets: FLBAS/LBAF, metadata, inactive namespaces (the limits: nvmf-host TargetLimitsTest). */
class TargetIdentityTest {
    private final MemorySegment d = Arena.ofAuto().allocate(4096);

    private void namespace(long nsze, int nlbaf, int flbas, int... lbafs) {
        d.fill((byte) 0);
        d.set(ValueLayout.JAVA_LONG_UNALIGNED, IdentifyNamespaceDescriptor.NSZE, nsze);
        d.set(ValueLayout.JAVA_BYTE, IdentifyNamespaceDescriptor.NLBAF, (byte) nlbaf);
        d.set(ValueLayout.JAVA_BYTE, IdentifyNamespaceDescriptor.FLBAS, (byte) flbas);
        for (int i = 0; i < lbafs.length; i++) {
            d.set(ValueLayout.JAVA_INT_UNALIGNED, IdentifyNamespaceDescriptor.LBAF0 + 4L * i, lbafs[i]);
        }
    }

    @Test
    void shouldTakeTheLbaSizeOfTheFormatFlbasSelects() {
        namespace(1000, 1, 1, 9 << 16, 12 << 16);
        IdentifyNamespaceDescriptor.Info info = TargetIdentity.decodeNamespace(1, d);
        assertEquals(4096, info.lbaSize());
        assertEquals(1000 * 4096L, info.capacityBytes());
    }

    @Test
    void shouldRefuseAFormatWithMetadata() {
        namespace(1000, 0, 0, 9 << 16 | 8);
        BlockIoException e = assertThrows(BlockIoException.class, () -> TargetIdentity.decodeNamespace(3, d));
        assertTrue(e.getMessage().contains("MS=8"), e.getMessage());
    }

    @Test
    void shouldRefuseAnInactiveNamespaceAndAFormatBeyondNlbaf() {
        namespace(0, 0, 0);
        assertTrue(assertThrows(BlockIoException.class, () -> TargetIdentity.decodeNamespace(2, d)).getMessage()
                .contains("not active"));
        namespace(1000, 0, 2, 9 << 16, 12 << 16, 12 << 16);
        assertTrue(assertThrows(BlockIoException.class, () -> TargetIdentity.decodeNamespace(2, d)).getMessage()
                .contains("NLBAF=0"));
    }

    @Test
    void shouldReadTheActiveNamespaceList() {
        NvmetRules.activeNamespaceList(d, 0, new int[]{2, 9, 40});
        assertArrayEquals(new int[]{2, 9, 40}, TargetIdentity.activeNamespaces(d));
    }
}
