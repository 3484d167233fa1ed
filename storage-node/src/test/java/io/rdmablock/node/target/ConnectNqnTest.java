package io.rdmablock.node.target;

import io.rdmablock.rdma.fabric.ConnectDataDescriptor;
import io.rdmablock.rdma.fabric.NvmeStatus;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Connect whose NQN field is not NUL-terminated, holds a control character (a forged log line) or is not UTF-8 is
 * answered Connect Invalid Parameters pointing at that field (IATTR 1, IPO = its offset in the Connect data), before
 * the NQN is looked up or logged; a well-formed Connect on the same target still succeeds.
 */
class ConnectNqnTest extends TargetTestBase {
    private static final int INVALID_PARAMETERS = NvmeStatus.commandSpecific(NvmeStatus.SC_CONNECT_INVALID_PARAMETERS);

    /** The admin Connect status (and dw0) with the field at {@code offset} replaced by {@code raw} (256 bytes). */
    private RawHost.Cqe connectWith(int offset, byte[] raw) {
        try (RawHost h = f.host(0, 32)) {
            MemorySegment c = h.connectCapsule(1, 31, 0, f.subnqn, TargetFixture.HOSTNQN, 0xFFFF, 0);
            MemorySegment field = h.data().asSlice(offset, ConnectDataDescriptor.NQN_LENGTH);
            field.fill((byte) 0);
            MemorySegment.copy(raw, 0, field, ValueLayout.JAVA_BYTE, 0, raw.length);
            return h.exec(c);
        }
    }

    private void assertRefusedAt(int offset, byte[] raw, String what) {
        RawHost.Cqe r = connectWith(offset, raw);
        assertEquals(INVALID_PARAMETERS, r.status(), what + ": " + NvmeStatus.describe(r.status()));
        assertEquals(ConnectDataDescriptor.invalidParameterDw0(true, offset), r.dw0(), what + ": IATTR/IPO");
    }

    @Test
    void refusesMalformedNqnsAndStillServesAWellFormedConnect() {
        byte[] full = new byte[ConnectDataDescriptor.NQN_LENGTH];
        java.util.Arrays.fill(full, (byte) 'A');
        assertRefusedAt(ConnectDataDescriptor.HOSTNQN_OFFSET, full, "hostnqn without NUL");
        assertRefusedAt(ConnectDataDescriptor.SUBNQN_OFFSET, full, "subnqn without NUL");
        byte[] forged = (TargetFixture.HOSTNQN + "\n2026-12-06 INFO queue authenticated: hostnqn=admin")
                .getBytes(StandardCharsets.UTF_8);
        assertRefusedAt(ConnectDataDescriptor.HOSTNQN_OFFSET, forged, "hostnqn with a newline");
        assertRefusedAt(ConnectDataDescriptor.HOSTNQN_OFFSET, new byte[] {'n', 'q', 'n', (byte) 0xC3, (byte) 0x28},
                "hostnqn not UTF-8");
        assertTrue(f.target.connectedHosts("vol1").isEmpty(), "no association was made");
        connect(TargetFixture.HOSTNQN, 0); // asserts success
        assertTrue(f.target.connectedHosts("vol1").contains(TargetFixture.HOSTNQN));
    }
}
