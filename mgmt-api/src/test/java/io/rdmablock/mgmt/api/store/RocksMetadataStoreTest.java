package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.CopyRole;
import io.rdmablock.mgmt.client.CopyState;
import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocksMetadataStoreTest {
    private static VolumeRecord volume(String name) {
        return new VolumeRecord("id-" + name, name, 1 << 20, 4096, 1, List.of("nqn.2026-11.io.rdmablock:h"), "n1",
                VolumeState.CREATING, List.of(), 1234, false, 1, 1, null, false, VolumeRecord.HOSTS_VERSION);
    }

    @Test
    void shouldKeepRecordsAcrossReopen(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(volume("b"));
            store.putVolume(volume("a"));
            store.putNode(new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 99, 0, null, null));
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(List.of(volume("a"), volume("b")), store.volumes());
            assertEquals(volume("a"), store.volume("a").orElseThrow());
            assertEquals("127.0.0.1:4420", store.node("n1").orElseThrow().fabricAddress());
            assertEquals(1, store.nodes().size());
        }
    }

    /**
     * Closing while another thread reads (a liveness sweep on a worker when the server closes) waits for the read
     * and makes later calls fail cleanly: before, the native handle was freed under the reader and the JVM aborted.
     */
    @Test
    void shouldCloseUnderConcurrentReadsWithoutCrashing(@TempDir Path dir) throws Exception {
        var store = new RocksMetadataStore(dir);
        for (int i = 0; i < 50; i++) {
            store.putVolume(volume("v" + i));
        }
        var failure = new java.util.concurrent.atomic.AtomicReference<Throwable>();
        var reads = new java.util.concurrent.atomic.AtomicInteger();
        Thread reader = new Thread(() -> {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (System.nanoTime() < deadline) {
                try {
                    store.volumes();
                    store.volume("v7");
                    reads.incrementAndGet();
                } catch (MetadataStoreUnavailableException e) {
                    return; // closed: the expected end
                } catch (Throwable t) {
                    failure.set(t);
                    return;
                }
            }
            failure.set(new AssertionError("the store did not close within 10 s"));
        });
        reader.start();
        while (reads.get() < 20 && reader.isAlive()) {
            Thread.onSpinWait();
        }
        store.close();
        reader.join(15_000);
        assertEquals(null, failure.get());
        assertTrue(reads.get() >= 20, "reads before the close: " + reads.get());
        assertThrows(MetadataStoreUnavailableException.class, () -> store.volume("v1"));
    }

    @Test
    void shouldKeepNodeKeysAcrossReopen(@TempDir Path dir) {
        var keyed = MetadataStoreContract.node("n1", MetadataStoreContract.KEY_A);
        try (var store = new RocksMetadataStore(dir)) {
            assertTrue(store.replaceNode("n1", null, keyed));
            // no key: older server
            store.putNode(new NodeRecord("n2", "127.0.0.1:4421", "", 1 << 30, false, 99, 2, null, null));
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(keyed, store.node("n1").orElseThrow());
            assertEquals(null, store.node("n2").orElseThrow().nodeKey());
            assertFalse(store.replaceNode("n1", null, keyed), "present after reopen");
        }
    }

    @Test
    void shouldKeepHostCredentialsAcrossReopen(@TempDir Path dir) {
        var record = new HostCredentialRecord("h1", MetadataStoreContract.H1, "ab".repeat(32), 77);
        try (var store = new RocksMetadataStore(dir)) {
            assertTrue(store.createHostCredential(record));
        }
        try (var store = new RocksMetadataStore(dir)) {
            assertEquals(record, store.hostCredential("h1").orElseThrow());
            assertEquals(List.of(record), store.hostCredentials());
            assertTrue(store.hosts().isEmpty(), "a host credential is not a host");
        }
    }

    @Test
    void shouldRemoveVolumeAndKeepNodesApart(@TempDir Path dir) {
        try (var store = new RocksMetadataStore(dir)) {
            store.putVolume(volume("a"));
            store.putNode(new NodeRecord("a", "127.0.0.1:4420", "", 1 << 30, false, 99, 0, null, null));
            store.removeVolume("a");
            store.removeVolume("missing");
            assertTrue(store.volume("a").isEmpty());
            assertTrue(store.volumes().isEmpty());
            assertEquals(1, store.nodes().size());
        }
    }

    /** A record as servers before replication wrote it: no copies, epoch, minInSync, no revision key. */
    static final String OLD_RECORD = """
            {"id":"id-old","name":"old","sizeBytes":1048576,"lbaSize":4096,"replicas":1,"allowedHosts":[],
             "nodeId":"n7","state":"ready","connectedHosts":[],"createdAtMs":1234,"provisioned":false}""";

    @Test
    void shouldReadRecordOfOlderServerAsOnePrimaryInSyncCopyAtRevisionOne(@TempDir Path dir) throws Exception {
        RocksDB.loadLibrary();
        try (var options = new Options().setCreateIfMissing(true); var db = RocksDB.open(options, dir.toString())) {
            db.put("volume/old".getBytes(StandardCharsets.UTF_8), OLD_RECORD.getBytes(StandardCharsets.UTF_8));
        }
        try (var store = new RocksMetadataStore(dir)) {
            var read = store.volumeVersioned("old").orElseThrow();
            VolumeRecord v = read.value();
            assertEquals(List.of(new CopyRecord("n7", CopyRole.PRIMARY, CopyState.IN_SYNC, true)), v.copies());
            assertEquals("n7", v.nodeId());
            assertEquals(1, v.epoch());
            assertEquals(1, v.minInSync());
            assertEquals(1, read.revision());
            assertTrue(store.replaceVolume("old", 1, v.withState(VolumeState.DELETING)));
            long after = store.volumeVersioned("old").orElseThrow().revision();
            assertTrue(after > 1, "revision after the first write: " + after);
            assertFalse(store.replaceVolume("old", 1, v), "a stale legacy revision must not match again");
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
