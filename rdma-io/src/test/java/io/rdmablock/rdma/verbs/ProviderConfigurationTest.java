package io.rdmablock.rdma.verbs;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The provider's knobs: property before environment, defaults, errors naming property, value and bounds. */
class ProviderConfigurationTest {
    private static final Map<String, String> NO_ENV = Map.of();

    @Test
    void shouldTakeThePropertyThenTheEnvironmentThenAuto() {
        assertEquals("auto", ProviderConfiguration.from(Map.<String, String>of()::get, NO_ENV::get).provider());
        assertEquals("ffm", ProviderConfiguration.from(Map.<String, String>of()::get,
                Map.of(ProviderConfiguration.PROVIDER_ENV, "ffm")::get).provider());
        assertEquals("soft", ProviderConfiguration.from(Map.of(ProviderConfiguration.PROVIDER, " Soft ")::get,
                Map.of(ProviderConfiguration.PROVIDER_ENV, "ffm")::get).provider());
    }

    @Test
    void shouldReadTheSoftTimings() {
        ProviderConfiguration c = ProviderConfiguration.from(Map.of(ProviderConfiguration.SOFT_ACK_DELAY_NS, "0",
                ProviderConfiguration.SOFT_INLINE_GRACE_NS, "50000", ProviderConfiguration.SOFT_REPOLL_NS, "1000")::get,
                NO_ENV::get);
        assertEquals(new ProviderConfiguration("auto", 0, 50_000, 1_000), c);
        assertEquals(ProviderConfiguration.DEFAULTS, ProviderConfiguration.from(Map.<String, String>of()::get,
                NO_ENV::get));
    }

    @Test
    void shouldRefuseABadProviderOrTimingNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProviderConfiguration.from(
                Map.of(ProviderConfiguration.PROVIDER, "rxe")::get, NO_ENV::get));
        assertEquals("invalid rdma.provider: 'rxe' (valid: auto, soft, ffm, memory)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProviderConfiguration.from(
                Map.of(ProviderConfiguration.SOFT_REPOLL_NS, "-5")::get, NO_ENV::get));
        assertTrue(e.getMessage().startsWith("invalid rdmablock.soft.repollNs: value=-5, min=0, max=1000000"),
                e.getMessage());
    }
}
