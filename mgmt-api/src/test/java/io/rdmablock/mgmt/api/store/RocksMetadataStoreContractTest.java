package io.rdmablock.mgmt.api.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocksMetadataStoreContractTest extends MetadataStoreContract {
    @TempDir
    Path dir;

    @Override
    MetadataStore open() {
        return new RocksMetadataStore(dir.resolve("db"));
    }

    @Test
    void shouldKeepRevisionsGrowingAcrossReopen(@TempDir Path other) {
        long before;
        try (var store = new RocksMetadataStore(other)) {
            store.putVolume(volume("a", 1));
            before = store.volumeVersioned("a").orElseThrow().revision();
            store.removeVolume("a");
        }
        try (var store = new RocksMetadataStore(other)) {
            store.putVolume(volume("a", 1));
            long after = store.volumeVersioned("a").orElseThrow().revision();
            assertTrue(after > before, "after=" + after + " before=" + before);
            assertFalse(store.replaceVolume("a", before, volume("a", 2)));
        }
    }
}
