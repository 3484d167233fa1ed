package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.Access;
import io.rdmablock.rdma.verbs.MemoryRegion;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/** Soft-only registration rules: keys and thread confinement. */
class SoftRegistrationTest {

    @Test
    void shouldGiveDifferentLkeyAndRkeySoThatMixUpsFail() {
        try (SoftVerbsProvider p = new SoftVerbsProvider(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = p.device().allocPd();
            try (MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Access.ALL)) {
                assertNotEquals(mr.lkey(), mr.rkey());
                assertTrue(p.device().byRkey(mr.lkey()) == null, "lkey is not a valid rkey");
                assertTrue(p.device().byLkey(mr.rkey()) == null, "rkey is not a valid lkey");
            }
        }
    }

    @Test
    void shouldRejectThreadConfinedSegment() {
        try (SoftVerbsProvider p = new SoftVerbsProvider(); Arena arena = Arena.ofConfined()) {
            ProtectionDomain pd = p.device().allocPd();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> pd.registerMemory(arena.allocate(4096), Access.LOCAL_WRITE));
            assertTrue(e.getMessage().contains("confined"), e.getMessage());
        }
    }

    @Test
    void shouldInvalidateKeysOnDeregistration() {
        try (SoftVerbsProvider p = new SoftVerbsProvider(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = p.device().allocPd();
            MemoryRegion mr = pd.registerMemory(arena.allocate(4096), Access.ALL);
            int rkey = mr.rkey();
            mr.close();
            mr.close();
            assertTrue(p.device().byRkey(rkey) == null, "rkey invalid after ibv_dereg_mr");
        }
    }
}
