package io.rdmablock.mgmt.api.http;

import io.rdmablock.mgmt.api.store.EtcdCluster;
import io.rdmablock.mgmt.api.store.EtcdMetadataStore;
import io.rdmablock.mgmt.api.store.InMemoryMetadataStore;
import io.rdmablock.mgmt.api.store.MetadataStore;
import io.rdmablock.mgmt.api.store.RocksMetadataStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/**
 * The metadata stores the REST contract suite runs on ({@code @ParameterizedClass @EnumSource(StoreKind.class)} on
 * the *RoutesTest classes, see {@link ApiHarness}): the embedded RocksDB store and etcd. The etcd cluster is one
 * real 1-member etcd for the whole test JVM, started at the first use (killed by {@link EtcdCluster}'s shutdown
 * hook); every harness gets a key prefix of its own. Without etcd the etcd runs are skipped
 * ({@link EtcdCluster#assumeAvailable()}).
 */
enum StoreKind {
    ROCKSDB, ETCD;

    private static EtcdCluster etcd;

    /** @return a new, empty store of this kind (its files under a new temporary directory) */
    MetadataStore open() {
        try {
            return switch (this) {
                case ROCKSDB -> new RocksMetadataStore(Files.createTempDirectory("rdmablock-routes-").resolve("m"));
                case ETCD -> new EtcdMetadataStore(new EtcdMetadataStore.Config(sharedEtcd().endpoints(),
                        "/rdmablock-routes/" + UUID.randomUUID() + "/", Duration.ofSeconds(5)));
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A store not in this enum: in memory (the HTTP hygiene tests). */
    static MetadataStore inMemory() {
        return new InMemoryMetadataStore();
    }

    private static synchronized EtcdCluster sharedEtcd() throws IOException {
        EtcdCluster.assumeAvailable();
        if (etcd == null) {
            try {
                etcd = EtcdCluster.start(Files.createTempDirectory("rdmablock-routes-etcd-"), 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting etcd", e);
            }
        }
        return etcd;
    }

    /** Deletes a RocksDB store's temporary directory (best effort). */
    static void deleteQuietly(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // left in the temporary directory
        }
    }
}
