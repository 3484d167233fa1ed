package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocksMetadataStoreTest {
    private static VolumeRecord volume(String name) {
        return new VolumeRecord("id-" + name, name, 1 << 20, 4096, 1, List.of("nqn.2026-11.io.rdmablock:h"), "n1",
                VolumeState.CREATING, List.of(), 1234, false);
    }

    @Test
    void shouldKeepRecordsAcrossReopen(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(volume("b"));
            store.putVolume(volume("a"));
            store.putNode(new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 99));
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(List.of(volume("a"), volume("b")), store.volumes());
            assertEquals(volume("a"), store.volume("a").orElseThrow());
            assertEquals("127.0.0.1:4420", store.node("n1").orElseThrow().fabricAddress());
            assertEquals(1, store.nodes().size());
        }
    }

    @Test
    void shouldRemoveVolumeAndKeepNodesApart(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(volume("a"));
            store.putNode(new NodeRecord("a", "127.0.0.1:4420", "", 1 << 30, false, 99));
            store.removeVolume("a");
            store.removeVolume("missing");
            assertTrue(store.volume("a").isEmpty());
            assertTrue(store.volumes().isEmpty());
            assertEquals(1, store.nodes().size());
        }
    }

    @Test
    void shouldRefuseSecondOpenOfSameDirectory(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            var e = assertThrows(MetadataStoreException.class, () -> new RocksMetadataStore(dir));
            assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        }
    }

    @Test
    void shouldCloseIdempotently(@TempDir Path dir) {
        var store = new RocksMetadataStore(dir);
        store.close();
        store.close();
    }
}
