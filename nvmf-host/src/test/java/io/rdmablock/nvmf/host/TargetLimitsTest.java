package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.fabric.IdentifyControllerDescriptor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The limits a host applies from CAP and Identify Controller (moved from the initiator's TargetIdentityTest). */
class TargetLimitsTest {
    private final MemorySegment d = Arena.ofAuto().allocate(4096);

    @Test
    void shouldSendNoInCapsuleDataWhenIcdoffIsSetOrOffsetSglsAreNotSupported() {
        NvmetRules.identifyController(d, "0123456789abcdef", 1, 1 << 20, "nqn.x");
        IdentifyControllerDescriptor.Info info = IdentifyControllerDescriptor.decode(d);
        TargetLimits l = TargetLimits.of(NvmetRules.CAP, d, info);
        assertEquals(4096, l.inCapsuleBytes());
        assertEquals(128, l.maxQueueEntries(), "min(MQES + 1, MAXCMD + 1)");
        d.set(ValueLayout.JAVA_SHORT_UNALIGNED, IdentifyControllerDescriptor.ICDOFF, (short) 1);
        assertEquals(0, TargetLimits.of(NvmetRules.CAP, d, info).inCapsuleBytes());
        d.set(ValueLayout.JAVA_SHORT_UNALIGNED, IdentifyControllerDescriptor.ICDOFF, (short) 0);
        d.set(ValueLayout.JAVA_INT_UNALIGNED, IdentifyControllerDescriptor.SGLS, 1 << 2);
        assertEquals(0, TargetLimits.of(NvmetRules.CAP, d, info).inCapsuleBytes());
        assertEquals(7_500_000_000L, TargetLimits.readyTimeoutNs(NvmetRules.CAP, 1));
    }
}
