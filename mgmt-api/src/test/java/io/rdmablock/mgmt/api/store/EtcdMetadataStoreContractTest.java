package io.rdmablock.mgmt.api.store;

import io.rdmablock.mgmt.client.VolumeState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store contract on a real 1-member etcd, each test under its own key prefix; plus etcd-specific checks. */
class EtcdMetadataStoreContractTest extends MetadataStoreContract {
    @TempDir
    static Path dir;
    static EtcdCluster etcd;

    @BeforeAll
    static void startEtcd() throws Exception {
        EtcdCluster.assumeAvailable();
        etcd = EtcdCluster.start(dir, 1);
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    static EtcdMetadataStore openStore(List<URI> endpoints, Duration timeout) {
        return new EtcdMetadataStore(new EtcdMetadataStore.Config(endpoints,
                "/rdmablock-test/" + UUID.randomUUID() + "/", timeout));
    }

    @Override
    MetadataStore open() {
        return openStore(etcd.endpoints(), Duration.ofSeconds(5));
    }

    @Test
    void shouldListManyVolumesInNameOrderAcrossPagesAndKeepNodesApart() {
        try (var store = openStore(etcd.endpoints(), Duration.ofSeconds(5))) {
            var names = new ArrayList<String>();
            for (int i = 0; i < EtcdMetadataStore.PAGE_KEYS * 2 + 7; i++) {
                names.add(String.format("vol-%04d", (i * 37) % 1000));
            }
            names.forEach(n -> store.putVolume(volume(n, 1)));
            store.putNode(new NodeRecord("n2", "127.0.0.1:4421", "", 1 << 30, false, 99, 2, null, null));
            store.putNode(new NodeRecord("n1", "127.0.0.1:4420", "", 1 << 30, false, 98, 1, null, null));
            var expected = names.stream().distinct().sorted().toList();
            assertEquals(expected, store.volumes().stream().map(VolumeRecord::name).toList());
            assertEquals(List.of("n1", "n2"), store.nodes().stream().map(NodeRecord::nodeId).toList());
            assertEquals(volume(expected.getFirst(), 1), store.volume(expected.getFirst()).orElseThrow());
            store.removeNode("n1");
            store.removeNode("missing");
            assertEquals(List.of("n2"), store.nodes().stream().map(NodeRecord::nodeId).toList());
            assertEquals(2, store.node("n2").orElseThrow().ordinal());
            store.removeVolume(expected.getFirst());
            assertEquals(expected.size() - 1, store.volumes().size());
        }
    }

    @Test
    void shouldKeepNodeKeysAcrossARestartOfEtcd() throws Exception {
        var keyed = node("n1", KEY_A);
        EtcdMetadataStore.Config config;
        try (var store = openStore(etcd.endpoints(), Duration.ofSeconds(5))) {
            config = store.config();
            assertTrue(store.replaceNode("n1", null, keyed));
        }
        etcd.stop(0);
        etcd.restart(0);
        try (var store = new EtcdMetadataStore(config)) {
            assertEquals(keyed, store.node("n1").orElseThrow());
            assertEquals(KEY_A, store.nodes().getFirst().nodeKey());
        }
    }

    @Test
    void shouldNotSeeAnotherPrefixesKeys() {
        try (var a = openStore(etcd.endpoints(), Duration.ofSeconds(5));
             var b = openStore(etcd.endpoints(), Duration.ofSeconds(5))) {
            a.putVolume(volume("x", 1));
            assertTrue(b.volumes().isEmpty());
            assertTrue(b.volume("x").isEmpty());
        }
    }

    @Test
    void shouldUseEtcdModRevisionsThatGrowAcrossStores() {
        try (var a = openStore(etcd.endpoints(), Duration.ofSeconds(5));
             var b = new EtcdMetadataStore(a.config())) {
            a.putVolume(volume("x", 1));
            long ra = a.volumeVersioned("x").orElseThrow().revision();
            assertEquals(ra, b.volumeVersioned("x").orElseThrow().revision(), "one etcd, one revision");
            assertTrue(b.replaceVolume("x", ra, volume("x", 2).withState(VolumeState.READY)));
            assertEquals(VolumeState.READY, a.volume("x").orElseThrow().state());
            assertTrue(!a.replaceVolume("x", ra, volume("x", 3)), "the other server's write moved the revision");
        }
    }

    @Test
    void shouldRefuseARecordAboveTheLimitBeforeSendingIt() {
        try (var store = openStore(etcd.endpoints(), Duration.ofSeconds(5))) {
            var hosts = new ArrayList<String>();
            for (int i = 0; i < 12_000; i++) {
                hosts.add("nqn.2026-11.io.rdmablock:host-" + i + "-" + "x".repeat(64));
            }
            var big = volume("big", 1);
            var huge = new VolumeRecord(big.id(), big.name(), big.sizeBytes(), big.lbaSize(), big.replicas(), hosts,
                    big.nodeId(), big.state(), List.of(), big.createdAtMs(), false, 1, 1, big.copies(), false,
                    VolumeRecord.HOSTS_VERSION);
            var e = assertThrows(MetadataStoreException.class, () -> store.putVolume(huge));
            assertTrue(e.getMessage().contains("max=" + EtcdMetadataStore.MAX_VALUE_BYTES), e.getMessage());
            assertTrue(store.volume("big").isEmpty());
        }
    }

    @Test
    void shouldComputePrefixEnds() {
        assertArrayEquals(new byte[] {'a', 'c'}, EtcdMetadataStore.prefixEnd(new byte[] {'a', 'b'}));
        assertArrayEquals(new byte[] {'b'}, EtcdMetadataStore.prefixEnd(new byte[] {'a', (byte) 0xff}));
        assertArrayEquals(new byte[] {0}, EtcdMetadataStore.prefixEnd(new byte[] {(byte) 0xff}));
    }

    @Test
    void shouldParseEndpointLists() {
        assertEquals(List.of(URI.create("http://127.0.0.1:2379"), URI.create("http://h:2381")),
                EtcdMetadataStore.Config.parseEndpoints(" http://127.0.0.1:2379, http://h:2381,"));
        assertThrows(IllegalArgumentException.class, () -> EtcdMetadataStore.Config.parseEndpoints(""));
        assertThrows(IllegalArgumentException.class, () -> EtcdMetadataStore.Config.parseEndpoints("127.0.0.1:2379"));
        assertThrows(IllegalArgumentException.class, () -> EtcdMetadataStore.Config.parseEndpoints("http://h"));
    }
}
