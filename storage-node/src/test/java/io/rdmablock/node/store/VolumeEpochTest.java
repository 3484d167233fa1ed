package io.rdmablock.node.store;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static io.rdmablock.node.store.StoreTestSupport.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The replication epoch a secondary accepted: durable, never lowered, gone with the volume. */
class VolumeEpochTest {
    private static final long MIB = 1 << 20;

    @Test
    void shouldKeepTheHighestEpochAcrossReopenAndNeverLowerIt() throws Exception {
        Path dir = StoreTestSupport.freshDir("epoch");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            s.create(spec("a", 8 * MIB, 512));
            assertEquals(0, s.epoch("a"), "a new volume has accepted no epoch");
            s.raiseEpoch("a", 7);
            s.raiseEpoch("a", 6);
            assertEquals(7, s.epoch("a"), "a lower epoch does not lower it");
        }
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            assertEquals(7, s.epoch("a"), "persisted");
            s.delete("a");
            s.create(spec("a", 8 * MIB, 512));
            assertEquals(0, s.epoch("a"), "a recreated volume starts without the deleted one's epoch");
        }
    }

    @Test
    void shouldRefuseAnEpochBelowOne() throws Exception {
        Path dir = StoreTestSupport.freshDir("epoch-invalid");
        try (VolumeStore s = VolumeStore.open(dir, StoreOptions.defaults())) {
            s.create(spec("a", 8 * MIB, 512));
            assertThrows(IllegalArgumentException.class, () -> s.raiseEpoch("a", 0));
        }
    }
}
