package io.rdmablock.nvmf.host;

import io.rdmablock.rdma.verbs.CmId;
import io.rdmablock.rdma.verbs.ProtectionDomain;
import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link RegisteredBuffers}: owned buffers and adopted memory (a multipath device's buffers) on the soft provider. */
@Timeout(30)
class RegisteredBuffersTest {
    VerbsProvider provider;
    FakeTarget target;
    CmId id;
    ProtectionDomain pd;
    Arena arena;

    @BeforeEach
    void setUp() {
        provider = Providers.select("soft");
        target = new FakeTarget(provider, "nqn.2026-11.io.rdmablock:volume:rb", 1L << 20, 1L << 20, 512, 128 << 10,
                true);
        InetSocketAddress address = target.start();
        id = provider.createId();
        id.resolve(address, TimeUnit.SECONDS.toNanos(5));
        pd = id.device().allocPd();
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        pd.close();
        id.close();
        target.close();
        arena.close();
    }

    @Test
    void shouldFindAdoptedMemoryAndLeaveItToItsOwnerOnFreeAndClose() {
        RegisteredBuffers b = new RegisteredBuffers(pd, 1 << 20);
        MemorySegment own = b.allocate(8192);
        MemorySegment foreign = arena.allocate(16384, 4096);
        b.adopt(foreign);
        assertNotNull(b.find(foreign.address() + 4096, 4096), "adopted memory has keys");
        assertNull(b.find(foreign.address() + 12288, 8192), "a range past its end has none");
        assertNotNull(b.find(own.address(), 8192));
        assertThrows(IllegalArgumentException.class, () -> b.adopt(foreign.asSlice(4096, 4096)), "overlap");
        assertThrows(IllegalArgumentException.class, () -> b.adopt(own), "overlap with an owned buffer");
        b.free(foreign);
        assertNull(b.find(foreign.address(), 4096), "deregistered");
        foreign.set(ValueLayout.JAVA_LONG, 0, 42L); // still the owner's memory: not freed
        assertEquals(42L, foreign.get(ValueLayout.JAVA_LONG, 0));
        b.adopt(foreign);
        b.close();
        assertNull(b.find(foreign.address(), 4096));
        foreign.set(ValueLayout.JAVA_LONG, 8, 7L); // close deregistered it and left it alive
        assertEquals(7L, foreign.get(ValueLayout.JAVA_LONG, 8));
        assertThrows(IllegalStateException.class, () -> b.adopt(arena.allocate(4096, 4096)));
    }

    @Test
    void shouldRefuseEmptyOrOversizeMemory() {
        RegisteredBuffers b = new RegisteredBuffers(pd, 8192);
        assertThrows(IllegalArgumentException.class, () -> b.adopt(arena.allocate(16384, 4096)));
        assertThrows(IllegalArgumentException.class, () -> b.adopt(MemorySegment.NULL));
        b.close();
    }
}
