package io.rdmablock.nvmf.host;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class AnaLogTest {
    @Test
    void shouldDecodeTheLayoutOfNvme14Figure196() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(4096);
            p.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 9);           // change count
            p.set(ValueLayout.JAVA_SHORT_UNALIGNED, 8, (short) 2);  // two descriptors
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 16, 1);           // ANAGRPID
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 20, 2);           // NNSID
            p.set(ValueLayout.JAVA_LONG_UNALIGNED, 24, 5);
            p.set(ValueLayout.JAVA_BYTE, 32, (byte) 0xF3);          // high bits reserved: inaccessible
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 48, 1);
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 52, 7);
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 56, 2);           // second group at 16 + 32 + 8
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 60, 1);
            p.set(ValueLayout.JAVA_BYTE, 72, (byte) AnaLog.OPTIMIZED);
            p.set(ValueLayout.JAVA_INT_UNALIGNED, 88, 3);
            AnaLog log = AnaLog.decode(p);
            assertEquals(9, log.changeCount());
            assertEquals(2, log.groups().size());
            assertEquals(new AnaLog.Group(1, 5, AnaLog.INACCESSIBLE, List.of(1, 7)), log.groups().get(0));
            assertEquals(AnaLog.INACCESSIBLE, log.stateOf(7));
            assertEquals(AnaLog.OPTIMIZED, log.stateOf(3));
            assertEquals(-1, log.stateOf(4));
        }
    }

    @Test
    void shouldRoundTripAndTakeTheOnlyGroupWithoutNsids() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(4096);
            int n = AnaLog.encode(p, 3, List.of(new AnaLog.Group(1, 3, AnaLog.CHANGE, List.of())));
            assertEquals(48, n);
            AnaLog log = AnaLog.decode(p);
            assertEquals(AnaLog.CHANGE, log.stateOf(1));
            assertEquals("change", AnaLog.stateName(log.stateOf(1)));
        }
    }

    @Test
    void shouldSplitAsyncEventDword0() {
        int dw0 = AdminCommands.aenDw0(2, 3, 0x0C);
        assertEquals(0x0C0302, dw0);
        assertEquals(2, AdminCommands.aenType(dw0));
        assertEquals(3, AdminCommands.aenInfo(dw0));
        assertEquals(0x0C, AdminCommands.aenLogPage(dw0));
    }
}
