package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.Json;
import io.rdmablock.mgmt.client.VolumeRollback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link VolumeRecord#rollback()} as stored: JSON round trip, absent when none, kept by every copy, RocksDB reopen. */
class RollbackRecordEncodingTest {
    private static VolumeRecord rollingBack() {
        VolumeRecord v = VolumeRecord.created("id-1", "vol", 1 << 20, 4096, 1, List.of("*"), List.of("n1", "n2"), 1);
        return v.withRollback(new RollbackRecord("req-1", 3, "daily", true, 1234, List.of("n1", "n2"),
                VolumeRollback.ROLLING_BACK, null));
    }

    @Test
    void shouldRoundTripAndLeaveItOutWhenNone() {
        VolumeRecord v = rollingBack();
        assertEquals(v, Json.read(Json.write(v), VolumeRecord.class));
        String none = Json.write(v.withRollback(null));
        assertFalse(none.contains("rollback"), none);
        assertNull(Json.read(none, VolumeRecord.class).rollback());
    }

    @Test
    void shouldKeepTheRollbackThroughOtherChanges() {
        VolumeRecord v = rollingBack();
        assertEquals(v.rollback(), v.withConnectedHosts(List.of("h")).rollback());
        assertEquals(v.rollback(), v.withAllowedHosts(List.of()).rollback());
        assertEquals(v.rollback(), v.withSnapshots(List.of(), 5).rollback());
        assertEquals(v.rollback(), v.withRequireAuth(true).rollback());
        assertEquals(v.rollback(), v.withCopy(v.copies().get(1).withProvisioned()).rollback());
        assertTrue(v.rollback().rollingBack());
        RollbackRecord failed = v.rollback().failed("copy on node n2: no snapshot");
        assertEquals(VolumeRollback.FAILED, failed.state());
        assertEquals("copy on node n2: no snapshot", failed.toRollback().detail());
    }

    @Test
    void shouldKeepARollbackAcrossRocksReopen(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(rollingBack());
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(rollingBack(), store.volume("vol").orElseThrow());
        }
    }
}
