package io.rdmablock.rdma.verbs.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmablock.rdma.verbs.Providers;
import io.rdmablock.rdma.verbs.VerbsException;
import io.rdmablock.rdma.verbs.VerbsProvider;
import io.rdmablock.rdma.verbs.VerbsProviderFactory;
import java.net.InetSocketAddress;
import java.util.ServiceLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Behaviour of the ffm provider on a machine without an RDMA device (libibverbs: ibv_get_device_list NULL/ENOSYS;
 * librdmacm: rdma_create_event_channel NULL/ENODEV). Skipped where a device exists.
 */
class FfmNoDeviceTest {

    @BeforeAll
    static void requireNoDevice() {
        try (VerbsProvider p = new FfmVerbsProviderFactory().create()) {
            assumeTrue(p.deviceNames().isEmpty(), "an RDMA device exists here: " + p.deviceNames());
        }
    }

    @Test
    void shouldReportNoDevicesInsteadOfFailing() {
        try (VerbsProvider p = new FfmVerbsProviderFactory().create()) {
            assertTrue(p.deviceNames().isEmpty());
            assertEquals("ffm", p.name());
        }
    }

    @Test
    void shouldBeFoundByServiceLoaderUnderTheNameFfm() {
        boolean found = false;
        for (VerbsProviderFactory f : ServiceLoader.load(VerbsProviderFactory.class)) {
            found |= f.name().equals("ffm") && f instanceof FfmVerbsProviderFactory;
        }
        assertTrue(found, "FfmVerbsProviderFactory not registered in META-INF/services");
    }

    @Test
    void shouldFailExplicitFfmSelectionWithHowToCreateADevice() {
        VerbsException e = assertThrows(VerbsException.class, () -> Providers.select("ffm"));
        assertTrue(e.getMessage().contains("no RDMA device was found"), e.getMessage());
        assertTrue(e.getMessage().contains("rdma link add"), e.getMessage());
    }

    @Test
    void shouldFallBackToSoftWhenAutoFindsNoDevice() {
        boolean softPresent = false;
        for (VerbsProviderFactory f : ServiceLoader.load(VerbsProviderFactory.class)) {
            softPresent |= f.name().equals("soft");
        }
        if (softPresent) {
            try (VerbsProvider p = Providers.select("auto")) {
                assertEquals("soft", p.name());
            }
        } else {
            // without the soft provider on the classpath, auto still picks soft and says that it is missing
            VerbsException e = assertThrows(VerbsException.class, () -> Providers.select("auto"));
            assertTrue(e.getMessage().contains("'soft' is not on the classpath"), e.getMessage());
        }
    }

    @Test
    void shouldNameTheCallAndErrnoWhenCreatingAConnectionIdWithoutDevice() {
        try (VerbsProvider p = new FfmVerbsProviderFactory().create()) {
            VerbsException e = assertThrows(VerbsException.class, p::createId);
            assertTrue(e.getMessage().startsWith("rdma_create_event_channel failed: errno="), e.getMessage());
            assertTrue(e.errno() != 0, "errno should be set");
        }
    }

    @Test
    void shouldNameTheCallWhenListeningWithoutDevice() {
        try (VerbsProvider p = new FfmVerbsProviderFactory().create()) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> p.listen(new InetSocketAddress("127.0.0.1", 0), 4));
            assertTrue(e.getMessage().startsWith("rdma_create_event_channel failed"), e.getMessage());
        }
    }
}
