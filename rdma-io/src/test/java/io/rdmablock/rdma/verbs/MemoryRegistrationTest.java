package io.rdmablock.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Memory registration: native segments only, access flags validated, keys and address reported. */
class MemoryRegistrationTest {
    private static final String PROVIDERS = "io.rdmablock.rdma.verbs.VerbsTestSupport#providers";

    private static ProtectionDomain pd(VerbsProvider p) {
        CmId id = p.createId();
        id.resolve(new InetSocketAddress(VerbsTestSupport.address(), 9), VerbsTestSupport.TIMEOUT_NS);
        return id.device().allocPd();
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldReportAddressLengthAndKeys(String provider) {
        try (VerbsProvider p = Providers.select(provider); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = pd(p);
            MemorySegment seg = arena.allocate(8192, 4096);
            try (MemoryRegion mr = pd.registerMemory(seg, Access.ALL)) {
                assertEquals(seg.address(), mr.address());
                assertEquals(8192, mr.length());
                assertEquals(Access.ALL, mr.access());
                assertEquals(seg, mr.segment());
                try (MemoryRegion other = pd.registerMemory(seg, Access.LOCAL_WRITE)) {
                    assertTrue(other.lkey() != mr.lkey(), "distinct regions have distinct keys");
                }
            }
            pd.close();
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectHeapSegment(String provider) {
        try (VerbsProvider p = Providers.select(provider)) {
            ProtectionDomain pd = pd(p);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> pd.registerMemory(MemorySegment.ofArray(new byte[4096]), Access.LOCAL_WRITE));
            assertTrue(e.getMessage().contains("native"), e.getMessage());
            pd.close();
        }
    }

    @ParameterizedTest
    @MethodSource(PROVIDERS)
    void shouldRejectUnknownAccessBitsAndRemoteWriteWithoutLocalWrite(String provider) {
        try (VerbsProvider p = Providers.select(provider); Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = pd(p);
            MemorySegment seg = arena.allocate(4096, 4096);
            assertThrows(IllegalArgumentException.class, () -> pd.registerMemory(seg, 1 << 20));
            // ibv_reg_mr(3): EINVAL; a provider may report it as a bad argument or as the failed call
            RuntimeException e = assertThrows(RuntimeException.class,
                    () -> pd.registerMemory(seg, Access.REMOTE_WRITE));
            assertTrue(e instanceof IllegalArgumentException || e instanceof VerbsException, e.toString());
            pd.close();
        }
    }
}
