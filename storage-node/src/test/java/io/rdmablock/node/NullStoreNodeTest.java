package io.rdmablock.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.node.store.IoBackend;
import io.rdmablock.node.store.StoreOptions;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node with the benchmark-only null store: runs standalone, refused with a management server. */
class NullStoreNodeTest {
    @TempDir
    Path dir;

    private static StoreOptions nullStore() {
        return StoreOptions.defaults().withBackend(IoBackend.NULL);
    }

    @Test
    void shouldServeFromTheNullStoreWithoutAManagementServer() {
        try (StorageNode node = new StorageNode(NodeConfig.local(dir).withCreateVolumes(List.of("v:16M:4096:*")))
                .withStoreOptions(nullStore()).start()) {
            assertEquals(IoBackend.NULL, node.store().backend());
        }
    }

    @Test
    void shouldRefuseTheNullStoreOnANodeWithAManagementServer() {
        NodeConfig cfg = NodeConfig.local(dir).withMgmt(URI.create("http://127.0.0.1:1"), "t", "n1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new StorageNode(cfg).withStoreOptions(nullStore()).start());
        assertTrue(e.getMessage().contains("--store null with --mgmt-url"), e.getMessage());
    }
}
