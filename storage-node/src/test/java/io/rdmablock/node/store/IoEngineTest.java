package io.rdmablock.node.store;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Backend selection. */
class IoEngineTest {

    private static final String ENOSYS = "io_uring_setup failed: errno=38 (ENOSYS), entries=4";

    @Test
    void shouldFallBackToThreadPoolWhenIoUringIsUnavailableOnAuto() {
        try (IoEngine e = IoEngine.select(StoreOptions.defaults(), ENOSYS)) {
            assertEquals(IoBackend.THREAD_POOL, e.kind());
        }
    }

    @Test
    void shouldFailWhenIoUringIsRequestedButUnavailable() {
        var ex = assertThrows(StoreException.class,
                () -> IoEngine.select(StoreOptions.defaults().withBackend(IoBackend.IO_URING), ENOSYS));
        assertTrue(ex.getMessage().contains("ENOSYS"), ex.getMessage());
    }

    @Test
    void shouldTakeIoUringOnAutoWhenTheProbePasses() {
        try (IoEngine e = IoEngine.select(StoreOptions.defaults(), null)) {
            assertEquals(IoBackend.IO_URING, e.kind());
        }
    }
}
